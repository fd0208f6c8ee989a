/**
 * Watcher and context-build costs on a generated 20k-file repository. Each watcher runs in
 * its own child process (RSS and inotify watches measured from /proc/<pid>), next to naive
 * chokidar watching the whole tree in the same run. Then `context` build time, cold (new
 * builder: authority files read, git status run) and warm (the daemon's cached state).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextBuilder } from '../src/context/builder.js';
import { inotifyWatchCount } from '../src/watcher/inotify.js';
import { median, ms, printNote, printTable, timeRuns, type Bench, type Goal } from './table.js';

const FILES = 20_000;
/** 10 × 10 × 10 leaf directories of 20 files: the shape of a mid-sized monorepo. */
const FANOUT = 10;
const IGNORED_FILES = 2_000;
const RUNS = 3;
/** The watcher's budget on this tree: ready before a first request would wait on it, small beside an editor. */
const READY_GOAL_MS = 300;
const RSS_GOAL_MB = 80;
/** Watches outside the work tree's directories (git dir, HERMES_HOME's config and skills): a few, whatever the tree's size. */
const WATCHES_OUTSIDE_TREE = 10;

function generate(root: string): { dirs: number } {
  const perLeaf = FILES / FANOUT ** 3;
  const dirs = new Set<string>(['']);
  for (let a = 0; a < FANOUT; a++)
    for (let b = 0; b < FANOUT; b++)
      for (let c = 0; c < FANOUT; c++) {
        const dir = join(`pkg${a}`, `mod${b}`, `part${c}`);
        mkdirSync(join(root, dir), { recursive: true });
        dirs
          .add(`pkg${a}`)
          .add(join(`pkg${a}`, `mod${b}`))
          .add(dir);
        for (let f = 0; f < perLeaf; f++) writeFileSync(join(root, dir, `f${f}.ts`), `export const v${f} = ${f};\n`);
      }
  for (let i = 0; i < IGNORED_FILES; i++) {
    const dir = join(root, 'node_modules', `dep${i % 100}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `i${i}.js`), 'module.exports = 1;\n');
  }
  writeFileSync(join(root, '.gitignore'), 'node_modules/\n');
  writeFileSync(join(root, 'AGENTS.md'), '# Rules\n\nDo not edit generated files.\n'.repeat(20));
  writeFileSync(join(root, 'pkg0', 'AGENTS.md'), 'Package rules.\n');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', 'generated'], { cwd: root, env });
  return { dirs: dirs.size };
}

type WatchSample = { readyMs: number; rssMb: number; watches: number };

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function measureWatcher(mode: 'hermesd' | 'naive', root: string, home: string): Promise<WatchSample> {
  const child = join(dirname(fileURLToPath(import.meta.url)), 'context-watch-child.js');
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [child, mode, root, home], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('\n')) return;
      const { readyMs } = JSON.parse(out) as { readyMs: number };
      // Let pending fs.watch registrations and GC settle before reading RSS.
      setTimeout(() => {
        const sample = { readyMs, rssMb: rssMb(p.pid!), watches: inotifyWatchCount(p.pid!) ?? NaN };
        p.kill('SIGKILL');
        resolve(sample);
      }, 300);
    });
    p.on('error', reject);
  });
}

export const bench: Bench = {
  name: 'context',
  run: async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-bench-ctx-')));
    try {
      const root = join(base, 'repo');
      const home = join(base, 'home');
      mkdirSync(join(home, 'skills'), { recursive: true });
      mkdirSync(root);
      const { dirs } = generate(root);
      printNote(
        `Generated ${FILES.toLocaleString('en')} tracked files in ${dirs.toLocaleString('en')} directories (+${IGNORED_FILES.toLocaleString('en')} gitignored in node_modules).`,
      );

      const rows = [];
      const byMode = new Map<string, { ready: number; rss: number; watches: number }>();
      for (const mode of ['hermesd', 'naive'] as const) {
        const samples: WatchSample[] = [];
        for (let i = 0; i < RUNS; i++) samples.push(await measureWatcher(mode, root, home));
        const m = { ready: median(samples.map((s) => s.readyMs)), rss: median(samples.map((s) => s.rssMb)), watches: median(samples.map((s) => s.watches)) };
        byMode.set(mode, m);
        rows.push({
          watcher: mode === 'hermesd' ? 'hermesd (allowlist + per-directory tree)' : 'naive chokidar (whole tree)',
          'ready (median)': ms(m.ready, 0),
          'RSS (median)': `${m.rss.toFixed(1)} MB`,
          'inotify watches': m.watches,
          budget: mode === 'hermesd' ? `≤ ${READY_GOAL_MS} ms, ≤ ${RSS_GOAL_MB} MB, ≤ ${dirs} + ${WATCHES_OUTSIDE_TREE} (git dir, home)` : 'peer',
        });
      }
      printTable(`Watcher on a ${FILES}-file repository (${dirs} directories), median of ${RUNS} child processes`, rows);

      const cwd = join(root, 'pkg0', 'mod0', 'part0');
      const cold = await timeRuns(5, () => new ContextBuilder({ root, gitDir: join(root, '.git'), home }).build({ cwd }), 1);
      const warmBuilder = new ContextBuilder({ root, gitDir: join(root, '.git'), home, workspaceWatched: () => true });
      const warm = await timeRuns(50, () => warmBuilder.build({ cwd }), 2);
      const authorityOnly = await timeRuns(20, () => new ContextBuilder({ root, home }).authority(cwd), 2);
      printTable('context build (AGENTS chain of 2 files, 20k-file work tree)', [
        { build: 'cold (authority read + git status)', median: ms(median(cold)), runs: cold.length },
        { build: 'cold, authority files only', median: ms(median(authorityOnly)), runs: authorityOnly.length },
        { build: 'warm (cached, as in the daemon)', median: ms(median(warm)), runs: warm.length },
      ]);
      const ours = byMode.get('hermesd')!;
      const naive = byMode.get('naive')!;
      const mb = (x: number) => `${x.toFixed(1)} MB`;
      const goals: Goal[] = [
        {
          measure: `watcher ready / RSS / inotify watches, ${FILES.toLocaleString('en')} files in ${dirs.toLocaleString('en')} dirs`,
          result: `${ms(ours.ready, 0)} / ${mb(ours.rss)} / ${ours.watches.toLocaleString('en')} (naive chokidar ${ms(naive.ready, 0)} / ${mb(naive.rss)} / ${naive.watches.toLocaleString('en')})`,
          goal: `≤ ${READY_GOAL_MS} ms, ≤ ${RSS_GOAL_MB} MB, ≤ 1 per dir`,
          met: ours.ready <= READY_GOAL_MS && ours.rss <= RSS_GOAL_MB && ours.watches <= dirs + WATCHES_OUTSIDE_TREE,
        },
        { measure: '`context` build cold / warm', result: `${ms(median(cold), 0)} / ${ms(median(warm))}`, goal: '—' },
      ];
      return goals;
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
