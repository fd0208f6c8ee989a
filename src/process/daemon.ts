/**
 * How a daemon process is started: by a client that finds none (client/lifecycle.ts), and by a
 * daemon that falls asleep and hands over to a fresh process (server/process.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { withoutGitInvocation } from '../git/env.js';
import { DAEMON_ALLOCATOR_ENV, DAEMON_ALLOCATOR_MARKER, DAEMON_ENTRY, DAEMON_NODE_FLAGS } from '../version.js';

/** The command and environment that start a daemon for the work tree `root`. */
export function daemonCommand(root: string, env: NodeJS.ProcessEnv): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const out = withoutGitInvocation(env);
  if (Object.keys(DAEMON_ALLOCATOR_ENV).every((k) => out[k] === undefined)) Object.assign(out, DAEMON_ALLOCATOR_ENV, { [DAEMON_ALLOCATOR_MARKER]: '1' });
  return { command: process.execPath, args: [...DAEMON_NODE_FLAGS, DAEMON_ENTRY, root], env: out };
}

/**
 * Starts a detached daemon for `root` (it outlives its starter), its output appended to
 * `logFile`. Inside a git hook, git's per-invocation variables (GIT_INDEX_FILE of `commit -a`,
 * GIT_DIR, …) would point its later git calls at the wrong index: daemonCommand leaves them out.
 */
export function spawnDaemon(root: string, env: NodeJS.ProcessEnv, logFile: string, extraEnv: NodeJS.ProcessEnv = {}, passFds: number[] = []): ChildProcess {
  const cmd = daemonCommand(root, env);
  const out = openSync(logFile, 'a', 0o600);
  try {
    // `passFds` become the child's fds 3, 4, …: a daemon falling asleep passes its listening socket.
    const child = spawn(cmd.command, cmd.args, { cwd: root, detached: true, stdio: ['ignore', out, out, ...passFds], env: { ...cmd.env, ...extraEnv } });
    child.unref();
    return child;
  } finally {
    closeSync(out);
  }
}
