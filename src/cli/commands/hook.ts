/**
 * `hermesd hook <git-hook-name> [args…]`: what the installed hooks run when the curl fast
 * path cannot (no curl, no socket, a daemon that did not answer). It starts a daemon that is
 * down, streams the hook's progress, and exits with the hook's code. When no daemon answers
 * within hooks.timeoutMs it applies hooks.onUnavailable: let the commit through (default)
 * or stop it — a hung daemon never holds a commit for long.
 *
 * Also: `hermesd hook backups` lists the backups interrupted hooks left, and
 * `hermesd hook restore [id]` puts one back.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { DaemonClient } from '../../client/client.js';
import { ensureDaemon, probe, readDaemonJson } from '../../client/lifecycle.js';
import { hermesHome, type RepoPaths } from '../../paths/index.js';
import { DaemonUnavailable, RemoteError, UsageError } from '../../errors/index.js';
import { attemptOf } from '../../githooks/attempt.js';
import type { HookRequestBody } from '../../protocol/hooks.js';
import { HERMESD_HOOKS } from '../../githooks/names.js';
import { action, daemon, globals, output, readStdin, repo, withDeadline } from '../runtime.js';


async function hookSettings(paths: RepoPaths): Promise<{ timeoutMs: number; onUnavailable: 'allow' | 'block'; configError?: string }> {
  // Loaded here, not at the top: the config schema (zod, yaml) costs every other command ~40 ms of start-up.
  const { loadConfig } = await import('../../config/load.js');
  const { HOOK_TIMEOUT_MS } = await import('../../config/schema.js');
  try {
    const { applyApproval } = await import('../../guard/approval.js');
    // A loosening of hooks.onUnavailable waits for `hermesd config approve` here too.
    const c = applyApproval(hermesHome(), paths.root, loadConfig({ root: paths.root, home: hermesHome() }), { record: false }).config;
    return { timeoutMs: c.hooks.timeoutMs, onUnavailable: c.hooks.onUnavailable };
  } catch (err) {
    return { timeoutMs: HOOK_TIMEOUT_MS, onUnavailable: 'allow', configError: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The daemon died while it worked on this commit: put the user's work back from the backup
 * it made for this attempt (src/githooks/recover.ts) and stop the commit, whose verdict is unknown.
 * Undefined when there was nothing of this attempt to restore (then the hook can simply run again).
 */
async function recoverFromLostDaemon(paths: RepoPaths, name: string, attempt: string | undefined, daemonPid: number | undefined): Promise<number | undefined> {
  const { restoreAfterDaemonLoss, selfRestoreMessage } = await import('../../githooks/recover.js');
  const r = await restoreAfterDaemonLoss(paths.gitDir, { attempt, daemonPid });
  if (r.restored.length === 0 && r.waiting.length === 0) return undefined;
  process.stderr.write(
    `hermesd: the daemon stopped while the ${name} hook ran${daemonPid ? ` (pid ${daemonPid})` : ''}; nothing was committed.\n${selfRestoreMessage(r)}\n` +
      `hermesd: commit again (a new daemon starts). The daemon log says why it stopped: hermesd logs\n`,
  );
  return 1;
}

async function runGitHook(name: string, args: string[], opts: { unreachable?: string; phase?: 'final' }): Promise<number> {
  if (process.env.HERMESD_SKIP === '1') return 0;
  const paths = repo();
  const attempt = attemptOf(process.pid);
  const settings = await hookSettings(paths);
  const blocking = name === 'pre-commit' || name === 'commit-msg';
  // hermesd guard (issue 20): inside an agent task's sandbox, a daemon that cannot be reached stops the commit.
  const { insideSandbox } = await import('../../guard/sandbox.js');
  const sandboxed = insideSandbox(paths.gitDir);
  const unavailable = (why: string): number => {
    const block = blocking && (settings.onUnavailable === 'block' || sandboxed);
    const verdict = sandboxed
      ? `this commit is part of an agent task (it runs in hermesd's sandbox), and such a commit is stopped when the daemon cannot judge it`
      : `hooks.onUnavailable is "${settings.onUnavailable}", so ${blocking ? (block ? 'this commit is stopped' : 'this commit goes ahead unchecked') : 'git goes on'}`;
    process.stderr.write(`hermesd: ${why}\nhermesd: the ${name} hook did not run; ${verdict}. Check the daemon with: hermesd status (restart: hermesd restart).\n`);
    return block ? 1 : 0;
  };
  // The sh hook's connection broke mid-hook: the daemon that was working on this commit is gone.
  if (opts.unreachable === 'lost') {
    const code = await recoverFromLostDaemon(paths, name, attempt, readDaemonJson(paths)?.pid);
    if (code !== undefined) return code;
  }
  if (opts.unreachable === 'timeout') return unavailable(`the daemon did not answer within ${settings.timeoutMs} ms (hung or stopped).`);

  const stdin = name === 'post-rewrite' ? (await readStdin()).split('\n').filter(Boolean) : undefined;
  const idx = process.env.GIT_INDEX_FILE;
  const body: HookRequestBody = {
    args,
    via: 'node',
    ...(idx ? { indexFile: isAbsolute(idx) ? idx : resolve(process.cwd(), idx) } : {}),
    ...(stdin ? { stdin } : {}),
    ...(attempt ? { attempt } : {}),
    ...(opts.phase ? { phase: opts.phase } : {}),
  };
  let daemonPid: number | undefined;
  let socket: string;
  try {
    if (sandboxed) {
      // The sandbox cannot start a daemon (its runtime dir is read-only) and must not try: it asks the one it belongs to.
      // Inside, the agent socket sits at the path this environment computes (paths.socket).
      if (!(await probe(paths, settings.timeoutMs))) return unavailable('the daemon does not answer the sandbox.');
      daemonPid = readDaemonJson(paths)?.pid;
      socket = paths.socket;
    } else {
      const { status } = await withDeadline(ensureDaemon(paths), Math.max(settings.timeoutMs, 2_000), `the daemon did not start within ${Math.max(settings.timeoutMs, 2_000)} ms.`);
      daemonPid = status.pid;
      socket = String(status.socket);
    }
    const showProgress = (ev: Record<string, unknown>): void => {
      if (ev.type === 'progress') process.stderr.write(String(ev.message) + '\n');
    };
    // The daemon heartbeats while a hook works, so silence for hooks.timeoutMs means it hung.
    const result = await new DaemonClient(socket).stream('POST', `/v1/hooks/${encodeURIComponent(name)}`, body, showProgress, { silenceMs: settings.timeoutMs });
    if (result.message) process.stderr.write(String(result.message) + '\n');
    return Number(result.exitCode ?? 1);
  } catch (err) {
    if (err instanceof DaemonUnavailable) {
      if ((err.details as { reason?: string } | undefined)?.reason === 'lost') {
        const code = await recoverFromLostDaemon(paths, name, attempt, daemonPid);
        if (code !== undefined) return code;
      }
      return unavailable(err.message);
    }
    if (err instanceof RemoteError) {
      process.stderr.write(`hermesd: the ${name} hook failed: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

export function register(program: Command): void {
  program
    .command('hook')
    .description(`what the installed git hooks run (${HERMESD_HOOKS.join(', ')}); also: hook backups, hook restore [id]`)
    .argument('<name>', 'git hook name, or "backups" / "restore"')
    .argument('[args...]', "the hook's arguments from git")
    .option('--unreachable <why>', 'set by the sh hook when its fast path failed (timeout|lost|no-socket|refused|no-curl|escape)')
    .option('--phase <phase>', 'pre-commit: "final" re-checks, at the end of the hook chain, what changed since the verdict')
    .action(
      action(async (name: string, args: string[], opts: { unreachable?: string; phase?: string }, cmd: Command) => {
        if (name === 'backups') {
          const client = await daemon();
          const r = await client.call<{ backups: Array<{ id: string; createdAt: string; reason: string; dirty: string[]; untracked: string[] }> }>('GET', '/v1/hooks/backups');
          output(globals(cmd), r, () =>
            r.backups.length === 0
              ? 'no backups pending: every hook put your work back'
              : r.backups.map((b) => `${b.id}  ${b.createdAt}  ${b.reason}: ${b.dirty.length} changed and ${b.untracked.length} untracked path(s)`).join('\n') + '\nrestore one with: hermesd hook restore <id>',
          );
          return;
        }
        if (name === 'restore') {
          const client = await daemon();
          const id = args[0];
          const r = await client.call<{ id: string; restored: string[]; displaced: string[]; displacedDir?: string; safetyId: string }>('POST', id ? `/v1/hooks/backups/${encodeURIComponent(id)}/restore` : '/v1/hooks/restore', {});
          output(globals(cmd), r, () =>
            [
              `restored backup ${r.id}: ${r.restored.length} path(s) and the index put back`,
              r.displaced.length ? `files in the way were moved to ${r.displacedDir}: ${r.displaced.join(', ')}` : '',
              `the state before this restore is kept as ${r.safetyId} (undo: hermesd hook restore ${r.safetyId})`,
            ]
              .filter(Boolean)
              .join('\n'),
          );
          return;
        }
        if (!(HERMESD_HOOKS as readonly string[]).includes(name)) throw new UsageError(`Unknown hook "${name}". hermesd handles: ${HERMESD_HOOKS.join(', ')} (and: hook backups, hook restore [id]).`);
        if (opts.phase !== undefined && (opts.phase !== 'final' || name !== 'pre-commit')) throw new UsageError('--phase final goes with the pre-commit hook only.');
        process.exitCode = await runGitHook(name, args, { unreachable: opts.unreachable, phase: opts.phase === 'final' ? 'final' : undefined });
        // The verdict is final: do not let a daemon start still polling in the background
        // (a frozen daemon keeps ensureDaemon busy for its whole deadline) hold the commit.
        process.exit(process.exitCode);
      }),
    );
}

