/**
 * One watcher in its own process, so its RSS and inotify watches are measured alone:
 * `node dist/bench/context-watch-child.js <hermesd|naive> <root> <home>`. Prints
 * `{"readyMs": n}` once ready, then waits to be killed.
 */
import { join } from 'node:path';
import chokidar from 'chokidar';
import { RepoWatcher } from '../src/watcher/watcher.js';

const [mode, root, home] = process.argv.slice(2) as [string, string, string];
const t0 = performance.now();
if (mode === 'naive') {
  const w = chokidar.watch(root, { ignored: (p: string) => /\/\.git(\/|$)/.test(p), ignoreInitial: true });
  await new Promise<void>((r) => w.once('ready', () => r()));
} else {
  const w = new RepoWatcher({ root, gitDir: join(root, '.git'), home, onChange: () => {} });
  await w.start();
}
process.stdout.write(JSON.stringify({ readyMs: performance.now() - t0 }) + '\n');
setInterval(() => {}, 1 << 30);
