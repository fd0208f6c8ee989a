/**
 * Counts the inotify watches a process holds, from /proc/<pid>/fdinfo (Linux): the number
 * the kernel charges against fs.inotify.max_user_watches, not what a library thinks it has.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export function inotifyWatchCount(pid: number | 'self' = 'self'): number | undefined {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  let count = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
      for (const line of info.split('\n')) if (line.startsWith('inotify wd:')) count++;
    } catch {
      // fd closed meanwhile
    }
  }
  return count;
}
