/**
 * How the CLI starts a daemon process (client/lifecycle.ts); the hooks' client starts it the
 * same way in C (src/hook-client/client.c): detached, output to daemon.log, and a pipe on fd 3
 * on which the daemon says one line — the socket it listens on, `busy <pid>` when another
 * daemon holds the lock, or `error <why>` — and closes.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { withoutGitInvocation } from '../git/env.js';
import { DAEMON_ALLOCATOR_ENV, DAEMON_ALLOCATOR_MARKER, DAEMON_ENTRY } from '../version.js';

/** What a starting daemon said on its pipe; `exited` when it closed the pipe without a line (it died at once). */
export type Started = { socket: string } | { busy: number } | { error: string } | { exited: true };

/** The command and environment that start a daemon for the work tree `root`. */
export function daemonCommand(root: string, env: NodeJS.ProcessEnv): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const out = withoutGitInvocation(env);
  if (Object.keys(DAEMON_ALLOCATOR_ENV).every((k) => out[k] === undefined)) Object.assign(out, DAEMON_ALLOCATOR_ENV, { [DAEMON_ALLOCATOR_MARKER]: '1' });
  // No V8 flag: one on the command line slows every start; the daemon sets its own at run time (src/server/run-daemon.ts).
  return { command: process.execPath, args: [DAEMON_ENTRY, root], env: out };
}

/**
 * Starts a detached daemon for `root` (it outlives its starter), its output appended to
 * `logFile`, and resolves with its first line (or `exited`). `pid` is the spawned process;
 * `abandon()`, for a daemon silent past the starter's deadline, closes the pipe (which would
 * keep the starter alive) and kills the daemon's process group, stuck wherever it is.
 */
export function spawnDaemon(
  root: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
): { pid: number | undefined; started: Promise<Started>; abandon: () => void } {
  const cmd = daemonCommand(root, env);
  const out = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(cmd.command, cmd.args, { cwd: root, detached: true, stdio: ['ignore', out, out, 'pipe'], env: { ...cmd.env, HERMESD_READY_FD: '3' } });
    child.unref();
    const pipe = child.stdio[3] as Readable;
    const started = new Promise<Started>((resolve) => {
      let text = '';
      pipe.setEncoding('utf8');
      pipe.on('data', (d: string) => (text += d));
      pipe.on('error', () => undefined);
      pipe.on('close', () => {
        const line = text.split('\n')[0] ?? '';
        if (line.startsWith('busy ')) resolve({ busy: Number(line.slice(5)) });
        else if (line.startsWith('error ')) resolve({ error: line.slice(6) });
        else if (line) resolve({ socket: line });
        else resolve({ exited: true });
      });
      child.once('error', (err) => resolve({ error: err.message }));
    });
    const abandon = () => {
      pipe.destroy();
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      try {
        // Its own group (detached): the daemon and whatever it started, none of it answering anyone.
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    return { pid: child.pid, started, abandon };
  } finally {
    closeSync(out);
  }
}
