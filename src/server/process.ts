/**
 * The daemon process: takes the single-instance lock, recovers a stale socket, binds the
 * API, and owns the one shutdown path that signals, the idle timers, the API and the
 * disappearance of the work tree all go through.
 *
 * Awake, the daemon loads its services as it starts. Idle for `daemon.hibernateAfterMinutes`,
 * it falls asleep: it starts a fresh daemon process and stops, and the fresh one binds the
 * socket and the doorbell with none of the services loaded (about a bare Node server's
 * memory, docs/benchmarks.md#idle). The next request or hook question wakes it: the services
 * load in that process. A process cannot give back what loading them touched, so sleeping is
 * a new process.
 */
import { chmodSync, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { connect, Server as NetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiServer } from './http.js';
import { statusOf, statusRoutes } from './routes/status.js';
import { startDoorbell, type BellAnswerer, type Doorbell } from './doorbell.js';
import type { Services } from './services/index.js';
import type { Route } from './route.js';
import { spawnDaemon } from '../process/daemon.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { handedLock, tryLock } from '../storage/lock.js';
import { prepareSocketDir } from '../storage/private-dir.js';
import type { DaemonInfo } from '../protocol/daemon.js';
import { VERSION } from '../version.js';
import { DaemonContext } from './context.js';
import { fileLogger } from './log.js';
import { checkSocketPath, hermesHome, resolvePaths, type RepoPaths } from '../paths/index.js';

/** How often the daemon checks that its work tree still exists. */
export const WORKTREE_CHECK_MS = 2_000;
/** How long after its last request (or hook question) the daemon collects its garbage. */
const IDLE_COLLECT_MS = 2_000;
/** Grace for in-flight requests at shutdown before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 3_000;
/** How long a daemon taking over from one that fell asleep waits for it to let go of the lock. */
const HANDOVER_MS = 10_000;
/** Falling asleep, how long connections accepted just before the socket was passed on have to send their request. */
const HANDOVER_DRAIN_MS = 50;

/** The environment variable a daemon falling asleep hands its successor (JSON, `Asleep`); server/main.ts takes it out of the environment. */
export const ASLEEP_ENV = 'HERMESD_ASLEEP';

/** What a daemon that falls asleep tells the process that takes over. */
export type Asleep = {
  /** The pid of the daemon that fell asleep: the successor waits for its lock. */
  from: number;
  since: string;
  /** When the last request came (ms since the epoch): the idle timeout counts from it. */
  lastActivity: number;
  idleMs: number;
  hibernateMs: number;
  /** The status warnings the services had, and whether the config loaded: status shows them until the services load again. */
  warnings: string[];
  config?: { ok: boolean; error?: string };
  /** The fd of the listening socket, passed on: it never stops listening, so no client is refused during the handover. */
  socketFd?: number;
};

/** The handoff in `env` (undefined when there is none or it is not ours). */
export function asleepOf(env: NodeJS.ProcessEnv): Asleep | undefined {
  const raw = env[ASLEEP_ENV];
  if (!raw) return undefined;
  try {
    const a = JSON.parse(raw) as Asleep;
    const numbers = [a.from, a.lastActivity, a.idleMs, a.hibernateMs, a.socketFd ?? 0];
    return numbers.every((n) => Number.isFinite(n)) && typeof a.since === 'string' && Array.isArray(a.warnings) ? { ...a, warnings: a.warnings.map(String), config: a.config && { ok: a.config.ok === true, ...(a.config.error ? { error: String(a.config.error) } : {}) } } : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves true when something accepts connections on the socket. */
export function socketAnswers(socket: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socket);
    const done = (v: boolean) => {
      clearTimeout(t);
      s.destroy();
      resolve(v);
    };
    const t = setTimeout(() => done(true), timeoutMs); // connected but silent is still alive
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

type Timings = { idleMs: number; hibernateMs: number };

/**
 * The idle timeout and the time before falling asleep (0: never): HERMESD_IDLE_TIMEOUT_MS and
 * HERMESD_HIBERNATE_MS (tests, ops) win over `daemon.idleTimeoutMinutes` and
 * `daemon.hibernateAfterMinutes` from config.
 */
async function timingsOf(services: Services, env: NodeJS.ProcessEnv): Promise<Timings> {
  let daemon;
  try {
    daemon = services.config.get().daemon;
  } catch {
    // A broken config file is reported by every command that reads it; the daemon still runs, with the defaults.
    daemon = (await import('../config/schema.js')).DEFAULTS.daemon;
  }
  const fromEnv = (name: string) => (env[name] !== undefined && env[name] !== '' && Number(env[name]) >= 0 ? Number(env[name]) : undefined);
  return {
    idleMs: (fromEnv('HERMESD_IDLE_TIMEOUT_MS') || undefined) ?? daemon.idleTimeoutMinutes * 60_000,
    hibernateMs: fromEnv('HERMESD_HIBERNATE_MS') ?? daemon.hibernateAfterMinutes * 60_000,
  };
}

/** The lock; taking over from a daemon that fell asleep (`from`), the lock it hands over, waiting while it still holds it. */
async function takeLock(path: string, from: number | undefined): Promise<ReturnType<typeof tryLock>> {
  const until = Date.now() + HANDOVER_MS;
  for (;;) {
    const lock = (from !== undefined && handedLock(path)) || tryLock(path);
    if ('release' in lock || lock.owner !== from || Date.now() >= until) return lock;
    await sleep(10);
  }
}

/** Runs the daemon of the work tree at `cwd`; `asleep` when it takes over from one that fell asleep. */
export async function runDaemon(cwd: string, env: NodeJS.ProcessEnv = process.env, asleep?: Asleep): Promise<void> {
  const paths: RepoPaths = resolvePaths(cwd, env);
  checkSocketPath(paths.socket);
  mkdirSync(paths.runtimeDir, { recursive: true, mode: 0o700 });
  prepareSocketDir(paths.socketDir);
  const log = fileLogger(paths.logFile);

  const lock = await takeLock(paths.lockFile, asleep?.from);
  if (!('release' in lock)) {
    log.info('another daemon holds the lock; exiting', { owner: lock.owner });
    return;
  }
  // We hold the lock, so no other daemon of this work tree can be starting. A socket that
  // still answers belongs to a daemon that lost its lock file (deleted by hand): leave it.
  // One passed on by a daemon falling asleep is ours.
  if (asleep?.socketFd === undefined && existsSync(paths.socket)) {
    if (await socketAnswers(paths.socket)) {
      log.warn('socket answers although the lock was free; leaving the live daemon alone', { socket: paths.socket });
      lock.release();
      return;
    }
    log.info('removing stale socket', { socket: paths.socket });
    unlinkSync(paths.socket);
  }

  const home = hermesHome(env);
  const ctx = new DaemonContext(paths, home, VERSION, log, env);
  if (asleep) ctx.asleep = { since: asleep.since, lastRequestAt: new Date(asleep.lastActivity).toISOString(), warnings: asleep.warnings, config: asleep.config };
  // The services, and every route over them: awake, they load while the socket already
  // answers; asleep, with the first request or hook question that needs them.
  // The agent socket loads with the first sandboxed command that needs it, as the guard it serves.
  const agentSocket = async (s: Services) => (await import('./agent-socket.js')).startAgentSocket(s);
  let stopping = false;
  const timers: NodeJS.Timeout[] = [];
  /** Falling asleep: the process that takes over, and the shutdown reason that says so. */
  let successor: ReturnType<typeof spawnDaemon> | undefined;
  let asleepReason: string | undefined;
  /** The listening socket went to the successor: closing ours must leave its path in place. */
  let socketPassed = false;
  // Every request and hook question keeps the daemon from exiting; status requests do not keep its services loaded.
  let lastActivity = asleep?.lastActivity ?? Date.now();
  let lastWork = Date.now();
  // The idle timeout and the time before falling asleep: handed over, or read from config once the services load.
  let timings: Timings | undefined = asleep && { idleMs: asleep.idleMs, hibernateMs: asleep.hibernateMs };
  /** Set once the daemon answers: the idle timers run from then on. */
  let ready = false;
  let loaded: Services | undefined;
  let waking: Promise<{ services: Services; routes: Route[] }> | undefined;
  const wake = () =>
    (waking ??= (async () => {
      const t0 = Date.now();
      const [{ servicesOf }, { serviceRoutes }] = await Promise.all([import('./services/index.js'), import('./routes/index.js')]);
      const services = servicesOf(ctx, { agentSocket });
      const routes = serviceRoutes(services);
      loaded = services;
      if (!stopping) services.start();
      if (ctx.asleep) {
        log.info('daemon woke', { asleepSince: ctx.asleep.since, ms: Date.now() - t0 });
        ctx.asleep = undefined;
        ctx.changed();
      }
      void timingsOf(services, env).then((t) => {
        timings = t;
        if (ready) schedule();
      });
      return { services, routes };
    })());
  const api = createApiServer(ctx, statusRoutes(ctx), {}, async () => (await wake()).routes);
  if (!asleep) void wake().catch(() => undefined); // its failure is logged with the doorbell's, below
  // Falling idle, the daemon collects its garbage at once (it runs with --expose-gc), not when
  // V8's memory reducer gets to it about 8 s later: most of a work tree's day is idle.
  const trim = setTimeout(function collectWhenIdle() {
    if (ctx.busy > 0) trim.refresh();
    else (globalThis as { gc?: () => void }).gc?.();
  }, IDLE_COLLECT_MS).unref();
  const active = (work = true) => {
    lastActivity = Date.now();
    if (work) lastWork = lastActivity;
    trim.refresh();
  };
  // A client that polls status must not keep the services of ten idle work trees loaded.
  api.server.on('request', (req: { url?: string }) => active(!req.url?.startsWith('/v1/status')));

  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    const oldMask = process.umask(0o177);
    api.server.listen(asleep?.socketFd !== undefined ? { fd: asleep.socketFd } : paths.socket, () => {
      process.umask(oldMask);
      api.server.off('error', reject);
      resolve();
    });
  });
  chmodSync(paths.socket, 0o600);
  const socketIno = statSync(paths.socket).ino;

  // The socket first: the sh hooks read it with builtins, line by line, and stop there.
  const info: DaemonInfo = { socket: paths.socket, pid: process.pid, version: VERSION, root: paths.root, startedAt: ctx.startedAt.toISOString() };
  writeFileAtomicSync(paths.daemonJson, JSON.stringify(info, null, 2) + '\n');
  log.info(asleep ? 'daemon started asleep (services load with the next request)' : 'daemon started', { pid: process.pid, root: paths.root, socket: paths.socket, version: VERSION });
  // The doorbell (hooks without a client process): awake, once the services answer; asleep,
  // at once, and its first question wakes the services.
  let bell: Doorbell | undefined;
  let answers: Promise<BellAnswerer> | undefined;
  const answerer = () =>
    (answers ??= (async () => {
      const { services } = await wake();
      return (await import('./bell-answer.js')).bellAnswerer(services);
    })());
  if (asleep) bell = startDoorbell(ctx, answerer, active);
  else
    void wake()
      .then(() => {
        if (!stopping) bell = startDoorbell(ctx, answerer, active);
      })
      .catch((err: unknown) => log.error('services or doorbell failed to start', { error: String(err) }));

  const shutdown = async (reason: string, code = 0) => {
    if (stopping) {
      // Asked to stop while falling asleep: the process that was to take over stops too.
      if (successor && reason !== asleepReason) {
        log.info('stop requested while falling asleep; the next process is stopped too', { reason, pid: successor.pid });
        successor.kill('SIGTERM');
        successor = undefined;
        socketPassed = false;
      }
      return;
    }
    stopping = true;
    log.info('daemon stopping', { reason });
    for (const t of timers) clearInterval(t);
    // New hooks go to the socket (or the fallback) from here on.
    try {
      bell?.close();
    } catch {
      // runtime dir deleted with the work tree
    }
    const force = setTimeout(() => {
      log.warn('shutdown grace exceeded; exiting');
      cleanup();
      process.exit(code);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    closeServer();
    if (socketPassed) {
      // Handing over: a connection this process accepted a moment ago carries its request
      // still; it is answered here, not reset (the next one goes to the next process).
      await sleep(HANDOVER_DRAIN_MS);
      api.server.closeIdleConnections();
      while (ctx.busy > 0) await sleep(10);
    }
    api.abortAll();
    // Services that never loaded have nothing to close.
    await loaded?.close();
    cleanup();
    log.info('daemon stopped', { reason });
    process.exit(code);
  };
  /**
   * Stops accepting. libuv removes the path of a socket it bound when its handle closes; one
   * passed on keeps it: a second link to the socket is made first and renamed over the path
   * right after (a path-bound socket is only the first daemon's; one passed on has no path to
   * remove).
   */
  const closeServer = () => {
    if (!socketPassed) return void api.server.close();
    const keep = (step: () => void) => {
      try {
        step();
        return true;
      } catch (err) {
        log.warn('could not keep the socket path for the next process', { error: String(err) });
        return false;
      }
    };
    const spare = `${paths.socket}.${process.pid}`;
    const linked = keep(() => {
      rmSync(spare, { force: true });
      linkSync(paths.socket, spare);
    });
    // Accepting stops; connections accepted already are kept (http's close would also close
    // those without a request yet, resetting a client that sent one).
    NetServer.prototype.close.call(api.server);
    if (linked) keep(() => renameSync(spare, paths.socket));
  };
  const cleanup = () => {
    try {
      // Only remove the socket we bound (a successor may already have bound a new one), and keep the one passed on.
      if (!socketPassed && statSync(paths.socket).ino === socketIno) unlinkSync(paths.socket);
    } catch {
      // gone already
    }
    try {
      rmSync(paths.daemonJson, { force: true });
    } catch {
      // runtime dir deleted with the work tree
    }
    // Falling asleep, the lock goes to the next process: it is never without an owner (`hermesd stop` finds it).
    if (successor?.pid) lock.handTo(successor.pid);
    else lock.release();
  };
  ctx.requestShutdown = (reason) => void shutdown(reason);

  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  process.on('uncaughtException', (err) => {
    // A bug in one handler must not take down the daemon every client depends on.
    log.error('uncaught exception', { error: String(err?.stack ?? err) });
  });
  process.on('unhandledRejection', (err) => {
    log.error('unhandled rejection', { error: String((err as Error)?.stack ?? err) });
  });

  // Idle: asleep after `hibernateMs` (0: never) when nothing keeps the services busy; gone after `idleMs`.
  let idleTimer: NodeJS.Timeout | undefined;
  function schedule(): void {
    if (stopping || !timings) return;
    clearInterval(idleTimer);
    const first = Math.min(timings.idleMs, timings.hibernateMs > 0 ? timings.hibernateMs : Infinity);
    idleTimer = setInterval(idleTick, Math.max(50, Math.min(first / 4, 60_000)));
    timers.push(idleTimer);
  }
  function idleTick(): void {
    if (stopping || !timings || ctx.busy > 0) return;
    const now = Date.now();
    if (now - lastActivity > timings.idleMs) return void shutdown(`idle for ${Math.round(timings.idleMs / 1000)} s`);
    // A work tree whose files change is in use, requests or not: its services stay loaded.
    const quiet = now - Math.max(lastWork, ctx.lastChangeAt);
    if (loaded && timings.hibernateMs > 0 && quiet > timings.hibernateMs && !loaded.keepsAwake()) fallAsleep(timings, quiet);
  }
  function fallAsleep(t: Timings, quiet: number): void {
    let shown: Pick<Asleep, 'warnings' | 'config'> = { warnings: [] };
    try {
      const { warnings, config } = statusOf(ctx);
      shown = { warnings, config };
    } catch {
      // status reads files a deleted work tree no longer has; the successor finds out itself
    }
    const handoff: Asleep = { from: process.pid, since: new Date().toISOString(), lastActivity, ...t, ...shown };
    // The listening socket itself goes to the next process (its fd 3): connections that come
    // while this one stops wait in the socket's queue for it, none is refused.
    const fd = (api.server as unknown as { _handle?: { fd?: number } })._handle?.fd;
    const passed = typeof fd === 'number' && fd >= 0 ? [fd] : [];
    if (passed.length) handoff.socketFd = 3;
    try {
      successor = spawnDaemon(paths.root, env, paths.logFile, { [ASLEEP_ENV]: JSON.stringify(handoff) }, passed);
      socketPassed = passed.length > 0;
    } catch (err) {
      log.warn('cannot fall asleep (the next process did not start); staying awake', { error: String(err) });
      timings = { ...t, hibernateMs: 0 };
      return;
    }
    asleepReason = `falling asleep after ${Math.round(quiet / 1000)} s without work or changes`;
    void shutdown(asleepReason);
  }
  ready = true;
  schedule();
  timers.push(
    setInterval(() => {
      if (!existsSync(paths.root) || !existsSync(paths.gitDir)) void shutdown('work tree deleted');
      else if (!existsSync(paths.socket)) void shutdown('socket removed');
    }, WORKTREE_CHECK_MS),
  );
  ctx.events.emit('started');
}
