/**
 * Pushes from the sandbox. A sandboxed command cannot write a local remote (read-only), has
 * no network by default and no credentials ever; its `git push` is handed to the daemon,
 * which judges the push by its effect before making it: only to a configured remote, no
 * option that runs a program or rewrites the remote (force, +refspec, delete, mirror, prune
 * — unless guard.gitPolicy.forcePush allows), and no pushed commit that breaks a rule.
 *
 *   const plan = planPush(args, { remotes, policy });      // what would be pushed, or why not
 *   const r = await brokerPush(root, config, args, { gitBin, judged });
 */
import type { HermesConfig } from '../config/schema.js';
import { commitsBetween, describeBadCommits, judgeCommits } from './commits.js';
import type { GitPolicy } from './guard-config.js';
import { cleanGitEnv } from '../git/env.js';
import { runGit } from '../git/run.js';
import { porcelainUpdates } from '../git/parse.js';
import { gitAsyncTry } from '../git/run.js';

export type PushPlan =
  | { ok: true; remote?: string; refspecs: string[]; flags: string[] }
  | { ok: false; policy: 'forcePush' | 'noVerify' | 'broker'; message: string };

/** Options passed through as given: they change what is shown or how refs are chosen, never what is overwritten. */
const PASS_FLAGS = new Set([
  '-q',
  '--quiet',
  '-v',
  '--verbose',
  '--progress',
  '--no-progress',
  '-u',
  '--set-upstream',
  '--tags',
  '--follow-tags',
  '--no-follow-tags',
  '--atomic',
  '--no-atomic',
  '-n',
  '--dry-run',
  '--porcelain',
  '--all',
  '--branches',
  '-4',
  '--ipv4',
  '-6',
  '--ipv6',
  '--verify',
  '--no-force-with-lease',
]);
/** Options that overwrite or delete what the remote has. */
const FORCE_FLAGS = /^(-f|--force|--force-with-lease(=.*)?|--force-if-includes|--mirror|--prune|-d|--delete)$/;

/** git accepts unique prefixes of long options; these are the ones a push may abbreviate. */
const LONG_OPTIONS = [
  ...PASS_FLAGS,
  '--force',
  '--force-with-lease',
  '--force-if-includes',
  '--mirror',
  '--prune',
  '--delete',
  '--no-verify',
  '--receive-pack',
  '--exec',
  '--repo',
  '--push-option',
  '--signed',
  '--no-signed',
  '--recurse-submodules',
  '--no-recurse-submodules',
  '--thin',
  '--no-thin',
].filter((o) => o.startsWith('--'));

/** The full long option an abbreviation stands for (git's own rule: a unique prefix). */
function expandLong(arg: string): string {
  const [name, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('='))] : [arg, ''];
  if (LONG_OPTIONS.includes(name)) return arg;
  const hits = [...new Set(LONG_OPTIONS.filter((o) => o.startsWith(name)))];
  return hits.length === 1 ? hits[0] + value : arg;
}

export type RemoteInfo = Map<string, string[]>;

/** The configured remotes and their URLs (url and pushurl). */
export function remotesOf(root: string, gitBin: string): RemoteInfo {
  const out: RemoteInfo = new Map();
  const r = runGit(gitBin, ['config', '--get-regexp', '^remote\\..*\\.(url|pushurl)$'], { cwd: root, env: cleanGitEnv() });
  for (const line of r.stdout.split('\n')) {
    const m = /^remote\.(.+)\.(url|pushurl) (.*)$/.exec(line);
    if (!m) continue;
    out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[3]!]);
  }
  return out;
}

/** Judges a push's arguments (what follows `push`): a plan the broker may run, or a refusal. */
export function planPush(args: string[], opts: { remotes: RemoteInfo; policy: GitPolicy }): PushPlan {
  const flags: string[] = [];
  const positionals: string[] = [];
  const forcing: string[] = [];
  let dashdash = false;
  for (const raw of args) {
    if (dashdash || !raw.startsWith('-') || raw === '-') {
      positionals.push(raw);
      continue;
    }
    if (raw === '--') {
      dashdash = true;
      continue;
    }
    // Short options may be clustered (-qf); each letter is judged.
    const parts = raw.startsWith('--') ? [expandLong(raw)] : [...raw.slice(1)].map((c) => `-${c}`);
    for (const a of parts) {
      if (a === '--no-verify') {
        if (opts.policy.noVerify === 'refuse') return { ok: false, policy: 'noVerify', message: '`git push --no-verify` skips the pre-push hook.' };
        flags.push(a);
      } else if (FORCE_FLAGS.test(a)) forcing.push(a);
      else if (PASS_FLAGS.has(a)) flags.push(a);
      else
        return {
          ok: false,
          policy: 'broker',
          message: `hermesd's push broker does not pass \`${raw}\` (it may run a program or push somewhere else); push with plain options.`,
        };
    }
  }
  const [remoteArg, ...refspecs] = positionals;
  let remote: string | undefined;
  if (remoteArg !== undefined) {
    if (opts.remotes.has(remoteArg)) remote = remoteArg;
    else remote = [...opts.remotes].find(([, urls]) => urls.includes(remoteArg))?.[0];
    if (!remote)
      return {
        ok: false,
        policy: 'broker',
        message: `\`${remoteArg}\` is not a configured remote (${[...opts.remotes.keys()].join(', ') || 'none'}); pushes go only to the repository's remotes.`,
      };
  }
  // `+src:dst` forces; `:dst` (an empty source) deletes.
  for (const spec of refspecs) if (spec.startsWith('+') || spec.startsWith(':')) forcing.push(spec);
  if (forcing.length > 0 && opts.policy.forcePush === 'refuse') {
    return {
      ok: false,
      policy: 'forcePush',
      message: `\`${forcing.join(' ')}\` would overwrite or delete what the remote has. Push without force; if the remote has diverged, fetch and merge or rebase your unpushed commits first, or ask the user.`,
    };
  }
  flags.push(...forcing.filter((f) => f.startsWith('-')));
  return { ok: true, remote, refspecs, flags };
}

export type PushResult = { exitCode: number; output: string; refused?: { policy: string; message: string } };

/** A push to a slow remote takes a while: run it without blocking the daemon, bounded. */
const PUSH_TIMEOUT_MS = 10 * 60 * 1000;

/** The push's own output is a few lines per ref; a remote's long rejection text fits. */
const PUSH_OUTPUT_MAX_BYTES = 16 * 1024 * 1024;

async function push(gitBin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await gitAsyncTry(args, { bin: gitBin, cwd, env, timeoutMs: PUSH_TIMEOUT_MS, maxBuffer: PUSH_OUTPUT_MAX_BYTES });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs a push for a sandboxed command: plans it, asks git what it would do (dry run), judges
 * every commit it would publish that the remote does not have, then pushes.
 */
export async function brokerPush(
  root: string,
  config: HermesConfig,
  policy: GitPolicy,
  args: string[],
  opts: { gitBin: string; judged?: (tree: string) => boolean },
): Promise<PushResult> {
  const plan = planPush(args, { remotes: remotesOf(root, opts.gitBin), policy });
  if (!plan.ok)
    return {
      exitCode: 1,
      output: `hermesd guard: refused \`git push ${args.join(' ')}\` (policy ${plan.policy}): ${plan.message}\n`,
      refused: { policy: plan.policy, message: plan.message },
    };
  const env = cleanGitEnv();
  const target = [...(plan.remote ? [plan.remote] : []), ...plan.refspecs];
  const dry = await push(opts.gitBin, ['push', '--dry-run', '--porcelain', ...plan.flags.filter((f) => f !== '--porcelain'), ...target], root, env);
  const updates = porcelainUpdates(dry.stdout);
  // The effect: a forced (+) or deleting (-) update is what the policy refuses, however it was asked for.
  const overwriting = updates.filter((u) => u.flag === '+' || u.flag === '-');
  if (overwriting.length > 0 && policy.forcePush === 'refuse') {
    const message = `This push would overwrite or delete ${overwriting.map((u) => u.to).join(', ')} on the remote.`;
    return {
      exitCode: 1,
      output: `hermesd guard: refused \`git push ${args.join(' ')}\` (policy forcePush): ${message}\n`,
      refused: { policy: 'forcePush', message },
    };
  }
  const remoteName = plan.remote;
  const tips = updates
    .filter((u) => u.flag !== '-' && u.flag !== '=' && u.flag !== '!')
    .map((u) => u.from)
    .filter(Boolean);
  if (tips.length > 0) {
    // What the remote does not have yet (as far as its tracking refs say): the commits this push publishes.
    const fresh = commitsBetween(root, tips, [remoteName ? `--remotes=${remoteName}` : '--remotes'], opts.gitBin);
    const bad = await judgeCommits(root, config, fresh, { gitBin: opts.gitBin, judged: opts.judged });
    if (bad.length > 0) {
      const message = `The push would publish commits that break repository rules:\n${describeBadCommits(bad)}`;
      return {
        exitCode: 1,
        output: `hermesd guard: refused \`git push ${args.join(' ')}\` (repository rules): ${message}\n`,
        refused: { policy: 'rules', message },
      };
    }
  }
  if (plan.flags.includes('--dry-run') || plan.flags.includes('-n')) return { exitCode: dry.code, output: dry.stdout + dry.stderr };
  const real = await push(opts.gitBin, ['push', ...plan.flags, ...target], root, env);
  return { exitCode: real.code, output: real.stdout + real.stderr };
}
