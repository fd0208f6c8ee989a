/**
 * File access relative to directory handles. A path the tools read or write is walked from
 * the repository root one component at a time, each opened with O_NOFOLLOW|O_DIRECTORY
 * through the handle of its parent (`/proc/self/fd/<fd>/<name>`, Linux's openat): a
 * directory swapped for a symbolic link between the check and the write makes the walk
 * fail instead of redirecting it. A write is atomic (temp file in the same directory,
 * fsync, rename) and lands in the directory the walk opened.
 *
 * Without /proc/self/fd (macOS), paths are resolved by name as before; confine.ts's
 * realpath check is then all there is (docs/guardrails.md says so).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { writeFileAtomicSync } from '../../storage/atomic.js';
import { ToolError } from './types.js';

const FD_DIR = '/proc/self/fd';
/** Whether this platform lets a path continue below a directory handle. */
export const HANDLES_SUPPORTED = process.platform === 'linux' && existsSync(FD_DIR);

const O_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function changed(rel: string, name: string, code: string | undefined): ToolError {
  return new ToolError(
    code === 'ELOOP' || code === 'ENOTDIR'
      ? `${rel}: "${name}" is a symbolic link or not a directory (it changed while the tool ran); nothing was written or read. Try again.`
      : `${rel}: cannot open "${name}" (${code ?? 'error'}).`,
  );
}

/** A set of open directory handles below one root; close() when done. */
export class DirHandles {
  private readonly fds = new Map<string, number>();

  constructor(readonly root: string) {}

  private at(fd: number, name: string): string {
    return `${FD_DIR}/${fd}/${name}`;
  }

  /** The handle of directory `relDir` ('' = the root), opened without following links; created when `create`. */
  dir(relDir: string, create = false): number {
    const hit = this.fds.get(relDir);
    if (hit !== undefined) return hit;
    let fd: number;
    if (relDir === '') fd = openSync(this.root, constants.O_RDONLY | constants.O_DIRECTORY);
    else {
      const cut = relDir.lastIndexOf('/');
      const parent = this.dir(cut < 0 ? '' : relDir.slice(0, cut), create);
      const name = relDir.slice(cut + 1);
      try {
        fd = openSync(this.at(parent, name), O_DIR);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' || !create) throw code === 'ENOENT' ? err : changed(relDir, name, code);
        mkdirSync(this.at(parent, name), { mode: 0o755 });
        fd = openSync(this.at(parent, name), O_DIR);
      }
    }
    this.fds.set(relDir, fd);
    return fd;
  }

  /** Where directory `relDir`'s handle points now: the walk must still be inside the root. */
  private checkInside(relDir: string, fd: number): void {
    const now = readlinkSync(`${FD_DIR}/${fd}`);
    const r = relative(this.root, now);
    if (r.startsWith('..') || isAbsolute(r)) throw new ToolError(`${relDir || '.'} was moved out of the repository while the tool ran; nothing was written.`);
  }

  private split(rel: string): { dir: string; name: string } {
    const cut = rel.lastIndexOf('/');
    return { dir: cut < 0 ? '' : rel.slice(0, cut), name: rel.slice(cut + 1) };
  }

  /** stat of `rel` itself (a link is not followed), or undefined when it does not exist. */
  lstat(rel: string): Stats | undefined {
    if (!HANDLES_SUPPORTED) {
      try {
        return lstatSync(join(this.root, rel));
      } catch {
        return undefined;
      }
    }
    const { dir, name } = this.split(rel);
    try {
      const fd = openSync(this.at(this.dir(dir), name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        return fstatSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw new ToolError(`${rel} is a symbolic link; the file tools do not follow it.`);
      throw err;
    }
  }

  /** The bytes of file `rel` (never through a symbolic link). */
  readFile(rel: string): Buffer {
    if (!HANDLES_SUPPORTED) return readFileSync(join(this.root, rel));
    const { dir, name } = this.split(rel);
    let fd: number;
    try {
      fd = openSync(this.at(this.dir(dir), name), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw code === 'ELOOP' ? new ToolError(`${rel} is a symbolic link; the file tools do not follow it.`) : err;
    }
    try {
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Writes `content` to `rel` atomically with `mode`, creating its directories. */
  writeFileAtomic(rel: string, content: string | Buffer, mode: number): void {
    if (!HANDLES_SUPPORTED) {
      mkdirSync(dirname(join(this.root, rel)), { recursive: true });
      writeFileAtomicSync(join(this.root, rel), content, mode);
      return;
    }
    const { dir, name } = this.split(rel);
    const fd = this.dir(dir, true);
    const tmp = `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const out = openSync(this.at(fd, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    try {
      writeSync(out, typeof content === 'string' ? Buffer.from(content) : content);
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    try {
      this.checkInside(dir, fd);
      renameSync(this.at(fd, tmp), this.at(fd, name));
    } catch (err) {
      try {
        unlinkSync(this.at(fd, tmp));
      } catch {
        // already gone
      }
      throw err;
    }
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

/** Runs `fn` with handles below `root`, closing them after. */
export function withHandles<T>(root: string, fn: (h: DirHandles) => T): T {
  const h = new DirHandles(root);
  try {
    return fn(h);
  } finally {
    h.close();
  }
}
