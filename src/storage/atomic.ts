import { renameSync, rmSync, writeFileSync } from 'node:fs';
import writeFileAtomic from 'write-file-atomic';

/**
 * Writes a file so that readers see either the old or the new content, never a torn one:
 * temp file in the same directory, fsync, rename (write-file-atomic does exactly this).
 */
export function writeFileAtomicSync(path: string, data: string | Buffer, mode = 0o600): void {
  writeFileAtomic.sync(path, data, { mode, fsync: true });
}

/**
 * A runtime file the daemon rewrites whenever it starts (daemon.json, the runners' settings):
 * readers see the old or the new content, never a torn one (temp file, rename), but nothing
 * waits for the disk — after a crash the next daemon writes it again, so an fsync would only
 * delay the first verdict of a cold daemon.
 */
export function writeRuntimeFileSync(path: string, data: string | Buffer, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data, { mode });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
