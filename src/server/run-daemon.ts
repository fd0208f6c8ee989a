/**
 * The daemon process: takes the single-instance lock, recovers a stale socket, binds the
 * API, and owns the one shutdown path that signals, the idle timer, the API and the
 * disappearance of the work tree all go through. It answers hook questions (POST /v1/ask)
 * from its first moment and loads its services behind them; idle for
 * `daemon.idleTimeoutMinutes`, it exits, and the next question starts a new one
 * (src/hook-client/client.c). Every file it made is gone when it stops.
 */
import { chmodSync, closeSync, existsSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createApiServer } from './http.js';
import { statusRoutes } from './routes/status.js';
import type { Services } from './services/index.js';
import type { Route } from './route.js';
import { writeRuntimeFileSync } from '../storage/atomic.js';
import { tryLock } from '../storage/lock.js';
import { makeDirs } from '../storage/private-dir.js';
import type { DaemonInfo } from '../protocol/daemon.js';
import { askRoute } from './routes/ask.js';
import { VERSION } from '../version.js';
import { useSpawner } from '../git/spawner.js';
import { fixGitBase } from '../git/env.js';
import { DaemonContext } from './daemon-context.js';
import { fileLogger } from '../storage/log.js';
import { checkSocketPath, hermesHome, prepareHome, prepareSocketFolder, resolvePaths, type RepoPaths } from '../paths/index.js';

/** How often the daemon checks that its work tree still exists. */
export const WORKTREE_CHECK_MS = 2_000;
/** How long after its last request (or hook question) the daemon counts itself idle and may collect its garbage. */
export const IDLE_COLLECT_MS = 2_000;
/**
 * Falling idle again, the daemon collects only once its heap grew this much since the last
 * collection: a commit leaves far less, and a full collection after each one cost more CPU
 * than the commit's own work (docs/benchmarks.md#repo-size, commits spread out).
 */
const IDLE_COLLECT_GROWTH_BYTES = 4 * 1024 * 1024;

let collector: (() => void) | undefined;

/*
 * The daemon's V8 settings are made here, at run time, not by flags on its command line: any V8
 * flag there makes Node compile its own built-in modules from source (their code cache, built
 * into the node binary, is keyed by V8's flags): a slower start (docs/benchmarks.md#daemon), which a cold
 * daemon's first verdict waits for. A flag set at run time does the same to the built-in modules
 * loaded after it, so each is set once those the daemon needs are in.
 */

/**
 * The young generation stays at V8's initial 1 MiB semi-spaces instead of growing to 16 MiB,
 * whose pages an idle daemon would keep. Run once the daemon's own modules' built-in
 * imports are loaded (the bundle's entry has them all), before the services allocate.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** The heap in use right after the last idle collection (none yet: undefined). */
let heapAfterCollect: number | undefined;

/**
 * One full collection when the daemon falls idle — the first time, and after that once the heap
 * grew by IDLE_COLLECT_GROWTH_BYTES — with V8's memory-over-speed choices on from the first
 * (`--optimize-for-size`); `--expose-gc` set then, the collector is taken from a new context.
 */
function collectGarbage(): void {
  if (heapAfterCollect !== undefined && getHeapStatistics().used_heap_size - heapAfterCollect < IDLE_COLLECT_GROWTH_BYTES) return;
  if (!collector) {
    setFlagsFromString('--optimize-for-size');
    setFlagsFromString('--expose-gc');
    // A new context gets `gc` once the flag is set; the main context was made before.
    collector = runInNewContext('gc') as () => void;
  }
  collector();
  heapAfterCollect = getHeapStatistics().used_heap_size;
}
/** Grace for in-flight requests at shutdown before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 3_000;
/** How long the services' start waits for the questions that came first to be answered. */
const START_AFTER_QUESTIONS_MAX_MS = 2_000;
/** The environment variable naming the fd a starting client reads the daemon's first line on (src/hook-client/client.c). */
export const READY_FD_ENV = 'HERMESD_READY_FD';

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

/**
 * The starter's pipe (HERMESD_READY_FD): the daemon's one line there, then closed — the socket
 * it listens on, "busy <pid>" when another daemon holds the lock, "error <why>" when it cannot
 * start. Read once: the fd is the process's, and the variable goes with it.
 */
function readyPipe(env: NodeJS.ProcessEnv): (line: string) => void {
  const fd = Number(env[READY_FD_ENV]);
  delete env[READY_FD_ENV];
  let open = Number.isInteger(fd) && fd > 2;
  return (line) => {
    if (!open) return;
    open = false;
    try {
      writeSync(fd, `${line.replace(/\n/g, ' ')}\n`);
      closeSync(fd);
    } catch {
      // the client stopped waiting
    }
  };
}

/** The idle timeout: HERMESD_IDLE_TIMEOUT_MS (tests, ops) wins over `daemon.idleTimeoutMinutes`. */
function idleMsOf(services: Services, env: NodeJS.ProcessEnv): number {
  const fromEnv = Number(env.HERMESD_IDLE_TIMEOUT_MS);
  if (env.HERMESD_IDLE_TIMEOUT_MS && fromEnv > 0) return fromEnv;
  return services.config.forJudging().config.daemon.idleTimeoutMinutes * 60_000;
}

/** Runs the daemon of the work tree at `cwd`. */
export async function runDaemon(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const ready = readyPipe(env);
  // What judges is read from disk while the lock is taken and the socket bound: a cold daemon's
  // first question waits for it (a daemon that finds another holding the lock exits all the same).
  const servicesModule = import('./services/index.js');
  servicesModule.catch(() => undefined);
  let paths: RepoPaths;
  const home = hermesHome(env);
  try {
    paths = resolvePaths(cwd, env);
    checkSocketPath(paths.socket);
    makeDirs(paths.runtimeDir);
    // Each a sentence naming the folder and its variable: the starter prints it, daemon.log keeps it.
    prepareSocketFolder(paths.socketDir);
    prepareHome(home);
  } catch (err) {
    ready(`error ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
  const log = fileLogger(paths.logFile);

  const lock = tryLock(paths.lockFile);
  if (!('release' in lock)) {
    log.info('another daemon holds the lock; exiting', { owner: lock.owner });
    ready(`busy ${lock.owner}`);
    return;
  }
  // We hold the lock, so no other daemon of this work tree can be starting. A socket that
  // still answers belongs to a daemon that lost its lock file (deleted by hand): leave it.
  if (existsSync(paths.socket)) {
    if (await socketAnswers(paths.socket)) {
      log.warn('socket answers although the lock was free; leaving the live daemon alone', { socket: paths.socket });
      lock.release();
      ready('busy 0');
      return;
    }
    log.info('removing stale socket', { socket: paths.socket });
    unlinkSync(paths.socket);
  }

  const ctx = new DaemonContext(paths, home, VERSION, log, env);
  // The agent socket loads with the first sandboxed command that needs it, as the guard it serves.
  const agentSocket = async (s: Services) => (await import('./sandbox-socket.js')).startAgentSocket(s);
  let stopping = false;
  const timers: NodeJS.Timeout[] = [];
  // Every request and hook question keeps the daemon from exiting.
  let lastActivity = Date.now();
  let loaded: Services | undefined;
  // The services load right after the socket answers; a question that comes first waits for
  // them: a pre-tool-call question for the config and the judge only (judging()), every other
  // one for all of them (services()).
  let composing: Promise<Services> | undefined;
  const judging = () =>
    (composing ??= servicesModule.then(async ({ servicesOf }) => {
      const s = servicesOf(ctx, { agentSocket });
      loaded = s;
      await s.config.ready();
      return s;
    }));
  const services = async () => (await judging()).loaded();
  const rest = async (): Promise<Route[]> => (await import('./routes/index.js')).serviceRoutes(await services());
  const api = createApiServer(ctx, [...statusRoutes(ctx), askRoute(ctx, judging, { sandboxed: false })], {}, rest);
  // Falling idle, the daemon collects its garbage at once, not when
  // V8's memory reducer gets to it only seconds later: most of a work tree's day is idle.
  const trim = setTimeout(function collectWhenIdle() {
    if (ctx.busy > 0) trim.refresh();
    else collectGarbage();
  }, IDLE_COLLECT_MS).unref();
  api.server.on('request', () => {
    lastActivity = Date.now();
    trim.refresh();
  });

  try {
    await new Promise<void>((resolve, reject) => {
      api.server.once('error', reject);
      const oldMask = process.umask(0o177);
      api.server.listen(paths.socket, () => {
        process.umask(oldMask);
        api.server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    lock.release();
    ready(`error cannot listen on ${paths.socket}: ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
  chmodSync(paths.socket, 0o600);
  const socketIno = statSync(paths.socket).ino;

  // The socket first: the sh runners read it with builtins, line by line, and stop there.
  const info: DaemonInfo = { socket: paths.socket, pid: process.pid, version: VERSION, root: paths.root, startedAt: ctx.startedAt.toISOString() };
  try {
    writeRuntimeFileSync(paths.daemonJson, JSON.stringify(info, null, 2) + '\n');
  } catch (err) {
    // A full disk: the starting client still has the socket from the pipe; later clients find none recorded and start one, which waits for this lock.
    log.warn('daemon.json not written', { error: String(err) });
  }
  ready(paths.socket);
  log.info('daemon started', { pid: process.pid, root: paths.root, socket: paths.socket, version: VERSION });
  // What runs from the start (the watcher, skills, the review queue) starts once the first
  // questions are answered: a hook that started this daemon waits for its verdict, not for them.
  let servicesState: 'loading' | 'ready' | 'failed' = 'loading';
  ctx.report('services', () => servicesState);
  void services()
    .then((s) => {
      const since = Date.now();
      const go = () => {
        if (stopping) return;
        if (ctx.busy > 0 && Date.now() - since < START_AFTER_QUESTIONS_MAX_MS) return void setTimeout(go, 10);
        try {
          // The helper that starts the daemon's git processes (src/git/spawner.ts): a fork of its own, after the first questions.
          const noSpawner = useSpawner();
          fixGitBase();
          if (noSpawner) log.info('git processes are started by the daemon itself: the spawner is', { why: noSpawner });
          s.start();
          servicesState = 'ready';
        } catch (err) {
          servicesState = 'failed';
          log.error('services failed to start', { error: String((err as Error)?.stack ?? err) });
          ctx.warningSources.push(() => [
            `the daemon's services did not start (${err instanceof Error ? err.message : String(err)}); hermesd logs has the rest`,
          ]);
        }
        ctx.changed();
      };
      setImmediate(go);
    })
    .catch((err: unknown) => {
      servicesState = 'failed';
      ctx.changed();
      log.error('services failed to start', { error: String((err as Error)?.stack ?? err) });
    });

  const shutdown = async (reason: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info('daemon stopping', { reason });
    for (const t of timers) clearInterval(t);
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
      // Only remove the socket we bound (a successor may already have bound a new one).
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

  // Idle: gone after the idle timeout, unless something keeps it (a task, a review, an event
  // stream); a daemon whose other services could not load goes too (judging() is all it needs).
  void judging().then(
    (s) => {
      const idleMs = idleMsOf(s, env);
      const idle = setInterval(
        () => {
          if (stopping || ctx.busy > 0 || s.keepsAwake()) return;
          const quiet = Date.now() - Math.max(lastActivity, ctx.lastChangeAt);
          if (quiet > idleMs) void shutdown(`idle for ${Math.round(idleMs / 1000)} s`);
        },
        Math.max(50, Math.min(idleMs / 4, 60_000)),
      );
      timers.push(idle);
    },
    (err: unknown) => log.error('no idle timer: the config service did not load', { error: String(err) }),
  );
  timers.push(
    setInterval(() => {
      if (!existsSync(paths.root) || !existsSync(paths.gitDir)) void shutdown('work tree deleted');
      else if (!existsSync(paths.socket)) void shutdown('socket removed');
      // Another listener in its place (unlinked and bound again): no client reaches this daemon any more, and
      // none takes the other's answers (the hooks trust only the lock's holder); the next question starts a daemon.
      else if (statSync(paths.socket, { throwIfNoEntry: false })?.ino !== socketIno) void shutdown('socket replaced by another listener');
    }, WORKTREE_CHECK_MS),
  );
  ctx.events.emit('started');
}
