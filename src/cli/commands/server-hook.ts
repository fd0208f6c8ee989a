/**
 * `hermesd hook pre-receive` and `hermesd hook update <ref> <old> <new>`: a push judged as a
 * server hook judges it, in this process (no daemon, no work tree: a bare repository), by the
 * rules committed where each ref was and the server's pinned rules (`<git-dir>/hermesd/
 * server-config.yaml`), with the violations on stderr, which git shows the pusher (`remote: …`).
 * Exit 1 refuses the push.
 *
 * hook.ts runs the client hooks through the clone's runner; it hands these two to this module,
 * so `hermesd hook <name>` stays one command for both.
 */
import { readStdin, reportError } from '../runtime.js';

export const SERVER_HOOKS = ['pre-receive', 'update'] as const;
type ServerHook = (typeof SERVER_HOOKS)[number];

/** Runs a server hook; returns its exit code (1: the push is refused, and so is one that cannot be judged). */
export async function runServerHook(name: ServerHook, args: string[]): Promise<number> {
  try {
    return await judge(name, args);
  } catch (err) {
    // A push that cannot be judged (a broken config, a git failure) is refused, with the reason.
    reportError(err, process.argv.includes('--debug'));
    return typeof process.exitCode === 'number' && process.exitCode !== 0 ? process.exitCode : 1;
  }
}

async function judge(name: ServerHook, args: string[]): Promise<number> {
  const { UsageError } = await import('../../errors/index.js');
  const { findGitRepository, serverConfigPath } = await import('../../paths/index.js');
  const { quarantineOf } = await import('../../git/env.js');
  const { rangeModule } = await import('./check.js');
  const { judgePush, parseRefUpdates } = await rangeModule();
  const { formatRangeVerdict, rulesUsed } = await import('../../rules/format.js');
  let updates;
  if (name === 'update') {
    const [ref, old, next] = args;
    if (!ref || !old || !next) throw new UsageError('hermesd hook update takes the ref, its old and its new object id, as git passes them.');
    updates = [{ ref, old, new: next }];
  } else updates = parseRefUpdates(await readStdin());
  const repo = findGitRepository(process.cwd());
  // The pushed objects wait in git's quarantine until this hook says yes: every git read must see it.
  const place = { cwd: repo.root ?? repo.gitDir, quarantine: quarantineOf(process.env) };
  const verdicts = await judgePush(place, updates, { pinned: serverConfigPath(repo.gitDir) });
  let refused = false;
  for (const { ref, verdict } of verdicts) {
    const lines: string[] = [];
    const objects = verdict.objects?.length ?? 0;
    if (verdict.violations.length > 0) {
      refused = true;
      const what = verdict.violations.some((v) => !v.object) ? 'new commits break' : 'what it names breaks';
      lines.push(`hermesd: ${ref}: push refused: ${what} the repository's rules`, formatRangeVerdict(verdict));
    } else if (verdict.commits.length > 0 || objects > 0) {
      const notes = formatRangeVerdict(verdict).split('\n').slice(0, -1);
      const n = verdict.commits.length;
      const judged = [n > 0 ? `${n} new commit${n === 1 ? '' : 's'}` : '', objects > 0 ? `${objects} other object${objects === 1 ? '' : 's'}` : '']
        .filter(Boolean)
        .join(' and ');
      lines.push(`hermesd: ${ref}: ${judged} judged, no rule violations (judged by ${rulesUsed(verdict.rules)})`, ...notes);
    }
    if (lines.length) process.stderr.write(lines.filter(Boolean).join('\n') + '\n');
  }
  return refused ? 1 : 0;
}
