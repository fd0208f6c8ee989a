/**
 * Where the doorbell's files live (src/server/doorbell.ts). `<git-dir>/hermesd/bell`, the path
 * the hooks know, is a link to a private folder on a tmpfs when there is one: the socket dir
 * when it is a tmpfs (`$XDG_RUNTIME_DIR` on most desktops), else /dev/shm/hermesd-<uid>.
 * Creating a file on a disk file system is a journal transaction, and every question creates
 * two (on this project's ext4 VM ~0.8 ms of kernel CPU each; 5 µs on tmpfs). Without a tmpfs,
 * or where the folder there is someone else's, the folder is in the git dir itself.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { procStat } from '../githooks/attempt.js';
import { bellDir, type RepoPaths } from '../paths/index.js';
import { prepareSocketDir } from '../storage/private-dir.js';

/** A folder without a daemon file this old is no daemon's (one that is starting writes it within a second). */
const STALE_MS = 60_000;

/** statfs's f_type of a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

function onTmpfs(dir: string): boolean {
  try {
    return statfsSync(dir).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/** Where this daemon's bell files live: a private folder on a tmpfs, or undefined (there is none: `<git-dir>/hermesd/bell` itself). */
function tmpfsHome(paths: RepoPaths): string | undefined {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  for (const base of [paths.socketDir, `/dev/shm/hermesd-${uid}`]) {
    try {
      prepareSocketDir(base);
    } catch {
      continue; // someone else's, or not creatable: the next place
    }
    if (!onTmpfs(base)) continue;
    const home = join(base, `${basename(paths.socket).replace(/\.sock$/, '')}.bell`);
    pruneStale(base, home);
    return home;
  }
  return undefined;
}

/** Bell folders in `base` whose daemon is gone (killed, so it could not remove its own); at most a few hundred per start. */
function pruneStale(base: string, own: string): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.endsWith('.bell')).slice(0, 500);
  } catch {
    return;
  }
  for (const name of names) {
    const folder = join(base, name);
    if (folder === own) continue;
    try {
      const [pid, start] = readFileSync(join(folder, 'daemon'), 'utf8').split(' ');
      if (procStat(Number(pid))?.start === Number(start)) continue;
    } catch {
      // no daemon file: a daemon starting this moment, or one long gone
      try {
        if (Date.now() - statSync(folder).mtimeMs < STALE_MS) continue;
      } catch {
        continue;
      }
    }
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Makes `<git-dir>/hermesd/bell` lead to the folder the files live in and returns that folder:
 * a link to the tmpfs folder, or the folder itself. Files a previous daemon left in the old
 * place (questions that want no answer) are carried over.
 */
export function placeBell(paths: RepoPaths): string {
  const link = bellDir(paths.gitDir);
  const home = tmpfsHome(paths);
  let old: ReturnType<typeof lstatSync> | undefined;
  try {
    old = lstatSync(link);
  } catch {
    // nothing there yet
  }
  if (!home) {
    if (old?.isSymbolicLink()) unlinkSync(link);
    // Not recursive: a work tree deleted meanwhile must stay deleted (the daemon then stops).
    if (!old || old.isSymbolicLink()) mkdirSync(link, { mode: 0o700 });
    return link;
  }
  if (!existsSync(home)) mkdirSync(home, { mode: 0o700 });
  if (old?.isDirectory()) {
    for (const name of readdirSync(link)) {
      try {
        writeFileSync(join(home, name), readFileSync(join(link, name)), { mode: 0o600 });
      } catch {
        // a folder or an unreadable leftover: not a question
      }
    }
    rmSync(link, { recursive: true, force: true });
  } else if (old) {
    unlinkSync(link);
  }
  symlinkSync(home, link);
  return home;
}
