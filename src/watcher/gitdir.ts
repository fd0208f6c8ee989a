/**
 * The git dir's watch: two plain inotify watches, on the git dir and on its `logs` folder,
 * reporting each entry's name as the kernel gives it. chokidar re-read a watched directory on
 * every entry created in it (a readdir and an lstat per entry), and git creates, renames and
 * removes a dozen entries in the git dir during each commit (index.lock, HEAD.lock,
 * COMMIT_EDITMSG, ORIG_HEAD…): the daemon's CPU spent on each commit while git works.
 * Which names matter is the caller's to decide (RepoWatcher's classify). `$HERMES_HOME` is
 * watched the same way (`watchNames`), for the same reason: SessionDB's files sit there, and
 * every record writes them.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/**
 * One inotify watch on `dir`, reporting each entry's path as the kernel names it: no re-read of
 * the folder, whatever changes in it. Throws when `dir` cannot be watched.
 */
export function watchNames(dir: string, onPath: (path: string) => void, onError: (err: unknown) => void): FSWatcher {
  const w = watch(dir, { persistent: false }, (_event, name) => {
    if (name) onPath(join(dir, name.toString()));
  });
  w.on('error', onError);
  return w;
}

export class GitDirWatch {
  private dir: FSWatcher | undefined;
  private logs: FSWatcher | undefined;
  private closed = false;

  constructor(
    private readonly gitDir: string,
    private readonly onPath: (path: string) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Throws when the git dir cannot be watched (it is gone). */
  start(): void {
    const logs = join(this.gitDir, 'logs');
    this.dir = watchNames(
      this.gitDir,
      (path) => {
        // The logs folder comes with the first commit, and may be replaced: its watch follows it.
        if (path === logs) this.watchLogs();
        this.onPath(path);
      },
      this.onError,
    );
    this.watchLogs();
  }

  /** Inotify watches held (the git dir's, and its logs folder's when it exists). */
  get count(): number {
    return (this.dir ? 1 : 0) + (this.logs ? 1 : 0);
  }

  /** (Re)watches the logs folder: the one there now, which may be a new one. */
  private watchLogs(): void {
    if (this.closed) return;
    this.logs?.close();
    this.logs = undefined;
    const logs = join(this.gitDir, 'logs');
    try {
      const w = watch(logs, { persistent: false }, (_event, name) => {
        if (name) this.onPath(join(logs, name.toString()));
      });
      // Removed with its folder: watched again when the git dir reports the folder back.
      w.on('error', () => {
        if (this.logs === w) this.logs = undefined;
        w.close();
      });
      this.logs = w;
    } catch {
      // Not there yet (no commit) or gone: the git dir's watch reports it when it comes.
    }
  }

  close(): void {
    this.closed = true;
    this.dir?.close();
    this.logs?.close();
    this.dir = undefined;
    this.logs = undefined;
  }
}
