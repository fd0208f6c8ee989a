/**
 * Watches what the daemon's state depends on, and nothing else:
 *   - authority files in the directories a session's context was built from (depth 0),
 *   - `<root>/.hermes/config.yaml` and `<root>/.hermes/skills/**`,
 *   - `$HERMES_HOME/SOUL.md`, `config.yaml`, `skills/**`, the memory stores in `memories/` and
 *     this repository's MEMORY.md in `projects/<id>/`,
 *   - the git state files (HEAD, index, logs/HEAD, locks and operation markers),
 * with chokidar, whose `ignored` function is an allowlist so it never descends into the
 * tree, except the git dir, which has two plain watches of its own (GitDirWatch); plus the
 * per-directory TreeSentinel so dirty counts stay current.
 * While `index.lock`, a rebase or a merge is in progress it acts on nothing: changes seen
 * meanwhile are remembered and reported once git is done.
 */
import type { EventEmitter } from 'node:events';
import { existsSync, type FSWatcher as FsWatcher } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { AUTHORITY_FILE_NAMES } from '../context/authority.js';
import { AGENT_INSTRUCTION_NAMES } from '../other-agents/instruction-files.js';
import { gitOperation } from '../context/workspace.js';
import { FILE_OF } from '../memory/snapshot.js';
import { GitDirWatch, watchNames } from './gitdir.js';
import { TreeSentinel, type TreeState } from './tree-watch.js';
import { memoriesDir, projectSkillsDir, repoConfigPath, soulPath, userConfigPath, userSkillsDir } from '../paths/index.js';
import type { TreeChanges } from '../security/secret-values.js';

/** Instruction files, in the folders the authority is read from: the authority's names and the other agents' own (GEMINI.md…), whose drift from it `hermesd://agents` shows. */
const INSTRUCTION_NAMES: ReadonlySet<string> = new Set([...AUTHORITY_FILE_NAMES, ...AGENT_INSTRUCTION_NAMES]);

export type ChangeKind = 'authority' | 'config' | 'skills' | 'memory' | 'workspace';

/** The memory store files (written by rename, so their folder's watch reports them). */
const MEMORY_FILES: ReadonlySet<string> = new Set(Object.values(FILE_OF));

/** Changed directories kept for `treeChanges` between two looks; past this, "not known" (a storm: whoever asks looks at every directory). */
const CHANGED_DIRS_MAX = 10_000;

/** Changes are coalesced for this long before being reported (editors write a file in several steps). */
export const WATCH_DEBOUNCE_MS = 40;
/** While git holds the index or an operation runs, its end is also checked this often (an event may be missed). */
export const PAUSE_POLL_MS = 200;

/** Files in the git dir whose change means HEAD, the branch or the index moved. */
const GIT_STATE_FILES = new Set(['HEAD', 'index', 'index.lock', 'ORIG_HEAD', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'packed-refs']);
const GIT_OPERATION_DIRS = new Set(['rebase-merge', 'rebase-apply']);

export type WatcherOptions = {
  root: string;
  gitDir: string;
  home: string;
  onChange: (kinds: ReadonlySet<ChangeKind>) => void;
  onError?: (err: unknown) => void;
  /** Called for every event as it comes, before any debounce or pause (it must do no I/O), with the path that changed where there is one: the daemon's status reads afresh after it. */
  onEvent?: (path?: string) => void;
  /** Watch every tracked directory for dirty counts (default true). */
  tree?: boolean;
  /** `$HERMES_HOME/projects/<id>`: the repository's own MEMORY.md. */
  projectMemoryDir?: string;
  /**
   * The daemon's own hooks: which one runs now (changes are held back while one does), and where
   * each says it ended ('hook-end', once its answer has gone out: the watcher resumes then).
   */
  hooks?: { running: () => string | undefined; events: EventEmitter };
};

export type WatcherState = {
  state: 'starting' | 'ready' | 'paused' | 'closed';
  /** What git is doing while the watcher holds back ('index.lock', 'rebase', 'merge', …). */
  pausedBy?: string;
  readyMs?: number;
  /** Paths watched: chokidar's directories and files, and the git dir's own watches. */
  targets: number;
  tree: TreeState;
  authorityDirs: number;
  pending: ChangeKind[];
  lastChange?: { kinds: ChangeKind[]; at: string };
};

function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

export class RepoWatcher {
  private chokidar: FSWatcher | undefined;
  private git: GitDirWatch | undefined;
  private home: FsWatcher | undefined;
  private tree: TreeSentinel | undefined;
  private readonly authorityDirs = new Set<string>();
  private readonly pending = new Set<ChangeKind>();
  private flushTimer: NodeJS.Timeout | undefined;
  private pauseTimer: NodeJS.Timeout | undefined;
  private status: WatcherState['state'] = 'starting';
  private readyMs: number | undefined;
  private lastChange: WatcherState['lastChange'];
  private readonly hermesDir: string;
  private readonly projectSkills: string;
  private readonly userSkills: string;
  private readonly memories: string;
  /** The repository memory's folder and its parent (`projects/`), which reports the folder's creation. */
  private readonly projectMemory: string | undefined;
  private readonly projects: string | undefined;

  private readonly onHookEnd = () => this.resumeIfIdle();

  constructor(private readonly opts: WatcherOptions) {
    opts.hooks?.events.on('hook-end', this.onHookEnd);
    this.authorityDirs.add(opts.root);
    this.hermesDir = dirname(repoConfigPath(opts.root));
    this.projectSkills = projectSkillsDir(opts.root);
    this.userSkills = userSkillsDir(opts.home);
    this.memories = memoriesDir(opts.home);
    this.projectMemory = opts.projectMemoryDir;
    this.projects = opts.projectMemoryDir ? dirname(opts.projectMemoryDir) : undefined;
  }

  /** Resolves once the initial scan is done and changes are being reported. */
  async start(): Promise<void> {
    const t0 = performance.now();
    this.git = new GitDirWatch(
      this.opts.gitDir,
      (path) => this.onPath(path),
      (err) => this.opts.onError?.(err),
    );
    try {
      this.git.start();
    } catch (err) {
      // The git dir is gone (the work tree with it): the daemon stops on its own.
      this.opts.onError?.(err);
    }
    // $HERMES_HOME itself by its entries' names (SessionDB's files are written on every record,
    // and chokidar re-read a watched folder on its events); chokidar watches the folders in it
    // that hold what a change reloads, each once it exists.
    const { home } = this.opts;
    const homeFolders = [this.memories, this.projects, this.userSkills].filter((d): d is string => d !== undefined);
    if (existsSync(home)) {
      try {
        this.home = watchNames(
          home,
          (path) => {
            if (homeFolders.includes(path) && existsSync(path)) this.chokidar?.add(path);
            this.onPath(path);
          },
          (err) => this.opts.onError?.(err),
        );
      } catch (err) {
        this.opts.onError?.(err);
      }
    }
    const targets = [this.opts.root, ...homeFolders.filter((d) => existsSync(d))];
    const w = chokidar.watch(targets, {
      ignored: (path: string, stats?: { isDirectory(): boolean }) => this.ignored(path, stats),
      ignoreInitial: true,
      persistent: true,
    });
    this.chokidar = w;
    // Directory add/remove comes as chokidar events; file changes as the raw events of the
    // directory watches, since files get no watch of their own (see ignored()).
    w.on('all', (_event, path) => this.onPath(path));
    w.on('raw', (_event, name, details) => {
      const dir = (details as { watchedPath?: string } | undefined)?.watchedPath;
      if (dir && name) this.onPath(join(dir, name));
    });
    w.on('error', (err) => this.opts.onError?.(err));
    const ready = new Promise<void>((resolve) => w.once('ready', () => resolve()));
    if (this.opts.tree !== false) {
      this.tree = new TreeSentinel(this.opts.root, (rel) => this.onTree(rel));
      this.tree.onUnwatch = (rel) => this.noteTreeChange(rel);
      await Promise.all([ready, this.tree.start()]);
    } else {
      await ready;
    }
    this.readyMs = performance.now() - t0;
    if (this.status === 'starting') this.status = this.gitBusy() ? 'paused' : 'ready';
    if (this.status === 'paused') this.schedulePausePoll();
    else if (this.pending.size > 0) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.flush();
      }, WATCH_DEBOUNCE_MS);
    }
  }

  /** Adds directories whose authority files decide a context (a session started in a subdirectory). */
  watchAuthorityDirs(dirs: readonly string[]): void {
    const added = dirs.filter((d) => under(d, this.opts.root) && !this.authorityDirs.has(d));
    if (added.length === 0) return;
    for (const d of added) this.authorityDirs.add(d);
    const existing = added.filter((d) => existsSync(d));
    // Directories chokidar skipped before (they were ignored then) must be read now.
    this.chokidar?.add(existing);
    for (const d of existing) this.tree?.watchDir(relative(this.opts.root, d).split(sep).join('/'));
  }

  /** True when the work tree's changes are reported, so a cached git status can be trusted. */
  get treeLive(): boolean {
    return this.tree?.live ?? false;
  }

  state(): WatcherState {
    const watched = this.chokidar?.getWatched() ?? {};
    let targets = (this.git?.count ?? 0) + (this.home ? 1 : 0);
    for (const entries of Object.values(watched)) targets += entries.length;
    return {
      state: this.status,
      ...(this.status === 'paused' ? { pausedBy: this.gitBusy() ?? 'git' } : {}),
      ...(this.readyMs !== undefined ? { readyMs: Math.round(this.readyMs) } : {}),
      targets,
      tree: this.tree?.state() ?? { mode: 'off', reason: 'disabled' },
      authorityDirs: this.authorityDirs.size,
      pending: [...this.pending],
      ...(this.lastChange ? { lastChange: this.lastChange } : {}),
    };
  }

  async close(): Promise<void> {
    this.opts.hooks?.events.off('hook-end', this.onHookEnd);
    this.status = 'closed';
    clearTimeout(this.flushTimer);
    clearTimeout(this.pauseTimer);
    this.tree?.close();
    this.git?.close();
    this.home?.close();
    await this.chokidar?.close();
  }

  /**
   * The allowlist: everything not named here is ignored, so chokidar never walks the tree.
   * Files are never watched themselves (one inotify watch each): the watch on their
   * directory already reports their changes.
   */
  ignored(path: string, stats?: { isDirectory(): boolean }): boolean {
    if (stats && !stats.isDirectory()) return true;
    const { root, gitDir, home } = this.opts;
    // GitDirWatch's.
    if (under(path, gitDir)) return true;
    if (under(path, home)) {
      if (path === home || path === soulPath(home) || path === userConfigPath(home) || path === this.memories) return false;
      if (path === this.projects || path === this.projectMemory) return false;
      return !(under(path, this.userSkills) && !this.inSkillJunk(path, this.userSkills));
    }
    if (under(path, root)) {
      if (this.authorityDirs.has(path)) return false;
      if (under(path, this.hermesDir)) {
        return !(
          path === this.hermesDir ||
          path === repoConfigPath(this.opts.root) ||
          (under(path, this.projectSkills) && !this.inSkillJunk(path, this.projectSkills))
        );
      }
      const parent = dirname(path);
      const name = basename(path);
      if (this.authorityDirs.has(parent)) return !(INSTRUCTION_NAMES.has(name) || name === '.cursor');
      if (name === 'rules' && this.authorityDirs.has(dirname(parent)) && basename(parent) === '.cursor') return false;
      if (name.endsWith('.mdc') && basename(parent) === 'rules' && this.authorityDirs.has(dirname(dirname(parent)))) return false;
      return true;
    }
    // Ancestors of a watched path (chokidar may ask about them) are not themselves watched.
    return true;
  }

  private inSkillJunk(path: string, skillsDir: string): boolean {
    return relative(skillsDir, path)
      .split(sep)
      .some((p) => p === '.git' || p === 'node_modules');
  }

  private classify(path: string): ChangeKind | undefined {
    const { root, gitDir, home } = this.opts;
    if (under(path, gitDir)) {
      const name = basename(path);
      const parent = dirname(path);
      if (parent === gitDir && (GIT_STATE_FILES.has(name) || GIT_OPERATION_DIRS.has(name))) return 'workspace';
      return parent === join(gitDir, 'logs') && name === 'HEAD' ? 'workspace' : undefined;
    }
    if (under(path, this.userSkills)) return this.inSkillJunk(path, this.userSkills) ? undefined : 'skills';
    if (under(path, this.projectSkills)) return this.inSkillJunk(path, this.projectSkills) ? undefined : 'skills';
    if (path === userConfigPath(home) || path === repoConfigPath(root)) return 'config';
    if (path === soulPath(home)) return 'authority';
    // Any daemon (another repository's, the CLI's) may write the shared stores: the file is the truth.
    // The folder appears with the first write, before its own watch can report that write.
    if (path === this.memories || (dirname(path) === this.memories && MEMORY_FILES.has(basename(path)))) return 'memory';
    if (this.projectMemory && (path === this.projectMemory || (dirname(path) === this.projectMemory && MEMORY_FILES.has(basename(path))))) return 'memory';
    if (under(path, root)) {
      const name = basename(path);
      if (INSTRUCTION_NAMES.has(name) || name.endsWith('.mdc') || name === '.cursor' || name === 'rules') return 'authority';
    }
    return undefined;
  }

  private onPath(path: string): void {
    this.opts.onEvent?.(path);
    const kind = this.classify(path);
    if (kind) this.note(kind);
  }

  /** Any tree change (a .gitignore too: the dirty counts are git's to recompute) makes the workspace stale. */
  private onTree(rel: string): void {
    this.opts.onEvent?.();
    this.noteTreeChange(rel);
    this.note('workspace');
  }

  /** Directories with a change reported since the last `takeChanged` (undefined: more than CHANGED_DIRS_MAX, not kept). */
  private changedDirs: Set<string> | undefined = new Set();

  /** `rel` is the entry that changed, or a watched directory itself: both it and the directory holding it are marked. */
  private noteTreeChange(rel: string): void {
    if (!this.changedDirs) return;
    this.changedDirs.add(rel).add(rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
    if (this.changedDirs.size > CHANGED_DIRS_MAX) this.changedDirs = undefined;
  }

  /** What the work tree's watches report, for those who would otherwise look at every directory (src/security/secret-values.ts). */
  treeChanges(): TreeChanges {
    return {
      watchOf: (rel) => this.tree?.watchOf(rel),
      takeChanged: () => {
        const changed = this.tree?.live ? this.changedDirs : undefined;
        this.changedDirs = new Set();
        return changed;
      },
    };
  }

  /**
   * Called for every event, so it does no I/O (a rename storm is tens of thousands
   * of events a second): the first event arms one timer, and the flush asks whether git is busy.
   */
  private note(kind: ChangeKind): void {
    if (this.status === 'closed') return;
    this.pending.add(kind);
    if (this.status === 'starting' || this.status === 'paused') return;
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, WATCH_DEBOUNCE_MS);
  }

  private schedulePausePoll(): void {
    clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      if (this.status === 'closed') return;
      if (this.gitBusy()) this.schedulePausePoll();
      else {
        this.status = 'ready';
        // git's operation changed HEAD or the index even if no event said so.
        this.pending.add('workspace');
        this.flush();
      }
    }, PAUSE_POLL_MS);
  }

  private flush(): void {
    if (this.pending.size === 0 || this.status === 'closed') return;
    if (this.gitBusy()) {
      this.status = 'paused';
      this.schedulePausePoll();
      return;
    }
    const kinds = new Set(this.pending);
    this.pending.clear();
    this.lastChange = { kinds: [...kinds], at: new Date().toISOString() };
    this.opts.onChange(kinds);
  }

  /** Paused, and nothing holds it back any more: what waited is reported now, not at the next poll. */
  private resumeIfIdle(): void {
    if (this.status === 'paused' && !this.gitBusy()) {
      clearTimeout(this.pauseTimer);
      this.status = 'ready';
      this.pending.add('workspace');
      this.flush();
    }
  }

  /** What git (or a running hook) is in the middle of, if anything. */
  gitBusy(): string | undefined {
    const hook = this.opts.hooks?.running();
    if (hook) return `hook ${hook}`;
    if (existsSync(join(this.opts.gitDir, 'index.lock'))) return 'index.lock';
    return gitOperation(this.opts.gitDir);
  }
}
