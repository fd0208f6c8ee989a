/**
 * Rule engine benchmark: the pre-commit fast path — rules judged on 50 staged
 * files in-process — next to the naive way (list the staged files, then `git show :path`
 * per file and scan every line), measured in the same run; plus the work-tree check.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { checkStaged, checkWorktree } from '../src/rules/engine.js';
import { median, ms, percentile, printTable, timeRuns, type Bench } from './table.js';

const FILES = 50;
const LINES_PER_FILE = 200;
const RUNS = 30;

const config = configSchema().parse({
  rules: [
    { id: 'generated-files', message: 'Do not edit generated files.', protect: ['src/generated/**'] },
    { id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' },
  ],
});

const protectOnlyConfig = configSchema().parse({ rules: [config.rules[0]] });

function setup(): { base: string; repo: string } {
  const base = mkdtempSync(join(tmpdir(), 'hd-bench-rules-'));
  const repo = join(base, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), text);
  };
  const body = (tag: string) => Array.from({ length: LINES_PER_FILE }, (_, i) => `export const v${i} = "${tag} ${i}";`).join('\n') + '\n';
  for (let i = 0; i < FILES; i++) write(`src/mod${i}/file${i}.ts`, body('old'));
  git('add', '-A');
  git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'init');
  // Each staged file: ten changed lines spread over the file (ten hunks).
  for (let i = 0; i < FILES; i++) {
    const lines = body('old').split('\n');
    for (let k = 0; k < 10; k++) lines[k * 20] = `export const changed${k} = "new";`;
    write(`src/mod${i}/file${i}.ts`, lines.join('\n'));
  }
  git('add', '-A');
  return { base, repo };
}

/** The naive peer: list staged files, read each staged blob with its own git process, scan all lines. */
function naive(repo: string): number {
  const names = execFileSync('git', ['diff', '--cached', '--name-only', '-z'], { cwd: repo, encoding: 'utf8' }).split('\0').filter(Boolean);
  const re = /AKIA[0-9A-Z]{16}/;
  let hits = 0;
  for (const name of names) {
    const text = spawnSync('git', ['show', `:${name}`], { cwd: repo, encoding: 'utf8' }).stdout;
    for (const line of text.split('\n')) if (re.test(line)) hits++;
  }
  return hits;
}

export const bench: Bench = {
  name: 'rules',
  async run() {
    const { base, repo } = setup();
    try {
      const staged = await timeRuns(RUNS, () => checkStaged(repo, config));
      const protectOnly = await timeRuns(RUNS, () => checkStaged(repo, protectOnlyConfig));
      const worktree = await timeRuns(RUNS, () => checkWorktree(repo, config));
      const gitOnly = await timeRuns(RUNS, () => spawnSync('git', ['diff', '--cached', '--raw', '-z'], { cwd: repo }));
      const gitPatch = await timeRuns(RUNS, () => spawnSync('git', ['diff', '--cached', '--raw', '-z', '-U0', '-M'], { cwd: repo }));
      const peer = await timeRuns(Math.ceil(RUNS / 3), () => naive(repo));
      const row = (what: string, xs: number[]) => ({ what, median: ms(median(xs)), p90: ms(percentile(xs, 90)), runs: xs.length });
      printTable(`rules on ${FILES} staged files (${LINES_PER_FILE} lines each, 10 hunks each; 1 protect + 1 forbid rule)`, [
        row('checkStaged, protect + forbid (one `diff --raw -z -U0`)', staged),
        row('checkStaged, protect only (one `diff --raw -z`)', protectOnly),
        row('checkWorktree (diff HEAD + untracked)', worktree),
        row('baseline: bare `git diff --cached --raw -z` spawn', gitOnly),
        row('baseline: bare `git diff --cached --raw -z -U0 -M` spawn', gitPatch),
        row('peer: name-only + `git show :path` per file', peer),
      ]);
      return [
        {
          measure: `\`checkStaged\` on ${FILES} files (protect + forbid)`,
          result: `${ms(median(staged), 1)} (the bare \`git diff -U0\` it reads ${ms(median(gitPatch), 1)}; a \`git show\` per file ${ms(median(peer), 0)})`,
          goal: '—',
        },
      ];
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
