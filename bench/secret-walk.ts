/**
 * `npm run bench -- secret-walk`: what finding the repository's secret files costs the daemon
 * when SessionDB stores something (a commit's evidence, a transcript), by the number of
 * directories in the work tree. Each such write redacts the values of the secret files, and the
 * list of those files is refreshed at most once a second. The walk that refreshes it looked at
 * every directory (a stat each); with the daemon's watcher it looks at the directories the
 * watches report a change in and at those no watch covers. Both are measured here on the same
 * generated trees (one tracked file per directory, a change in one directory between two walks),
 * with a real RepoWatcher, beside the floor: the one stat and read of the directory that changed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SecretValues } from '../src/security/secret-values.js';
import { RepoWatcher } from '../src/watcher/watcher.js';
import { median, ms, printNote, printTable, type Bench, type Goal, type Row } from './table.js';

const SIZES = (process.env.HERMESD_BENCH_WALK_DIRS ?? '1000,5000,20000').split(',').map(Number);
const ROUNDS = 5;
/** A walk slower than 20 ms is reused for 2 s (src/security/secret-values.ts): each measured walk waits this long after the last. */
const REUSE_GAP_MS = 2_100;
/** The goal: after a change in one directory, a redaction's walk looks at no more than this many directories. */
const LOOKED_GOAL = 10;

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@e',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@e',
};

/** A repository of `dirs` directories (about 30 per parent), one tracked file each, and a .env at the top. */
function makeTree(base: string, dirs: number): { root: string; leaves: string[] } {
  const root = join(base, `t${dirs}`);
  const leaves: string[] = [];
  for (let i = 0; i < dirs; i++) {
    const leaf = join(`p${Math.floor(i / 30)}`, `q${i}`);
    mkdirSync(join(root, leaf), { recursive: true });
    writeFileSync(join(root, leaf, 'f.txt'), `${i}\n`);
    leaves.push(leaf);
  }
  writeFileSync(join(root, '.gitignore'), '.env*\n');
  writeFileSync(join(root, '.env'), 'TOKEN=benchvalue5Rk2Wq\n');
  execFileSync('git', ['init', '-q'], { cwd: root, env: GIT_ENV });
  execFileSync('git', ['add', '-A'], { cwd: root, env: GIT_ENV });
  execFileSync('git', ['commit', '-qm', 'tree'], { cwd: root, env: GIT_ENV });
  return { root, leaves };
}

/** The CPU this process spends (all its threads: the thread pool's too) on `work`, in ms. */
async function cpuOf(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Every directory under `root` but .git (relative). */
function directoriesOf(root: string, rel = '', into: string[] = []): string[] {
  into.push(rel);
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) if (e.isDirectory() && e.name !== '.git') directoriesOf(root, join(rel, e.name), into);
  return into;
}

/** Each directory stat'ed and read, one promise after another: how the walk of every directory made its calls before. */
async function lookAsPromises(root: string, dirs: string[]): Promise<void> {
  for (const rel of dirs) {
    await stat(join(root, rel));
    await readdir(join(root, rel), { withFileTypes: true });
  }
}

export const bench: Bench = {
  name: 'secret-walk',
  async run() {
    const base = mkdtempSync(join(tmpdir(), 'hd-bench-walk-'));
    const rows: Row[] = [];
    const goals: Goal[] = [];
    try {
      for (const dirs of SIZES) {
        const { root, leaves } = makeTree(base, dirs);
        const watcher = new RepoWatcher({ root, gitDir: join(root, '.git'), home: join(base, 'home'), onChange: () => undefined });
        await watcher.start();
        const tree = watcher.state().tree;
        const secrets = new SecretValues({ root, config: {}, env: {} });
        secrets.watchedBy(watcher.treeChanges());
        secrets.refresh(); // the first walk reads every directory (cold), as a daemon's first does
        const every: number[] = [];
        const watched: number[] = [];
        const floor: number[] = [];
        const looked: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const leaf = leaves[(round * 7919) % leaves.length]!;
          writeFileSync(join(root, leaf, `new${round}.txt`), 'x\n');
          await sleep(REUSE_GAP_MS); // the watcher's report delivered, and the last walk no longer reused
          secrets.refresh(undefined, { trustWatch: true });
          watched.push(secrets.walkStats().ms);
          looked.push(secrets.walkStats().looked);
          const t = performance.now();
          statSync(join(root, leaf));
          readdirSync(join(root, leaf), { withFileTypes: true });
          floor.push(performance.now() - t);
          await sleep(REUSE_GAP_MS);
          secrets.refresh();
          every.push(secrets.walkStats().ms);
        }
        await watcher.close();
        // The walk of every directory a daemon makes without holding its loop (its first, here: a
        // stat and a read of each directory; the later ones, at least every 30 s, stat each and read
        // the changed ones): its CPU, beside the same calls made as promises, as that walk made them before.
        const inTurns: number[] = [];
        const asPromises: number[] = [];
        const all = directoriesOf(root);
        for (let round = 0; round < ROUNDS; round++) {
          inTurns.push(await cpuOf(() => new SecretValues({ root, config: {}, env: {} }).ready()));
          asPromises.push(await cpuOf(() => lookAsPromises(root, all)));
        }
        rows.push({
          'directories (tracked)': dirs,
          "the tree's watches": tree.mode === 'watched' ? `${tree.dirs} directories` : tree.mode === 'off' ? `off: ${tree.reason}` : tree.mode,
          'walk, every directory (before)': ms(median(every), 1),
          'walk, where the watches report a change': ms(median(watched), 1),
          'directories it looked at': median(looked),
          'floor: stat and read the changed directory': ms(median(floor), 2),
          'first walk of every directory, without holding the daemon: CPU': ms(median(inTurns), 1),
          'the same calls as promises (that walk before): CPU': ms(median(asPromises), 1),
        });
        if (dirs === Math.max(...SIZES))
          goals.push({
            measure: `directories a redaction's walk for secret files looks at after a change in one, ${dirs.toLocaleString('en-US')}-directory tree (its time; every directory: ${ms(median(every), 1)})`,
            result: `${median(looked)} (${ms(median(watched), 1)})`,
            goal: `≤ ${LOOKED_GOAL}`,
            met: median(looked) <= LOOKED_GOAL,
          });
        rmSync(root, { recursive: true, force: true });
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
    printTable(`secret files: a redaction's walk, by tree size (medians of ${ROUNDS} rounds, one changed directory each)`, rows);
    printNote(
      "Both walks refresh the same SecretValues, with a real RepoWatcher on the tree; the times are the walk's own (the rest of a refresh, the secret files' values and git's refs, is the same for both). The walk where the watches report a change looks at the directories they report and at those no watch covers (ignored ones: none here), and reads the new directories it finds there; the rest of the tree is neither looked at nor passed over, so its time does not grow with the tree. At least one walk in 30 s still looks at every directory (a report lost in an event storm is found then). A walk of every directory that the daemon does not wait for (its first, and those every 30 s) makes its calls synchronously, in turns of a few hundred directories; its CPU (the first walk's: a stat and a read of every directory, and the history's read of the tree's one commit) is beside the same calls made as promises, one after another, as that walk made them before.",
    );
    return goals;
  },
};
