/**
 * The daemon process: takes the single-instance lock, recovers a stale socket, binds the
 * API, and owns the one shutdown path that signals, the idle timer, the API and the
 * disappearance of the work tree all go through.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { createApiServer } from './http.js';
import { statusRoutes } from './routes/status.js';
import type { Doorbell } from './doorbell.js';
import type { Services } from './services/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { tryLock } from '../storage/lock.js';
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

/** HERMESD_IDLE_TIMEOUT_MS (tests, ops) wins over `daemon.idleTimeoutMinutes` from config. */
async function idleTimeoutMs(services: Promise<Services>, env: NodeJS.ProcessEnv): Promise<number> {
  if (Number(env.HERMESD_IDLE_TIMEOUT_MS) > 0) return Number(env.HERMESD_IDLE_TIMEOUT_MS);
  const { config } = await services;
  try {
    return config.get().daemon.idleTimeoutMinutes * 60_000;
  } catch {
    // A broken config file is reported by every command that reads it; the daemon still runs, with the default.
    const { DEFAULTS } = await import('../config/schema.js');
    return DEFAULTS.daemon.idleTimeoutMinutes * 60_000;
  }
}

export async function runDaemon(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const paths: RepoPaths = resolvePaths(cwd, env);
  checkSocketPath(paths.socket);
  mkdirSync(paths.runtimeDir, { recursive: true, mode: 0o700 });
  prepareSocketDir(paths.socketDir);
  const log = fileLogger(paths.logFile);

  const lock = tryLock(paths.lockFile);
  if (!('release' in lock)) {
    log.info('another daemon holds the lock; exiting', { owner: lock.owner });
    return;
  }
  // We hold the lock, so no other daemon of this work tree can be starting. A socket that
  // still answers belongs to a daemon that lost its lock file (deleted by hand): leave it.
  if (existsSync(paths.socket)) {
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
  // The services, and every route over them, load while the socket already answers.
  // The agent socket loads with the first sandboxed command that needs it, as the guard it serves.
  const agentSocket = async (s: Services) => (await import('./agent-socket.js')).startAgentSocket(s);
  const services = import('./services/index.js').then(({ servicesOf }) => servicesOf(ctx, { agentSocket }));
  let loaded: Services | undefined;
  void services.then((s) => (loaded = s));
  const serviceRoutes = Promise.all([services, import('./routes/index.js')]).then(([s, { serviceRoutes }]) => serviceRoutes(s));
  const api = createApiServer(ctx, statusRoutes(ctx), {}, serviceRoutes);
  let lastActivity = Date.now();
  // Falling idle, the daemon collects its garbage at once (it runs with --expose-gc), not when
  // V8's memory reducer gets to it about 8 s later: most of a work tree's day is idle.
  const trim = setTimeout(function collectWhenIdle() {
    if (ctx.busy > 0) trim.refresh();
    else (globalThis as { gc?: () => void }).gc?.();
  }, IDLE_COLLECT_MS).unref();
  const active = () => {
    lastActivity = Date.now();
    trim.refresh();
  };
  api.server.on('request', active);

  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    const oldMask = process.umask(0o177);
    api.server.listen(paths.socket, () => {
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
  log.info('daemon started', { pid: process.pid, root: paths.root, socket: paths.socket, version: VERSION });
  // The doorbell (hooks without a client process) once the services answer.
  let bell: Doorbell | undefined;
  void serviceRoutes
    .then(async () => {
      loaded?.start();
      if (!loaded || stopping) return;
      const { startDoorbell } = await import('./doorbell.js');
      if (!stopping) bell = startDoorbell(loaded, active);
    })
    .catch((err: unknown) => log.error('services or doorbell failed to start', { error: String(err) }));

  let stopping = false;
  const timers: NodeJS.Timeout[] = [];

  const shutdown = async (reason: string, code = 0) => {
    if (stopping) return;
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
    api.server.close();
    api.abortAll();
    // Services that never loaded have nothing to close.
    await loaded?.close();
    cleanup();
    log.info('daemon stopped', { reason });
    process.exit(code);
  };
  const cleanup = () => {
    try {
      // Only remove the socket we bound; a successor may already have bound a new one.
      if (statSync(paths.socket).ino === socketIno) unlinkSync(paths.socket);
    } catch {
      // gone already
    }
    try {
      rmSync(paths.daemonJson, { force: true });
    } catch {
      // runtime dir deleted with the work tree
    }
    lock.release();
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

  const idleMs = await idleTimeoutMs(services, env);
  if (stopping) return;
  timers.push(
    setInterval(() => {
      if (ctx.busy === 0 && Date.now() - lastActivity > idleMs) void shutdown(`idle for ${Math.round(idleMs / 1000)} s`);
    }, Math.max(50, Math.min(idleMs / 4, 60_000))),
  );
  timers.push(
    setInterval(() => {
      if (!existsSync(paths.root) || !existsSync(paths.gitDir)) void shutdown('work tree deleted');
      else if (!existsSync(paths.socket)) void shutdown('socket removed');
    }, WORKTREE_CHECK_MS),
  );
  ctx.events.emit('started');
}
