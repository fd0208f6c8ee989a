/**
 * A file's identity for "changed since": inode, size, modification and change times, so any
 * write changes it (a rename over it, a write in place, a touch); `-` when there is no file or
 * it cannot be read. No exception for a missing file: callers ask on hot paths, and an ENOENT
 * error costs more than the stat.
 */
import { statSync } from 'node:fs';

export function fileStamp(file: string): string {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : '-';
  } catch {
    return '-';
  }
}
