/**
 * Daemon glue of the watcher: one RepoWatcher per daemon, started after the API listens,
 * turning file changes into `ctx.events` ('authority-changed', 'config-changed',
 * 'skills-changed', 'memory-changed', 'workspace-changed') that the other services reload on
 * and the event stream (GET /v1/events) hands to clients.
 */
import { mkdirSync } from 'node:fs';
import type { DaemonContext } from '../context.js';
import type { StreamedEvent } from '../../protocol/events.js';
import { inotifyWatchCount } from '../../watcher/inotify.js';
import { RepoWatcher, type ChangeKind } from '../../watcher/watcher.js';

const EVENT_OF: Record<ChangeKind, StreamedEvent> = {
  authority: 'authority-changed',
  config: 'config-changed',
  skills: 'skills-changed',
  memory: 'memory-changed',
  workspace: 'workspace-changed',
};

const KEY = 'watcher';
const INOTIFY_COUNT_TTL_MS = 1_000;

/** The daemon's watcher, if it was started. */
export function watcherOf(ctx: DaemonContext): RepoWatcher | undefined {
  return ctx.service<{ watcher?: RepoWatcher }>(KEY, () => ({})).watcher;
}

/** Starts the watcher (once); failures are logged and reported in status, never fatal. */
export function startWatcher(ctx: DaemonContext): Promise<void> {
  const slot = ctx.service<{ watcher?: RepoWatcher; started?: Promise<void>; error?: string }>(KEY, () => ({}));
  if (slot.started) return slot.started;
  // Memory and skills change under $HERMES_HOME: a home the first write creates would go unwatched.
  try {
    mkdirSync(ctx.home, { recursive: true, mode: 0o700 });
  } catch (err) {
    ctx.log.warn('could not create HERMES_HOME for watching', { home: ctx.home, error: String(err) });
  }
  const watcher = new RepoWatcher({
    root: ctx.root,
    gitDir: ctx.paths.gitDir,
    home: ctx.home,
    tree: ctx.env.HERMESD_WATCH_TREE !== '0',
    onChange: (kinds) => {
      // Work-tree edits are constant while anyone works; only the changes that reload something are worth a log line.
      const notable = [...kinds].filter((k) => k !== 'workspace');
      if (notable.length) ctx.log.info('watcher: change', { kinds: notable });
      for (const k of kinds) ctx.events.emit(EVENT_OF[k]);
    },
    onError: (err) => ctx.log.warn('watcher error', { error: String(err) }),
  });
  slot.watcher = watcher;
  const onHookStart = (e?: { hook?: string }) => watcher.hold(`hook ${e?.hook ?? ''}`.trim());
  const onHookEnd = (e?: { hook?: string }) => watcher.release(`hook ${e?.hook ?? ''}`.trim());
  ctx.events.on('hook-start', onHookStart);
  ctx.events.on('hook-end', onHookEnd);
  ctx.onClose(() => {
    ctx.events.off('hook-start', onHookStart);
    ctx.events.off('hook-end', onHookEnd);
    return watcher.close();
  });
  // Counting watches reads /proc/self/fdinfo (~0.15 ms); status is polled, so count at most once a second.
  let watches: { at: number; n: number | null } = { at: 0, n: null };
  const watchCount = () => {
    if (Date.now() - watches.at > INOTIFY_COUNT_TTL_MS) watches = { at: Date.now(), n: inotifyWatchCount() ?? null };
    return watches.n;
  };
  ctx.statusExtras.set(KEY, () => (slot.error ? { state: 'error', error: slot.error } : { ...watcher.state(), inotifyWatches: watchCount() }));
  slot.started = watcher.start().then(
    () => {
      ctx.log.info('watcher ready', { ms: watcher.state().readyMs, tree: watcher.state().tree });
      // Anything cached before the watches existed may have missed a change in between.
      ctx.events.emit('authority-changed');
      ctx.events.emit('workspace-changed');
    },
    (err: unknown) => {
      slot.error = String((err as Error)?.message ?? err);
      ctx.log.error('watcher failed to start', { error: slot.error });
    },
  );
  return slot.started;
}

/** Makes the watcher observe the directories a context was built from (no-op without a watcher). */
export function watchAuthorityDirs(ctx: DaemonContext, dirs: readonly string[]): void {
  watcherOf(ctx)?.watchAuthorityDirs(dirs);
}

/** True when the watcher reports work-tree changes, so a cached workspace snapshot is current. */
export function workspaceWatched(ctx: DaemonContext): boolean {
  const w = watcherOf(ctx);
  return w !== undefined && w.treeLive && w.state().state !== 'paused';
}
