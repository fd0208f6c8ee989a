/** hermesd's one "read this file if it is there": a file that cannot be read is undefined, never an exception. */
import { readFileSync, statSync } from 'node:fs';

/**
 * The file's text (UTF-8), or undefined when it cannot be read (missing, a directory, no
 * permission). With `maxBytes`, also undefined for anything but a regular file of at most that
 * size: a file another program keeps (git's) may be a FIFO, whose read would wait for a writer.
 */
export function readTextIfAny(path: string, opts: { maxBytes?: number } = {}): string | undefined {
  try {
    if (opts.maxBytes !== undefined) {
      const st = statSync(path);
      if (!st.isFile() || st.size > opts.maxBytes) return undefined;
    }
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The file's bytes, or undefined when it cannot be read. */
export function readBytesIfAny(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
