/**
 * Notices any change in the work tree with one inotify watch per directory and none per
 * file: a watch on a directory already reports modifications of the files in it. The
 * directories come from `git ls-files`, so gitignored trees (node_modules, build output)
 * cost nothing. Events only say "something changed here"; what changed is git's to say,
 * later and only when someone asks (the workspace snapshot is recomputed lazily).
 */
import { execFile } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Directories never watched, whatever .gitignore says. */
const NEVER_WATCH = new Set(['.git', 'node_modules']);
/** Share of the user's inotify budget the tree may take; editors and other tools need the rest. */
const INOTIFY_BUDGET_SHARE = 0.5;
/** Upper bound on tree watches even with a generous inotify limit: past this, polling git status is cheaper. */
export const TREE_MAX_DIRS = 50_000;

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['--no-optional-locks', ...args], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (err, out) => (err ? reject(err) : resolve(out)));
  });
}

/** True when git ignores `rel` (exit 0 of check-ignore); an error counts as not ignored. */
function isIgnored(root: string, rel: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('git', ['check-ignore', '-q', rel], { cwd: root }, (err) => resolve(!err));
  });
}

/** `fs.inotify.max_user_watches` (Linux), or undefined elsewhere. */
export function inotifyLimit(): number | undefined {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** Every directory (relative, '' = root) that holds a tracked or untracked-but-not-ignored file under `sub`. */
export async function listDirs(root: string, sub = ''): Promise<Set<string>> {
  const out = await git(root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', ...(sub ? ['--', sub] : [])]);
  const dirs = new Set<string>(sub ? [] : ['']);
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

export type TreeState = { mode: 'watched'; dirs: number } | { mode: 'off'; reason: string } | { mode: 'starting' };

export class TreeSentinel {
  private watchers = new Map<string, FSWatcher>();
  private closed = false;
  private disabled: string | undefined;
  private started = false;

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
    return { mode: 'watched', dirs: this.watchers.size };
  }

  /** True when tree changes are reported by events (so cached git status can be trusted). */
  get live(): boolean {
    return this.started && !this.disabled && !this.closed;
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
      }
    }
  }

  private onEvent(dir: string, event: string, name: string): void {
    if (this.closed) return;
    if (NEVER_WATCH.has(name)) return;
    const rel = dir ? (name ? `${dir}/${name}` : dir) : name;
    this.onChange(rel);
    if (event === 'rename' && name) void this.follow(rel);
  }

  /** A directory appeared or vanished: watch what git would show under it, drop what is gone. */
  private async follow(rel: string): Promise<void> {
    let isDir = false;
    try {
      isDir = (await stat(join(this.root, rel))).isDirectory();
    } catch {
      if (this.watchers.has(rel)) this.unwatch(rel);
      return;
    }
    if (!isDir || this.watchers.has(rel) || this.closed || this.disabled) return;
    if (rel.split('/').some((p) => NEVER_WATCH.has(p))) return;
    if (await isIgnored(this.root, rel)) return;
    try {
      this.addWatch(rel);
      // Lists only files git does not ignore, so an ignored subtree adds no watches.
      for (const d of await listDirs(this.root, rel)) this.addWatch(d);
    } catch {
      // raced with a deletion
    }
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
