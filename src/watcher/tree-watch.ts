/**
 * Notices any change in the work tree with one inotify watch per directory and none per
 * file: a watch on a directory already reports modifications of the files in it. The
 * directories come from `git ls-files`, so gitignored trees (node_modules, build output)
 * cost nothing. Events only say "something changed here"; what changed is git's to say,
 * later and only when someone asks (the workspace snapshot is recomputed lazily).
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitZ } from '../git/parse.js';
import { gitAsync, gitAsyncTry } from '../git/run.js';

/** Directories never watched, whatever .gitignore says. */
const NEVER_WATCH = new Set(['.git', 'node_modules']);
/** Share of the user's inotify budget the tree may take; editors and other tools need the rest. */
const INOTIFY_BUDGET_SHARE = 0.5;
/** Upper bound on tree watches even with a generous inotify limit: past this, polling git status is cheaper. */
export const TREE_MAX_DIRS = 50_000;

/** The file list of a huge monorepo; past this the tree is not watched (polling git status is cheaper). */
const LS_FILES_MAX_BYTES = 256 * 1024 * 1024;
/** The answer of one check-ignore batch (at most FOLLOW_MAX_PENDING paths). */
const CHECK_IGNORE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Which of `rels` git ignores: one `git check-ignore --stdin` for all of them (exit 1 when
 * none is ignored). An error counts as "not ignored": the directory is watched.
 */
async function ignoredAmong(root: string, rels: string[]): Promise<Set<string>> {
  const r = await gitAsyncTry(['check-ignore', '--stdin', '-z'], { cwd: root, input: rels.join('\0') + '\0', maxBuffer: CHECK_IGNORE_MAX_BYTES });
  return new Set(splitZ(r.stdout));
}

/**
 * New directories are followed in batches: events are collected for this long, then one
 * stat each and two git processes for the whole batch (a rename storm once cost a
 * `git check-ignore` per event and thousands of processes).
 */
export const FOLLOW_BATCH_MS = 100;
/** After a batch this large (a storm), the next one waits this long: the storm costs latency, not the daemon. */
const STORM_BATCH_SIZE = 100;
const STORM_BATCH_MS = 1_000;
/** Past this many directories waiting in one batch, the batch is dropped for one rescan of the tree. */
export const FOLLOW_MAX_PENDING = 2_000;

/** `fs.inotify.max_user_watches` (Linux), or undefined elsewhere. */
export function inotifyLimit(): number | undefined {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** Every directory (relative, '' = root) that holds a tracked or untracked-but-not-ignored file under `sub`. */
export async function listDirs(root: string, sub: string | string[] = ''): Promise<Set<string>> {
  const subs = (Array.isArray(sub) ? sub : [sub]).filter(Boolean);
  const args = [
    '--no-optional-locks',
    'ls-files',
    '-z',
    '--cached',
    '--others',
    '--exclude-standard',
    ...(subs.length ? ['--', ...subs.map((s) => `:(literal)${s}`)] : []),
  ];
  const out = (await gitAsync(args, { cwd: root, maxBuffer: LS_FILES_MAX_BYTES })).toString('utf8');
  const dirs = new Set<string>(subs.length ? [] : ['']);
  for (const file of out.split('\0')) {
    let i = file.lastIndexOf('/');
    while (i > 0) {
      const d = file.slice(0, i);
      if (dirs.has(d)) break;
      dirs.add(d);
      i = file.lastIndexOf('/', i - 1);
    }
  }
  return dirs;
}

/** `following`: new directories are waiting for, or in, a batch that decides whether they get a watch. */
export type TreeState = { mode: 'watched'; dirs: number; following?: true } | { mode: 'off'; reason: string } | { mode: 'starting' };

export class TreeSentinel {
  private watchers = new Map<string, FSWatcher>();
  private closed = false;
  private disabled: string | undefined;
  private started = false;
  /** Paths whose rename events wait for the next batch; `rescan` when too many came. */
  private readonly pending = new Set<string>();
  private rescan = false;
  private batchTimer: NodeJS.Timeout | undefined;
  /** One batch at a time: a storm queues work, never processes. */
  private batching: Promise<void> | undefined;
  private lastBatchSize = 0;
  /** Told of each directory whose watch is dropped: its changes are no longer reported. */
  onUnwatch: ((rel: string) => void) | undefined;

  constructor(
    private readonly root: string,
    private readonly onChange: (rel: string) => void,
    private readonly maxDirs = Math.min(TREE_MAX_DIRS, Math.floor((inotifyLimit() ?? 2 * TREE_MAX_DIRS) * INOTIFY_BUDGET_SHARE)),
  ) {}

  async start(): Promise<void> {
    let dirs: Set<string>;
    try {
      dirs = await listDirs(this.root);
    } catch (err) {
      this.disabled = `git ls-files failed: ${String((err as Error).message ?? err).split('\n')[0]}`;
      return;
    }
    if (dirs.size > this.maxDirs) {
      this.disabled = `${dirs.size} directories exceed the watch budget of ${this.maxDirs}`;
      return;
    }
    for (const d of dirs) {
      if (this.closed) return;
      this.addWatch(d);
    }
    this.started = true;
  }

  state(): TreeState {
    if (this.disabled) return { mode: 'off', reason: this.disabled };
    if (!this.started) return { mode: 'starting' };
    const following = this.batchTimer !== undefined || this.batching !== undefined;
    return { mode: 'watched', dirs: this.watchers.size, ...(following ? { following: true as const } : {}) };
  }

  /** True when tree changes are reported by events (so cached git status can be trusted). */
  get live(): boolean {
    return this.started && !this.disabled && !this.closed;
  }

  /** The watch on directory `rel` ('' = the root): the same object while that watch lasts; undefined where there is none. */
  watchOf(rel: string): object | undefined {
    return this.live ? this.watchers.get(rel) : undefined;
  }

  /** Also watches `rel` (a directory git lists no file in yet, such as a session's empty cwd). */
  watchDir(rel: string): void {
    if (!this.started || this.closed || this.disabled) return;
    this.addWatch(rel);
  }

  private addWatch(rel: string): void {
    if (this.watchers.has(rel) || this.watchers.size >= this.maxDirs) return;
    const abs = rel ? join(this.root, rel) : this.root;
    let w: FSWatcher;
    try {
      w = watch(abs, { persistent: false }, (event, name) => this.onEvent(rel, event, name ? String(name) : ''));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC') this.disabled = 'the inotify watch limit (fs.inotify.max_user_watches) was reached';
      return;
    }
    w.on('error', () => this.unwatch(rel));
    this.watchers.set(rel, w);
  }

  private unwatch(rel: string): void {
    for (const [d, w] of this.watchers) {
      if (rel === '' || d === rel || d.startsWith(rel + '/')) {
        w.close();
        this.watchers.delete(d);
        // From now on its changes go unreported: whoever trusted the watch looks at it again.
        this.onUnwatch?.(d);
      }
    }
  }

  private onEvent(dir: string, event: string, name: string): void {
    if (this.closed) return;
    if (NEVER_WATCH.has(name)) return;
    const rel = dir ? (name ? `${dir}/${name}` : dir) : name;
    this.onChange(rel);
    if (event === 'rename' && name) this.follow(rel);
  }

  /** A directory may have appeared or vanished: looked at in the next batch. */
  private follow(rel: string): void {
    if (this.rescan) return;
    if (this.pending.size >= FOLLOW_MAX_PENDING) {
      this.pending.clear();
      this.rescan = true;
    } else this.pending.add(rel);
    this.batchTimer ??= setTimeout(
      () => {
        this.batchTimer = undefined;
        this.batching ??= this.runBatch().finally(() => {
          this.batching = undefined;
          // What arrived while this batch ran goes in the next one.
          if (this.pending.size > 0 || this.rescan) this.follow('');
        });
      },
      this.lastBatchSize > STORM_BATCH_SIZE ? STORM_BATCH_MS : FOLLOW_BATCH_MS,
    );
  }

  /** Watches what git would show under the batch's new directories, drops what is gone. */
  private async runBatch(): Promise<void> {
    if (this.closed || this.disabled) return;
    if (this.rescan) {
      this.rescan = false;
      this.pending.clear();
      this.lastBatchSize = FOLLOW_MAX_PENDING;
      try {
        const dirs = await listDirs(this.root);
        for (const [d] of this.watchers) if (!dirs.has(d)) this.unwatch(d);
        for (const d of dirs) this.addWatch(d);
      } catch {
        // the tree changes under us; the next event tries again
      }
      return;
    }
    const batch = [...this.pending].filter((r) => r !== '');
    this.pending.clear();
    this.lastBatchSize = batch.length;
    const fresh: string[] = [];
    for (const rel of batch) {
      try {
        if (!(await stat(join(this.root, rel))).isDirectory()) continue;
      } catch {
        if (this.watchers.has(rel)) this.unwatch(rel);
        continue;
      }
      if (this.watchers.has(rel) || rel.split('/').some((p) => NEVER_WATCH.has(p))) continue;
      fresh.push(rel);
    }
    if (fresh.length === 0 || this.closed) return;
    const ignored = await ignoredAmong(this.root, fresh);
    const watch = fresh.filter((r) => !ignored.has(r));
    if (watch.length === 0) return;
    try {
      for (const rel of watch) this.addWatch(rel);
      // Lists only files git does not ignore, so an ignored subtree adds no watches.
      for (const d of await listDirs(this.root, watch)) this.addWatch(d);
    } catch {
      // raced with a deletion
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.batchTimer);
    this.pending.clear();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
