/**
 * What `hermesd init` changed on disk, file by file, so that `--uninstall` can give every file
 * back: the bytes and mode before (or that it did not exist), and a hash of what init wrote.
 * Kept in <git-dir>/hermesd/install.json with the rest of the install state.
 *
 * Undo rules (`undoChange`):
 * - a file as init left it: back to its bytes before, byte for byte (removed when init created
 *   it) — unless the repository has committed it exactly so: then it is the project's file
 *   and stays (a teammate's hooks must not vanish from everyone's history);
 * - a file changed since: only hermesd's marked block is taken out, your edits stay; a file
 *   init created that holds nothing else is removed (when untracked) or goes back to the
 *   committed version (when tracked), so no empty hook and no stub is left behind.
 */
import { sha256 } from '../text/hash.js';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { gitSyncBuffer } from '../git/run.js';

export type FileChange = {
  /** Relative to the work tree root, or absolute (files in the git dir). */
  path: string;
  /** base64 of the bytes before init, or null when the file did not exist. */
  before: string | null;
  beforeMode?: number;
  /** sha256 of what init left in the file. */
  after: string;
};

export function absPath(root: string, path: string): string {
  return isAbsolute(path) ? path : join(root, path);
}

/** Records and applies file writes for one install; a path is recorded once (its state before the first write). */
export class Changes {
  constructor(
    readonly root: string,
    readonly list: FileChange[],
  ) {}

  private record(path: string, key: string): FileChange {
    let c = this.list.find((x) => x.path === key);
    if (!c) {
      let before: string | null = null;
      let beforeMode: number | undefined;
      try {
        const st = lstatSync(path);
        if (st.isFile()) {
          before = readFileSync(path).toString('base64');
          beforeMode = st.mode & 0o777;
        }
      } catch {
        // did not exist
      }
      c = { path: key, before, ...(beforeMode !== undefined ? { beforeMode } : {}), after: '' };
      this.list.push(c);
    }
    return c;
  }

  /** Writes `text` to `path` (repo-relative or absolute) unless it already holds exactly that. */
  write(path: string, text: string, mode?: number): boolean {
    const abs = absPath(this.root, path);
    const key = isAbsolute(path) ? relKey(this.root, abs) : path;
    let current: string | undefined;
    try {
      current = readFileSync(abs, 'utf8');
    } catch {
      current = undefined;
    }
    const modeOk = mode === undefined || (existsSync(abs) && (lstatSync(abs).mode & 0o777) === mode);
    if (current === text && modeOk) {
      const known = this.list.find((x) => x.path === key);
      if (known) known.after = sha256(text);
      return false;
    }
    const c = this.record(abs, key);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text, mode !== undefined ? { mode } : undefined);
    if (mode !== undefined) chmodSync(abs, mode);
    c.after = sha256(text);
    return true;
  }

  /** Records `path` as it is before another program (a hook manager's installer) writes it; `settle` then notes what it wrote. */
  track(path: string): { settle: () => void } {
    const abs = absPath(this.root, path);
    const key = isAbsolute(path) ? relKey(this.root, abs) : path;
    const known = this.list.find((x) => x.path === key);
    const c = known ?? this.record(abs, key);
    return {
      settle: () => {
        try {
          c.after = sha256(readFileSync(abs));
        } catch {
          c.after = '';
        }
        // Nothing changed after all: nothing to give back.
        if (!known && c.before !== null && sha256(Buffer.from(c.before, 'base64')) === c.after) this.list.splice(this.list.indexOf(c), 1);
        if (!known && c.before === null && c.after === '') this.list.splice(this.list.indexOf(c), 1);
      },
    };
  }
}

/** Paths inside the work tree are kept relative (the work tree may move); others absolute. */
function relKey(root: string, abs: string): string {
  const r = relative(root, abs);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : abs;
}

export type UndoOutcome = 'restored' | 'removed' | 'unblocked' | 'kept-committed' | 'kept-edited' | 'unchanged';

/** The committed version of a work-tree path (HEAD), or undefined when HEAD does not have it. */
export function committedBytes(root: string, path: string): Buffer | undefined {
  if (isAbsolute(path)) return undefined;
  try {
    return gitSyncBuffer(['cat-file', 'blob', `HEAD:${path}`], { cwd: root });
  } catch {
    return undefined;
  }
}

/**
 * Gives one file back (see the module comment). `strip` takes hermesd's marked block(s) out of
 * a file's text (undefined: there was none).
 */
export function undoChange(root: string, c: FileChange, strip: (text: string) => string | undefined): UndoOutcome {
  const abs = absPath(root, c.path);
  let current: Buffer | undefined;
  try {
    current = readFileSync(abs);
  } catch {
    current = undefined;
  }
  const committed = committedBytes(root, c.path);
  const asInitLeftIt = current !== undefined ? sha256(current) === c.after : c.after === '';
  if (asInitLeftIt) {
    // Committed with hermesd's part in it: the project's file now (a teammate's clone has it too). Leave it.
    const before = c.before === null ? undefined : Buffer.from(c.before, 'base64');
    if (current !== undefined && committed !== undefined && committed.equals(current) && !(before && before.equals(current))) return 'kept-committed';
    return putBack(abs, c);
  }
  if (current === undefined) return 'unchanged';
  const stripped = strip(current.toString('utf8'));
  if (stripped === undefined) return 'kept-edited';
  if (isEmptyHook(stripped) && c.before === null) {
    if (committed !== undefined) {
      writeFileSync(abs, committed);
      return 'restored';
    }
    rmSync(abs, { force: true });
    return 'removed';
  }
  writeFileSync(abs, stripped);
  return 'unblocked';
}

function putBack(abs: string, c: FileChange): UndoOutcome {
  if (c.before === null) {
    rmSync(abs, { force: true });
    return 'removed';
  }
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, Buffer.from(c.before, 'base64'));
  if (c.beforeMode !== undefined) chmodSync(abs, c.beforeMode);
  return 'restored';
}

/** Nothing but a shebang, comments and blank lines. */
export function isEmptyHook(text: string): boolean {
  return text.split('\n').every((l) => l.trim() === '' || l.trim().startsWith('#'));
}
