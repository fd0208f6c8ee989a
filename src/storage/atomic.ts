/**
 * hermesd's one atomic writer: readers see either the old or the new content, never a torn
 * one. The data goes to a temporary file beside the target (same directory, so the rename is
 * atomic), which then replaces the target; a path through a symbolic link writes the file the
 * link names, as an editor would. Durable files (memory, config, proposals) are fsynced before
 * the rename; runtime files the daemon writes again whenever it starts (daemon.json, the
 * runners' settings, caches) are not — after a crash the next daemon rewrites them, and an
 * fsync would only delay a cold daemon's first verdict.
 *
 * The one other writer that renames a temporary file into place is the write tool's
 * (agent/tools/handles.ts): it writes relative to an open directory handle, so a directory
 * swapped for a symbolic link mid-write cannot move the file out of the work tree.
 */
import { closeSync, fchmodSync, fchownSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

let written = 0;

/** The target through its symbolic links (a file that does not exist yet is written where named). */
function target(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A temporary file's name beside `file`: `<file>.<digits>` (this process's id and a counter). */
function tempOf(file: string): string {
  return `${file}.${process.pid}${String(++written).padStart(6, '0')}`;
}

/** Whether `name` (in the same directory) is a temporary file of `fileName` this writer made: one a writer killed before its rename leaves. */
export function isTempOf(fileName: string, name: string): boolean {
  return name.startsWith(`${fileName}.`) && /^\d+$/.test(name.slice(fileName.length + 1));
}

function writeThenRename(path: string, data: string | Buffer, mode: number, durable: boolean): void {
  const file = target(path);
  const tmp = tempOf(file);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
      fchmodSync(fd, mode);
      keepOwner(fd, file);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Root rewriting a user's file leaves it the user's. */
function keepOwner(fd: number, file: string): void {
  if (process.getuid?.() !== 0) return;
  try {
    const st = statSync(file);
    fchownSync(fd, st.uid, st.gid);
  } catch {
    // a new file is the writer's
  }
}

/** A durable file: on disk (fsync) before it replaces the old one. */
export function writeFileAtomicSync(path: string, data: string | Buffer, mode = 0o600): void {
  writeThenRename(path, data, mode, true);
}

/** A runtime file or a cache: atomic, not waited for on disk. */
export function writeRuntimeFileSync(path: string, data: string | Buffer, mode = 0o600): void {
  writeThenRename(path, data, mode, false);
}
