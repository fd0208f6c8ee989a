/** The private folders of the daemon's runtime: the socket dir, and the doorbell's folder on a tmpfs. */
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { ConfigError } from '../errors/index.js';

/** Makes the socket directory private (0700), refusing a directory someone else owns. */
export function prepareSocketDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new ConfigError(`Socket directory ${dir} is not a directory. Set HERMESD_SOCKET_DIR to a private directory.`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new ConfigError(`Socket directory ${dir} belongs to another user (uid ${st.uid}). Set HERMESD_SOCKET_DIR to a directory you own.`);
  }
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}
