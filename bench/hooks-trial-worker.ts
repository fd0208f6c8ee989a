/**
 * One randomised trial's hook, as a separate process so it can be interrupted for real:
 * save the state, check out the staged snapshot, then do what a check or a fix agent might
 * (rewrite, create, delete files, even `git add`), restore, finish. SIGINT makes it restore
 * and exit 130, as the daemon does when the client goes away; SIGKILL leaves the backup.
 *
 *   node dist/bench/hooks-trial-worker.js <root> <git-dir> <seed>
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkoutIndex, finishWorkState, restoreWorkState, saveWorkState, type WorkState } from '../src/hooks/backup.js';
import { gitTry } from '../src/hooks/git.js';

const [root, gitDir, seedArg] = process.argv.slice(2) as [string, string, string];
let seed = Number(seedArg) >>> 0;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};

let state: WorkState | undefined;
let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
  if (state) {
    restoreWorkState(state, { restoreIndex: true });
    finishWorkState(state);
  }
  process.exit(130);
});

process.stdout.write('ready\n');
state = saveWorkState({ root, gitDir, reason: 'trial' });
await sleep(rand() * 5);
checkoutIndex(state);
const tracked = gitTry(['ls-files', '-z'], { cwd: root }).stdout.split('\0').filter(Boolean);
for (let i = 0; i < 6 && !interrupted; i++) {
  const r = rand();
  const pick = tracked[Math.floor(rand() * tracked.length)];
  if (r < 0.3 && pick) writeFileSync(join(root, pick), `rewritten by the check ${i}\n`);
  else if (r < 0.5 && pick) rmSync(join(root, pick), { force: true, recursive: true });
  else if (r < 0.7) {
    const p = join(root, `build-${i}`, 'out.bin');
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, Buffer.from([0, 1, 2, i]));
  } else if (r < 0.85) gitTry(['add', '-A'], { cwd: root });
  else writeFileSync(join(root, `note-${i}.txt`), 'agent notes\n');
  await sleep(rand() * 4);
}
restoreWorkState(state, { restoreIndex: true });
finishWorkState(state);
state = undefined;
process.stdout.write('done\n');
