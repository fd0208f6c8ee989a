/** hermesd's one "read this file if it is there": a file that cannot be read is undefined, never an exception. */
import { readFileSync } from 'node:fs';

/** The file's text (UTF-8), or undefined when it cannot be read (missing, a directory, no permission). */
export function readTextIfAny(path: string): string | undefined {
  try {
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
