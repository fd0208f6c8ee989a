/**
 * One randomised trial's hook: it starts the trial's daemon (bench/hooks-trial-worker.ts)
 * with a pipe for a connection, waits for its answer and, when the daemon dies before
 * answering, restores the backup itself with the same code the real hook runs
 * (src/githooks/recover.ts), as `hermesd hook pre-commit` does when its connection breaks.
 * Prints `daemon <pid>` once the daemon is up, then `self-restored <n>` when it restored.
 *
 *   node dist/bench/hooks-trial-hook.js <root> <git-dir> <seed> <attempt> <marker>
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { restoreAfterDaemonLoss } from '../src/githooks/recover.js';

const [root, gitDir, seed, attempt, marker] = process.argv.slice(2) as [string, string, string, string, string];
const worker = join(dirname(fileURLToPath(import.meta.url)), 'hooks-trial-worker.js');
const daemon = spawn(process.execPath, [worker, root, gitDir, seed, attempt, marker], { stdio: ['pipe', 'pipe', 'inherit'] });
let out = '';
let answered = false;
daemon.stdout.setEncoding('utf8');
daemon.stdout.on('data', (d: string) => {
  out += d;
  if (out.includes('ready\n') && !out.includes('announced')) {
    out += 'announced';
    process.stdout.write(`daemon ${daemon.pid}\n`);
  }
  if (out.includes('done\n')) answered = true;
});
daemon.on('close', async () => {
  if (answered) process.exit(0);
  const r = await restoreAfterDaemonLoss(gitDir, { attempt });
  process.stdout.write(`self-restored ${r.restored.length}\n`);
  process.exit(1);
});
