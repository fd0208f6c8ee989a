/**
 * The real git binary: resolved once by absolute path, never through a PATH that the
 * agent's shim directory sits on. The guard runs every git of its own with it (run.ts
 * `runGit`), so a command that put a fake git on PATH cannot answer the guard's questions.
 */
import { accessSync, closeSync, constants, openSync, readSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Marker line every shim script carries, so a shim is never mistaken for the real git. */
export const SHIM_MARKER = 'hermesd-guard-git-shim';

/**
 * The first executable `git` on PATH that is not a hermesd shim, as an absolute real path.
 * Captured at daemon start so later PATH changes (the shim dir) cannot redirect it.
 */
export function findRealGit(env: NodeJS.ProcessEnv = process.env): string {
  const dirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, 'git');
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (isShim(real)) continue;
      return real;
    } catch {
      // not here
    }
  }
  return 'git';
}

function isShim(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('latin1').includes(SHIM_MARKER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
