/**
 * Starting, finding and stopping the daemon of a work tree, from the client side.
 * A live daemon is found from the repository (`<git-dir>/hermesd/daemon.json`, whose pid
 * must own the lock), whatever this process's environment says: a shell or GUI whose
 * HERMESD_SOCKET_DIR or XDG_RUNTIME_DIR differs still reaches it. The socket path computed
 * from the environment (`paths.socket`) is only where a new daemon is started. The client
 * spawns the daemon detached (output to daemon.log) and polls with a deadline; the daemon's
 * own lock makes concurrent starts converge on one process. A daemon of another version than
 * this CLI is stopped and started again from this install.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DaemonUnavailable } from '../errors/index.js';
import { lockOwner, pidAlive } from '../storage/lock.js';
import { VERSION } from '../version.js';
import { spawnDaemon } from '../process/spawn-daemon.js';
import { DAEMON_ENTRY } from '../version.js';
import { DaemonClient } from './daemon-client.js';
import { checkSocketPath, hermesHome, prepareHome, prepareSocketFolder, type RepoPaths } from '../paths/index.js';
import { makeDirs } from '../storage/private-dir.js';
import { fileLogger } from '../storage/log.js';
import type { DaemonInfo, Status } from '../protocol/daemon.js';

/** How long a client waits for a daemon it started to answer. */
export const START_DEADLINE_MS = 10_000;
/** How long `stop` waits for a clean exit before sending SIGTERM, then SIGKILL. */
export const STOP_DEADLINE_MS = 5_000;
/** Bound on the status probe used to decide whether a daemon is alive. */
export const PROBE_TIMEOUT_MS = 1_000;

export type { Status };

export function readDaemonJson(paths: RepoPaths): DaemonInfo | undefined {
  try {
    return JSON.parse(readFileSync(paths.daemonJson, 'utf8')) as DaemonInfo;
  } catch {
    return undefined;
  }
}

/**
 * The daemon this work tree records: daemon.json, when its pid is alive and holds the lock
 * (a daemon killed with -9 leaves a daemon.json whose pid is gone or recycled).
 */
export function recordedDaemon(paths: RepoPaths): DaemonInfo | undefined {
  const info = readDaemonJson(paths);
  if (!info || typeof info.socket !== 'string' || !pidAlive(info.pid)) return undefined;
  return lockOwner(paths.lockFile) === info.pid ? info : undefined;
}

/**
 * Where to look for this work tree's daemon: the recorded socket first, then the one this
 * environment names — worked out only when the recorded one does not answer (its name is a hash).
 */
function* candidateSockets(paths: RepoPaths): Generator<string> {
  const recorded = recordedDaemon(paths)?.socket;
  if (recorded) yield recorded;
  if (recorded !== paths.socket) yield paths.socket;
}

/** Returns the daemon's status when one answers (on its recorded socket or this environment's), else undefined. */
export async function probe(paths: RepoPaths, timeoutMs = PROBE_TIMEOUT_MS): Promise<Status | undefined> {
  for (const socket of candidateSockets(paths)) {
    if (!existsSync(socket)) continue;
    try {
      return await new DaemonClient(socket).call<Status>('GET', '/v1/status', undefined, { timeoutMs });
    } catch {
      // a stale socket file: try the next one
    }
  }
  return undefined;
}

/**
 * A warning for a daemon that listens somewhere other than where this environment would
 * start one (HERMESD_SOCKET_DIR / XDG_RUNTIME_DIR differ between the shell, a GUI and the
 * hook that started it). Everything still works; the warning says how to line them up.
 */
export function socketMismatch(paths: RepoPaths, status: { socket?: unknown }): string | undefined {
  if (typeof status.socket !== 'string' || status.socket === paths.socket) return undefined;
  return (
    `the daemon listens on ${status.socket}, not on ${paths.socket} where this environment (HERMESD_SOCKET_DIR / XDG_RUNTIME_DIR) would start one; ` +
    `hermesd found it through ${paths.daemonJson}. To line them up, set the same HERMESD_SOCKET_DIR in both environments, or run \`hermesd restart\` from the one you use most.`
  );
}

function logTail(paths: RepoPaths, since: number): string {
  try {
    const text = readFileSync(paths.logFile, 'utf8');
    return text.slice(Math.max(since, text.length - 2000)).trim();
  } catch {
    return '';
  }
}

/** Starts the daemon if none answers (or one of another version answers); resolves with its status. `started` tells whether this call spawned it. */
export async function ensureDaemon(paths: RepoPaths, env: NodeJS.ProcessEnv = process.env): Promise<{ status: Status; started: boolean }> {
  const running = await probe(paths);
  if (running && running.version === VERSION) return { status: running, started: false };
  // Another install's daemon: this CLI's own takes its place (as the hooks' client does).
  if (running) await stopDaemon(paths);
  checkSocketPath(paths.socket);
  // A checkout built with tsc alone has no daemon bundle (scripts/bundle-daemon.mjs).
  if (!existsSync(DAEMON_ENTRY))
    throw new DaemonUnavailable(`The daemon's bundle is missing (${DAEMON_ENTRY}). In a checkout of hermesd, build it with: npm run build`);
  makeDirs(paths.runtimeDir);
  // The daemon checks these too (a hook's client starts it): checked here, a bad folder is one sentence and no process.
  prepareSocketFolder(paths.socketDir);
  prepareHome(hermesHome(env));
  let logStart = 0;
  try {
    logStart = statSync(paths.logFile).size;
  } catch {
    // no log yet
  }
  const deadline = Date.now() + START_DEADLINE_MS;
  /** The daemon this call spawned last. */
  let own: { pid: number | undefined; abandon: () => void } | undefined;
  for (;;) {
    const { pid, started, abandon } = spawnDaemon(paths.root, env, paths.logFile);
    own = { pid, abandon };
    // The deadline's timer must not keep a CLI that has its answer alive.
    const said = await Promise.race([started, sleep(Math.max(0, deadline - Date.now()), undefined, { ref: false })]);
    // Silent past the deadline: whatever holds it, no client will reach it; it goes, and its pipe with it.
    if (!said) {
      abandon();
      fileLogger(paths.logFile).error(`the daemon started (pid ${pid}) said nothing within ${START_DEADLINE_MS} ms; its starter stopped it`);
    }
    if (said && 'socket' in said) {
      const status = await new DaemonClient(said.socket)
        .call<Status>('GET', '/v1/status', undefined, { timeoutMs: Math.max(PROBE_TIMEOUT_MS, deadline - Date.now()) })
        .catch(() => undefined);
      if (status) return { status, started: status.pid === pid };
    }
    if (said && 'error' in said) throw new DaemonUnavailable(`The daemon could not start: ${said.error}`);
    if (said && 'exited' in said) {
      const tail = logTail(paths, logStart);
      throw new DaemonUnavailable(`The daemon could not start (it exited at once).${tail ? `\n${tail}` : ''}`);
    }
    // Another daemon holds the lock (starting, or stopping): wait for it to answer, or to let go.
    while (Date.now() < deadline) {
      const status = await probe(paths, 300);
      if (status) return { status, started: false };
      if (lockOwner(paths.lockFile) === undefined) break;
      await sleep(15);
    }
    if (Date.now() >= deadline) break;
  }
  const owner = lockOwner(paths.lockFile);
  if (owner !== undefined && owner === own?.pid) {
    // Ours, and it said its socket but answers nothing: no client would reach it either. It goes, as a silent one does.
    own.abandon();
    fileLogger(paths.logFile).error(
      `the daemon started (pid ${owner}) said its socket but did not answer within ${START_DEADLINE_MS} ms; its starter stopped it`,
    );
  }
  const tail = logTail(paths, logStart);
  if (owner !== undefined && owner !== own?.pid) {
    throw new DaemonUnavailable(
      `Another hermesd daemon (pid ${owner}) holds the lock of this work tree but did not answer within ${START_DEADLINE_MS} ms ` +
        `(${existsSync(paths.daemonJson) ? `its socket is recorded in ${paths.daemonJson}` : 'it recorded no socket yet'}). Stop it with: hermesd stop`,
    );
  }
  throw new DaemonUnavailable(`The daemon did not answer within ${START_DEADLINE_MS} ms of starting. Log: ${paths.logFile}${tail ? `\n${tail}` : ''}`);
}

/** Stops the daemon: asks over the API, then signals the pid that holds the lock, then cleans stale files. */
export async function stopDaemon(paths: RepoPaths): Promise<{ stopped: boolean; pid?: number }> {
  const status = await probe(paths);
  const info = readDaemonJson(paths);
  // The lock names its owner with its start time: a pid taken by another process since is not it.
  const pid = status?.pid ?? lockOwner(paths.lockFile);
  if (status) {
    try {
      await new DaemonClient(String(status.socket)).call('POST', '/v1/shutdown', {}, { timeoutMs: PROBE_TIMEOUT_MS });
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
    for (const socket of new Set([paths.socket, ...(info && typeof info.socket === 'string' ? [info.socket] : [])])) {
      if (!(await socketAlive(socket))) rmSync(socket, { force: true });
    }
    rmSync(paths.daemonJson, { force: true });
  }
  return { stopped: status !== undefined || (pid !== undefined && !pidAlive(pid)), pid };
}

/** Something answers on the socket (another work tree's daemon may share a recorded path after a restart). */
async function socketAlive(socket: string): Promise<boolean> {
  if (!existsSync(socket)) return false;
  try {
    await new DaemonClient(socket).call('GET', '/v1/status', undefined, { timeoutMs: 200 });
    return true;
  } catch {
    return false;
  }
}

/** True when `pid` runs our daemon entry (guards against a recycled pid in a stale daemon.json). */
function isOurDaemon(pid: number): boolean {
  try {
    // daemon/main.js: the bundled entry; server/main.js: the per-file one.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('server/main.js') || cmdline.includes('daemon/main.js');
  } catch {
    return false;
  }
}
