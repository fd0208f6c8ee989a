/**
 * The folders the daemon's runtime needs (the socket dir, $HERMES_HOME): made one level at a
 * time, proven writable, and when they cannot be used, why, in words.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * `mkdir -p`, each missing folder made once, from the top: at most one mkdir per missing level.
 * Node's own recursive mkdir (20.x) retries for ever where a folder exists but takes no new one
 * (ENOENT from mkdir under /proc, whose parent answers EEXIST): a process spinning at 100% CPU.
 */
export function makeDirs(dir: string, mode = 0o700): void {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    const st = statIfAny(at, statSync);
    if (st) {
      if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: at });
      break;
    }
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at, { mode });
    } catch (err) {
      // Made by another process meanwhile: as good as made here.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(at, { throwIfNoEntry: false })?.isDirectory()) throw err;
    }
  }
}

/** The file's stat, undefined where there is none (a file in the path above it: ENOTDIR, as good as none). */
function statIfAny(path: string, how: typeof statSync | typeof lstatSync) {
  try {
    return how(path, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/**
 * Proves an entry can be made in `dir` by making one: access(W_OK) says yes to root in a folder
 * that takes nothing (/proc); the kernel's answer to a mkdir does not. A full disk passes: the
 * folder is right, and what needs no space (a socket, a verdict) still works there.
 */
function proveWritable(dir: string): void {
  try {
    rmdirSync(mkdtempSync(join(dir, '.hermesd-probe-')));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw err;
  }
}

/** Makes `dir` (and what is missing above it) and proves an entry can be made in it; throws the file system's error. */
export function makeWritableDir(dir: string, mode = 0o700): void {
  makeDirs(dir, mode);
  proveWritable(dir);
}

/** Why `dir` could not be used, in words, from the error makeDirs, makeWritableDir or a chmod threw. */
export function dirProblem(dir: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code;
  if (code === 'ELINK' || code === 'EOWNER') return e.message;
  // The nearest part of the path that exists, and what it is.
  let at = resolve(dir);
  while (dirname(at) !== at && !statIfAny(at, lstatSync)) at = dirname(at);
  const st = statIfAny(at, lstatSync);
  if (st?.isSymbolicLink() && !statIfAny(at, statSync)) {
    let target = '?';
    try {
      target = readlinkSync(at);
    } catch {
      // gone meanwhile
    }
    return `${at} is a symbolic link to ${target}, which does not exist`;
  }
  if (code === 'ENOTDIR' || code === 'EEXIST' || (st && !statIfAny(at, statSync)?.isDirectory())) return `${at} is a file, not a folder`;
  if (code === 'EROFS') return `${at} is on a read-only file system`;
  if (code === 'EACCES' || code === 'EPERM') return at === resolve(dir) ? `you may not write in it (${code})` : `you may not make folders in ${at} (${code})`;
  // mkdir's ENOENT with the folder above there: a file system that takes no new folders.
  if (code === 'ENOENT') return `${at} takes no new folders (ENOENT: a virtual file system such as /proc or /sys)`;
  return e instanceof Error ? e.message : String(err);
}

/**
 * Makes the socket directory private (0700) and proves a socket can be made in it, refusing a
 * symbolic link and a directory someone else owns. Throws an error dirProblem puts in words.
 */
export function prepareSocketDir(dir: string): void {
  makeDirs(dir, 0o700);
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is a symbolic link; the socket folder must be a folder itself`), { code: 'ELINK' });
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw Object.assign(new Error(`it belongs to another user (uid ${st.uid})`), { code: 'EOWNER' });
  }
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  proveWritable(dir);
}
