import writeFileAtomic from 'write-file-atomic';

/**
 * Writes a file so that readers see either the old or the new content, never a torn one:
 * temp file in the same directory, fsync, rename (write-file-atomic does exactly this).
 */
export function writeFileAtomicSync(path: string, data: string | Buffer, mode = 0o600): void {
  writeFileAtomic.sync(path, data, { mode, fsync: true });
}
