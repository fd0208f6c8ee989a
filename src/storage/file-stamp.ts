/**
 * A file's identity for "changed since": inode, size, modification and change times, so any
 * write changes it (a rename over it, a write in place, a touch); `-` when there is no file or
 * it cannot be read. No exception for a missing file: callers ask on hot paths, and an ENOENT
 * error costs more than the stat.
 */
import { statSync } from 'node:fs';

export function fileStamp(file: string): string {
  return stampOf(file)?.stamp ?? '-';
}

/**
 * The stamp, and when the file last changed (the later of its modification and change times,
 * ms): a caller that keeps what it read by stamp can tell a stamp too recent to trust (two
 * writes within one tick of the file system's clock leave one stamp). Undefined: no file.
 */
export function stampOf(file: string): { stamp: string; changedMs: number } | undefined {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st ? { stamp: `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`, changedMs: Math.max(st.mtimeMs, st.ctimeMs) } : undefined;
  } catch {
    return undefined;
  }
}
