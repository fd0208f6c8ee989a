/**
 * One randomised trial's daemon, as a separate process so it can be interrupted for real:
 * save the state (for the hook's attempt), check out the staged snapshot, then do what a check
 * or a fix agent might (rewrite, create, delete files, even `git add`), restore, finish.
 * SIGINT, or its hook going away (stdin closes: the hook's connection), makes it restore and
 * exit, as the daemon does; SIGKILL leaves the backup for the hook to restore.
 *
 *   node dist/bench/hooks-trial-worker.js <root> <git-dir> <seed> <attempt> <marker>
 *
 * <marker>: a file it writes when it restored because it was interrupted (the tally counts it).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkoutIndex, finishWorkState, restoreWorkState, saveWorkState, type WorkState } from '../src/githooks/backup.js';
import { gitTry } from '../src/git/run.js';

const [root, gitDir, seedArg, attempt, marker] = process.argv.slice(2) as [string, string, string, string | undefined, string | undefined];
let seed = Number(seedArg) >>> 0;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};

let state: WorkState | undefined;
let interrupted = false;
const putBackAndExit = () => {
  interrupted = true;
  if (state) {
    restoreWorkState(state, { restoreIndex: true });
    finishWorkState(state);
    if (marker) writeFileSync(marker, 'restored by the daemon\n');
  }
  process.exit(130);
};
process.on('SIGINT', putBackAndExit);
// The hook's connection closing (the hook was killed): the daemon aborts the hook and puts everything back.
process.stdin.on('end', putBackAndExit);
process.stdin.on('error', putBackAndExit);
process.stdin.resume();
process.stdout.on('error', () => undefined);

process.stdout.write('ready\n');
state = saveWorkState({ root, gitDir, reason: 'trial', attempt });
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
process.exit(0);
