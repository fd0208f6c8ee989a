/**
 * Never lose work: before a hook touches the work tree, the full state — the index file's
 * bytes, every tracked path whose work-tree content differs from the index (modified,
 * deleted, type-changed; renames are a deletion plus an addition), and every untracked,
 * not-ignored file — is copied to `<git-dir>/hermesd/backups/<id>/`, and put back exactly
 * afterwards. Never `refs/stash`, which all worktrees share and which a user's own
 * `git stash` would mix with ours.
 *
 * Crash safety comes from ordering: a backup is written to a temp dir and renamed into place
 * before anything is touched, and removed only after the restore finished. A backup dir that
 * exists and whose owner process is gone is therefore an interrupted hook: `pendingBackups`
 * finds it and `restoreWorkState` puts it back (after saving the current state as another
 * backup, so even the recovery can be undone).
 *
 * Nothing found in the work tree is deleted on restore: content that is neither what the
 * user had nor something the caller saved elsewhere (a fix) is moved to
 * `<git-dir>/hermesd/displaced/<id>/` and reported.
 */
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pidAlive, withLockSync } from '../storage/lock.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { splitZ } from '../git/parse.js';
import { gitSync, gitTry } from '../git/run.js';
import { backupsDir, displacedDirOf, keptBackupDir, restoreLockPath, runtimeDirOf } from '../paths/index.js';
import { randomHex } from '../text/hash.js';
import { byCodeUnit } from '../text/order.js';

export type Entry =
  | { path: string; kind: 'file'; mode: number; blob: string; size: number }
  | { path: string; kind: 'symlink'; target: string }
  | { path: string; kind: 'dir' }
  | { path: string; kind: 'absent' };

export type Manifest = {
  version: 1;
  id: string;
  createdAt: string;
  /** The process that made the backup; when it is gone and the backup is still here, the hook was interrupted. */
  pid: number;
  /** The git command whose hook made it (src/githooks/attempt.ts): that hook restores it itself if the daemon dies. */
  attempt?: string;
  reason: string;
  root: string;
  /** The index the hook worked with (GIT_INDEX_FILE: .git/index, or git's lock file during `commit -a`). */
  indexFile: string;
  /** True when indexFile is the repository's own index (then a recovery restores it too). */
  mainIndex: boolean;
  hasIndex: boolean;
  /** Tracked paths whose work-tree state differed from the index. */
  dirty: Entry[];
  /** Untracked, not ignored paths. */
  untracked: Entry[];
};

export type WorkState = Manifest & { dir: string };

export type RestoreResult = {
  id: string;
  /** Paths written back to what the user had. */
  restored: string[];
  /** Where content found in the work tree that the user did not have was moved, if any. */
  displacedDir?: string;
  displaced: string[];
};

function newId(): string {
  const t = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${process.pid}-${randomHex(3)}`;
}

/**
 * Paths whose work-tree state differs from `indexFile`, and untracked files, as git sees them.
 * Plumbing only (porcelain `git diff` rewrites the index it reads, and the index must stay
 * byte-identical); the stat refresh that plumbing needs runs on a scratch copy.
 */
function changedPaths(root: string, indexFile: string, scratchDir: string): { dirty: string[]; untracked: string[] } {
  const scratch = join(scratchDir, `refresh-index-${process.pid}-${randomHex(3)}`);
  try {
    copyFileSync(indexFile, scratch);
    const opts = { cwd: root, indexFile: scratch };
    gitTry(['update-index', '-q', '--refresh', '--ignore-submodules'], opts);
    const dirty = splitZ(gitSync(['diff-files', '--name-only', '-z', '--ignore-submodules=all'], opts));
    const untracked = splitZ(gitSync(['ls-files', '--others', '--exclude-standard', '-z'], opts)).filter((p) => !p.endsWith('/'));
    return { dirty, untracked };
  } finally {
    rmSync(scratch, { force: true });
    rmSync(`${scratch}.lock`, { force: true });
  }
}

function capture(root: string, dir: string, path: string, n: number): Entry {
  const full = join(root, path);
  let st;
  try {
    st = lstatSync(full);
  } catch {
    return { path, kind: 'absent' };
  }
  if (st.isSymbolicLink()) return { path, kind: 'symlink', target: readlinkSync(full) };
  if (st.isDirectory()) return { path, kind: 'dir' };
  const blob = `files/${n}`;
  copyFileSync(full, join(dir, blob));
  return { path, kind: 'file', mode: st.mode & 0o777, blob, size: st.size };
}

/**
 * Saves the full state of the work tree and `indexFile` under <git-dir>/hermesd/backups/<id>/.
 * Returns only once the backup is complete and in place; nothing is touched before that.
 */
export function saveWorkState(opts: { root: string; gitDir: string; indexFile?: string; reason: string; attempt?: string }): WorkState {
  const mainIndexFile = join(opts.gitDir, 'index');
  const indexFile = opts.indexFile ?? mainIndexFile;
  const id = newId();
  const base = backupsDir(opts.gitDir);
  const tmp = join(base, `.tmp-${id}`);
  mkdirSync(join(tmp, 'files'), { recursive: true, mode: 0o700 });
  const hasIndex = existsSync(indexFile);
  if (hasIndex) copyFileSync(indexFile, join(tmp, 'index'));
  const { dirty, untracked } = hasIndex ? changedPaths(opts.root, indexFile, tmp) : { dirty: [], untracked: [] };
  let n = 0;
  const manifest: Manifest = {
    version: 1,
    id,
    createdAt: new Date().toISOString(),
    pid: process.pid,
    ...(opts.attempt ? { attempt: opts.attempt } : {}),
    reason: opts.reason,
    root: opts.root,
    indexFile,
    mainIndex: indexFile === mainIndexFile,
    hasIndex,
    dirty: dirty.map((p) => capture(opts.root, tmp, p, n++)),
    untracked: untracked.map((p) => capture(opts.root, tmp, p, n++)),
  };
  writeFileAtomicSync(join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
  const dir = join(base, id);
  renameSync(tmp, dir);
  return { ...manifest, dir };
}

/** Makes every tracked path match the index (the staged snapshot); untracked files stay. */
export function checkoutIndex(state: WorkState): void {
  const paths = state.dirty.map((e) => e.path);
  if (paths.length === 0) return;
  for (const e of state.dirty) {
    // A tracked file replaced by a directory: the directory's files are saved as untracked.
    if (e.kind === 'dir') rmSync(join(state.root, e.path), { recursive: true, force: true });
  }
  gitSync(['checkout-index', '-f', '-z', '--stdin'], { cwd: state.root, indexFile: savedIndexFile(state), input: paths.join('\0') + '\0' });
}

/** The saved copy of the index: the reference for "what the staged snapshot was" (read-only use). */
export function savedIndexFile(state: WorkState): string {
  return join(state.dir, 'index');
}

function sameAsEntry(root: string, dir: string, e: Entry): boolean {
  const full = join(root, e.path);
  let st;
  try {
    st = lstatSync(full);
  } catch {
    return e.kind === 'absent';
  }
  switch (e.kind) {
    case 'absent':
      return false;
    case 'dir':
      return st.isDirectory();
    case 'symlink':
      return st.isSymbolicLink() && readlinkSync(full) === e.target;
    case 'file':
      return st.isFile() && st.size === e.size && (st.mode & 0o777) === e.mode && readFileSync(full).equals(readFileSync(join(dir, e.blob)));
  }
}

/**
 * Moves whatever is at `path` into the displaced folder (never deletes it). A directory is
 * moved whole: the user had no directory there (or `keepDir` would be set), so everything in
 * it was made while the hook ran.
 */
function displace(root: string, displacedDir: string, path: string, keepDir = false): boolean {
  const full = join(root, path);
  let st;
  try {
    st = lstatSync(full);
  } catch {
    return false;
  }
  if (st.isDirectory() && keepDir) return false;
  const to = join(displacedDir, path);
  mkdirSync(dirname(to), { recursive: true });
  rmSync(to, { force: true, recursive: true });
  renameSync(full, to);
  return true;
}

function ensureParent(root: string, path: string): void {
  const parent = dirname(join(root, path));
  // A file where a directory must be (the hook replaced a directory by a file) is moved aside by the caller.
  mkdirSync(parent, { recursive: true });
}

function writeEntry(root: string, dir: string, e: Entry): void {
  const full = join(root, e.path);
  switch (e.kind) {
    case 'absent':
      return;
    case 'dir':
      mkdirSync(full, { recursive: true });
      return;
    case 'symlink':
      ensureParent(root, e.path);
      symlinkSync(e.target, full);
      return;
    case 'file': {
      ensureParent(root, e.path);
      // Same directory, then rename: a crash leaves the old or the new file, never half of one.
      const tmp = join(dirname(full), `.hermesd-restore-${process.pid}-${randomHex(3)}`);
      copyFileSync(join(dir, e.blob), tmp);
      chmodSync(tmp, e.mode);
      renameSync(tmp, full);
      return;
    }
  }
}

/** Parent directories of `path` that are not directories in the work tree (files in the way). */
function blockersOf(root: string, path: string): string[] {
  const out: string[] = [];
  let p = dirname(path);
  while (p !== '.' && p !== '/' && p !== '') {
    try {
      if (!lstatSync(join(root, p)).isDirectory()) out.push(p);
    } catch {
      // missing parents are created
    }
    p = dirname(p);
  }
  return out;
}

/**
 * Puts the work tree and (when `restoreIndex`) the index back exactly as saved. `known` are
 * paths whose current content the caller has saved elsewhere (a fix): they are not displaced.
 * Idempotent: running it again after an interruption finishes the job.
 */
export function restoreWorkState(state: WorkState, opts: { restoreIndex?: boolean; known?: ReadonlySet<string> } = {}): RestoreResult {
  const { root, dir } = state;
  const known = opts.known ?? new Set<string>();
  const displacedDir = join(dir, 'displaced');
  const displaced: string[] = [];
  const restored: string[] = [];
  const saved = new Map<string, Entry>();
  for (const e of [...state.dirty, ...state.untracked]) saved.set(e.path, e);

  // What differs now from the saved snapshot (the index copy is the reference).
  const now = state.hasIndex ? changedPaths(root, savedIndexFile(state), dir) : { dirty: [], untracked: [] };
  const tracked = new Set([...state.dirty.map((e) => e.path), ...now.dirty]);
  const nowDirty = new Set(now.dirty);
  const all = new Set([...saved.keys(), ...now.dirty]);

  const toCheckout: string[] = [];
  // Shallowest first: a directory in the way of a file goes (whole) before the file is written.
  for (const path of [...all].sort((a, b) => a.length - b.length || byCodeUnit(a, b))) {
    const want = saved.get(path);
    if (want && sameAsEntry(root, dir, want)) continue;
    for (const blocker of blockersOf(root, path)) {
      if (displace(root, displacedDir, blocker) && !known.has(blocker)) displaced.push(blocker);
    }
    // A tracked path git sees as clean holds the index version we checked out: not the user's, not foreign.
    const atIndexVersion = tracked.has(path) && !nowDirty.has(path);
    const moved = displace(root, displacedDir, path, want?.kind === 'dir');
    if (moved && !known.has(path) && !atIndexVersion) displaced.push(path);
    if (want) {
      writeEntry(root, dir, want);
      restored.push(path);
    } else if (tracked.has(path)) {
      toCheckout.push(path);
      restored.push(path);
    }
  }
  if (toCheckout.length > 0) {
    gitSync(['checkout-index', '-f', '-z', '--stdin'], { cwd: root, indexFile: savedIndexFile(state), input: toCheckout.join('\0') + '\0' });
  }
  // Which files are "untracked, not ignored" depends on the .gitignore files just restored:
  // a hook that changed one must not make the user's ignored files look new.
  if (state.hasIndex) {
    const again = changedPaths(root, savedIndexFile(state), dir).untracked.filter((p) => !saved.has(p));
    for (const path of again) {
      if (displace(root, displacedDir, path) && !known.has(path)) displaced.push(path);
    }
  }
  if (opts.restoreIndex !== false && state.hasIndex && (opts.restoreIndex || state.mainIndex)) {
    const tmp = `${state.indexFile}.hermesd-${process.pid}`;
    copyFileSync(savedIndexFile(state), tmp);
    renameSync(tmp, state.indexFile);
  }
  let kept: string | undefined;
  if (displaced.length > 0) {
    kept = displacedDirOf(gitDirOfBackup(dir), state.id);
    mkdirSync(dirname(kept), { recursive: true });
    rmSync(kept, { recursive: true, force: true });
    renameSync(displacedDir, kept);
  }
  return { id: state.id, restored: restored.sort(), displaced: displaced.sort(), displacedDir: kept };
}

/** Removes a backup whose state is back in place: the hook is over. */
export function finishWorkState(state: WorkState): void {
  // Rename first: a kill in the middle of the removal must not leave a half-deleted backup
  // that looks like an interrupted hook.
  const done = join(dirname(state.dir), `.done-${basename(state.dir)}`);
  try {
    renameSync(state.dir, done);
  } catch {
    return;
  }
  rmSync(done, { recursive: true, force: true });
}

export function gitDirOfBackup(dir: string): string {
  // <git-dir>/hermesd/backups/<id>
  return dirname(dirname(dirname(dir)));
}

export function readWorkState(dir: string): WorkState | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    return { ...m, dir };
  } catch {
    return undefined;
  }
}

/** Backups whose hook is no longer running: interrupted (Ctrl-C of a daemon, kill -9, power loss). */
export function pendingBackups(gitDir: string): WorkState[] {
  return pendingBackupsIn(backupsDir(gitDir));
}

/** The same, given the backups' folder (`backupsDir`): for a caller that keeps it. */
export function pendingBackupsIn(base: string): WorkState[] {
  // Read on every status answer: usually there is no backups folder, and an ENOENT error costs more than the check.
  if (!existsSync(base)) return [];
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const out: WorkState[] = [];
  // Leftovers another reader may be removing at the same moment (its rm and ours race): best effort.
  const drop = (dir: string) => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // removed (or being removed) by another reader; the next look finishes it
    }
  };
  for (const name of names.sort()) {
    const dir = join(base, name);
    if (name.startsWith('.done-')) {
      drop(dir);
      continue;
    }
    if (name.startsWith('.tmp-')) {
      // Never completed, so nothing was touched after it: safe to drop once its writer is gone.
      const pid = Number(name.split('-')[2]);
      if (!pidAlive(pid)) drop(dir);
      continue;
    }
    const state = readWorkState(dir);
    if (!state) continue;
    // Ours or another live process's: a hook still running, not an interrupted one.
    if (state.pid === process.pid || pidAlive(state.pid)) continue;
    out.push(state);
  }
  return out;
}

/**
 * Restores an interrupted hook's backup. The current state is saved first as a new backup
 * (reported as `safetyId`), so a recovery over newer work can itself be undone.
 */
export function recoverBackup(gitDir: string, id: string): RestoreResult & { safetyId: string } {
  // The hook whose daemon died, a new daemon and `hermesd hook restore` may all reach for the
  // same backup: one at a time, and the later ones find it gone.
  mkdirSync(runtimeDirOf(gitDir), { recursive: true, mode: 0o700 });
  return withLockSync(
    restoreLockPath(gitDir),
    () => {
      const state = readWorkState(join(backupsDir(gitDir), id)) ?? readWorkState(keptBackupDir(gitDir, id));
      if (!state) throw new BackupGone(`No backup ${id} under ${backupsDir(gitDir)} or ${join(runtimeDirOf(gitDir), 'kept')} (restored already?).`);
      const safety = saveWorkState({ root: state.root, gitDir, indexFile: state.mainIndex ? state.indexFile : undefined, reason: `before restoring ${id}` });
      // The safety backup is not an interrupted hook: mark it as kept, not pending.
      const keptDir = keptBackupDir(gitDir, safety.id);
      mkdirSync(dirname(keptDir), { recursive: true });
      renameSync(safety.dir, keptDir);
      const result = restoreWorkState(state, { restoreIndex: state.mainIndex });
      finishWorkState(state);
      return { ...result, safetyId: safety.id };
    },
    RESTORE_LOCK_WAIT_MS,
  );
}

/** A restore of a big work tree takes seconds; another restorer waits that long for it. */
const RESTORE_LOCK_WAIT_MS = 60_000;

/** The backup asked for is not there (never was, or another process restored it first). */
export class BackupGone extends Error {
  override readonly name = 'BackupGone';
}

/** One line a person can act on, for the notice printed by the next hermesd command. */
export function pendingNotice(states: WorkState[]): string {
  if (states.length === 0) return '';
  const ids = states.map((s) => s.id);
  return (
    `hermesd: an interrupted hook left ${states.length === 1 ? 'a backup' : `${states.length} backups`} of your work tree and index (${ids.join(', ')}) ` +
    `in ${backupsDir(gitDirOfBackup(states[0]!.dir))}. Restore with: hermesd hook restore${states.length === 1 ? '' : ' <id>'} (lists them: hermesd hook backups)`
  );
}

/**
 * Paths whose current state differs from the snapshot the hook worked on (the staged
 * snapshot plus the user's untracked files): what a check or a fix changed.
 */
export function changedSinceSave(state: WorkState): string[] {
  const saved = new Map(state.untracked.map((e) => [e.path, e] as const));
  const now = changedPaths(state.root, savedIndexFile(state), state.dir);
  const out = new Set(now.dirty);
  for (const p of now.untracked) {
    const e = saved.get(p);
    if (!e || !sameAsEntry(state.root, state.dir, e)) out.add(p);
  }
  for (const [p, e] of saved) if (!now.untracked.includes(p) && e.kind !== 'absent' && !sameAsEntry(state.root, state.dir, e)) out.add(p);
  return [...out].sort();
}

/** True when the user had their own (unstaged or untracked) version of `path` when the state was saved. */
export function userHadChanges(state: WorkState, path: string): boolean {
  return state.dirty.some((e) => e.path === path) || state.untracked.some((e) => e.path === path);
}
