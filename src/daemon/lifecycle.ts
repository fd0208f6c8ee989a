/**
 * Starting, finding and stopping the daemon of a work tree, from the client side.
 * The client spawns the daemon detached (output to daemon.log) and polls the socket with a
 * deadline; the daemon's own lock makes concurrent starts converge on one process.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DaemonUnavailable } from '../errors/index.js';
import { pidAlive } from '../storage/lock.js';
import { DAEMON_ENTRY } from '../version.js';
import { DaemonClient } from './client.js';
import { checkSocketPath, type RepoPaths } from './paths.js';
import type { DaemonInfo } from './process.js';

/** How long a client waits for a daemon it started to answer. */
export const START_DEADLINE_MS = 10_000;
/** How long `stop` waits for a clean exit before sending SIGTERM, then SIGKILL. */
export const STOP_DEADLINE_MS = 5_000;
/** Bound on the status probe used to decide whether a daemon is alive. */
export const PROBE_TIMEOUT_MS = 1_000;

export type Status = DaemonInfo & Record<string, unknown>;

export function readDaemonJson(paths: RepoPaths): DaemonInfo | undefined {
  try {
    return JSON.parse(readFileSync(paths.daemonJson, 'utf8')) as DaemonInfo;
  } catch {
    return undefined;
  }
}

/** Returns the daemon's status when one answers on the socket, else undefined. */
export async function probe(paths: RepoPaths, timeoutMs = PROBE_TIMEOUT_MS): Promise<Status | undefined> {
  if (!existsSync(paths.socket)) return undefined;
  try {
    return await new DaemonClient(paths.socket).call<Status>('GET', '/v1/status', undefined, { timeoutMs });
  } catch {
    return undefined;
  }
}

function logTail(paths: RepoPaths, since: number): string {
  try {
    const text = readFileSync(paths.logFile, 'utf8');
    return text.slice(Math.max(since, text.length - 2000)).trim();
  } catch {
    return '';
  }
}

/** Starts the daemon if none answers; resolves with its status. `started` tells whether this call spawned it. */
export async function ensureDaemon(paths: RepoPaths, env: NodeJS.ProcessEnv = process.env): Promise<{ status: Status; started: boolean }> {
  const running = await probe(paths);
  if (running) return { status: running, started: false };
  checkSocketPath(paths.socket);
  mkdirSync(paths.runtimeDir, { recursive: true, mode: 0o700 });
  let logStart = 0;
  try {
    logStart = statSync(paths.logFile).size;
  } catch {
    // no log yet
  }
  const out = openSync(paths.logFile, 'a', 0o600);
  const child = spawn(process.execPath, [DAEMON_ENTRY, paths.root], {
    cwd: paths.root,
    detached: true,
    stdio: ['ignore', out, out],
    env: daemonEnv(env),
  });
  closeSync(out);
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  child.unref();

  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    const status = await probe(paths, 300);
    if (status) return { status, started: status.pid === child.pid };
    if (exited !== undefined && exited !== 0) {
      const tail = logTail(paths, logStart);
      throw new DaemonUnavailable(`The daemon exited with code ${exited} while starting.${tail ? `\n${tail}` : ''}`);
    }
    await sleep(15);
  }
  const tail = logTail(paths, logStart);
  throw new DaemonUnavailable(`The daemon did not answer within ${START_DEADLINE_MS} ms of starting. Log: ${paths.logFile}${tail ? `\n${tail}` : ''}`);
}

/**
 * The daemon outlives the command that started it. When that command runs inside a git hook,
 * git's per-invocation variables (GIT_INDEX_FILE of `commit -a`, GIT_DIR, …) would follow it
 * and point every later git call of the daemon at the wrong index; drop them.
 */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (/^GIT_(DIR|INDEX_FILE|WORK_TREE|PREFIX|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|EDITOR|EXEC_PATH|REFLOG_ACTION|QUARANTINE_PATH)$/.test(k)) continue;
    out[k] = v;
  }
  return out;
}

/** Stops the daemon: asks over the API, then signals the pid, then cleans stale files. */
export async function stopDaemon(paths: RepoPaths): Promise<{ stopped: boolean; pid?: number }> {
  const status = await probe(paths);
  const info = readDaemonJson(paths);
  const pid = status?.pid ?? info?.pid;
  if (status) {
    try {
      await new DaemonClient(paths.socket).call('POST', '/v1/shutdown', {}, { timeoutMs: PROBE_TIMEOUT_MS });
    } catch {
      // fall through to signals
    }
  }
  if (pid !== undefined && pidAlive(pid) && (status || isOurDaemon(pid))) {
    const deadline = Date.now() + STOP_DEADLINE_MS;
    let signalled = false;
    while (pidAlive(pid) && Date.now() < deadline) {
      if (!status && !signalled) {
        process.kill(pid, 'SIGTERM');
        signalled = true;
      }
      await sleep(20);
    }
    if (pidAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      await sleep(50);
    }
  }
  // A daemon killed with -9 leaves these behind; nobody answers on them any more.
  if (!(await probe(paths, 200))) {
    rmSync(paths.socket, { force: true });
    rmSync(paths.daemonJson, { force: true });
  }
  return { stopped: status !== undefined || (pid !== undefined && !pidAlive(pid)), pid };
}

/** True when `pid` runs our daemon entry (guards against a recycled pid in a stale daemon.json). */
function isOurDaemon(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('daemon/main.js');
  } catch {
    return false;
  }
}
