/**
 * The daemon's watcher: one RepoWatcher, started after the API listens, turning file changes
 * into `ctx.events` ('authority-changed', 'config-changed', 'skills-changed',
 * 'memory-changed', 'workspace-changed') that the other services reload on and the event
 * stream (GET /v1/events) hands to clients.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DaemonContext } from '../daemon-context.js';
import type { StreamedEvent } from '../../protocol/events.js';
import { inotifyWatchCount } from '../../watcher/inotify.js';
import { projectDir } from '../../paths/index.js';
import { RepoWatcher, type ChangeKind } from '../../watcher/watcher.js';
import type { SecretValues } from '../../security/secret-values.js';

const EVENT_OF: Record<ChangeKind, StreamedEvent> = {
  authority: 'authority-changed',
  config: 'config-changed',
  skills: 'skills-changed',
  memory: 'memory-changed',
  workspace: 'workspace-changed',
};

/** Counting watches reads /proc/self/fdinfo; status is polled, so count at most once a second. */
const INOTIFY_COUNT_TTL_MS = 1_000;

export class WatcherService {
  private watcher?: RepoWatcher;
  private started?: Promise<void>;
  private error?: string;

  /** `secrets`: their walks for secret files look only where the watches report a change; `hookRunning`: which of the daemon's hooks runs now. */
  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: { secrets?: SecretValues; hookRunning?: () => string | undefined } = {},
  ) {}

  /** Starts the watcher (once); failures are logged and reported in status, never fatal. */
  start(): Promise<void> {
    if (this.started) return this.started;
    const { ctx } = this;
    // Memory and skills change under $HERMES_HOME: a home the first write creates would go unwatched.
    try {
      mkdirSync(ctx.home, { recursive: true, mode: 0o700 });
    } catch (err) {
      ctx.log.warn('could not create HERMES_HOME for watching', { home: ctx.home, error: String(err) });
    }
    const indexFile = join(ctx.paths.gitDir, 'index');
    const watcher = new RepoWatcher({
      root: ctx.root,
      gitDir: ctx.paths.gitDir,
      home: ctx.home,
      tree: ctx.env.HERMESD_WATCH_TREE !== '0',
      projectMemoryDir: projectDir(ctx.home, ctx.paths.commonDir),
      hooks: { running: () => this.deps.hookRunning?.(), events: ctx.events },
      onChange: (kinds) => {
        // Work-tree edits are constant while anyone works; only the changes that reload something are worth a log line.
        const notable = [...kinds].filter((k) => k !== 'workspace');
        if (notable.length) ctx.log.info('watcher: change', { kinds: notable });
        for (const k of kinds) ctx.events.emit(EVENT_OF[k]);
      },
      onError: (err) => ctx.log.warn('watcher error', { error: String(err) }),
      onEvent: (path) => {
        ctx.changed();
        // The index written (`git add`): the staged verdict is judged ahead at once, not after the
        // debounce, so that a commit right behind it (`git add -A && git commit`) finds it in flight.
        if (path === indexFile) ctx.events.emit('index-written');
      },
    });
    this.watcher = watcher;
    this.deps.secrets?.watchedBy(watcher.treeChanges());
    let watches: { at: number; n: number | null } = { at: 0, n: null };
    const watchCount = () => {
      if (Date.now() - watches.at > INOTIFY_COUNT_TTL_MS) watches = { at: Date.now(), n: inotifyWatchCount() ?? null };
      return watches.n;
    };
    ctx.report('watcher', () => (this.error ? { state: 'error', error: this.error } : { ...watcher.state(), inotifyWatches: watchCount() }));
    this.started = watcher.start().then(
      () => {
        ctx.log.info('watcher ready', { ms: watcher.state().readyMs, tree: watcher.state().tree });
        // Anything cached before the watches existed may have missed a change in between.
        ctx.events.emit('authority-changed');
        ctx.events.emit('workspace-changed');
      },
      (err: unknown) => {
        this.error = String((err as Error)?.message ?? err);
        ctx.log.error('watcher failed to start', { error: this.error });
      },
    );
    return this.started;
  }

  /** Makes the watcher observe the directories a context was built from (no-op before it starts). */
  watchAuthorityDirs(dirs: readonly string[]): void {
    this.watcher?.watchAuthorityDirs(dirs);
  }

  /** True when the watcher reports work-tree changes, so a cached workspace snapshot is current. */
  workspaceWatched(): boolean {
    const w = this.watcher;
    return w !== undefined && w.treeLive && w.state().state !== 'paused';
  }

  async close(): Promise<void> {
    this.deps.secrets?.watchedBy(undefined);
    await this.watcher?.close();
  }
}
