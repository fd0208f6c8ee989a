/**
 * Skills benchmark: building the volatile-tier skill index for 1,000 skills —
 * cold (walk, parse front matter, security-scan every file, render), warm from the disk
 * snapshot (a new daemon: read the snapshot, stat the manifest), and warm from the
 * in-process LRU. Peer in the same run: the cold build without the security scan (what an
 * index that trusts its files would cost), to show what the scan adds. The warm start is
 * measured where it happens, in a fresh Node process (cold JIT, nothing in memory), next
 * to its floor: the same process doing only the manifest's bare stat calls.
 * Goals: cold ≤ 150 ms, warm from the snapshot ≤ 5 ms.
 *
 * Then the git steps of a skill change (the skills repository runs git through
 * simple-git): create the repository, commit a new skill, read its history, resolve a revision,
 * list its files and read one back (what a revert does), through SkillRepo beside the same
 * steps through the raw runner (the frozen pre-issue SkillRepo), interleaved round by round.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { renderIndex, type SkillInfo } from '../src/skills/catalog.js';
import { SkillRepo } from '../src/skills/git.js';
import { SkillRepoBefore } from './baseline/skill-repo-before.js';
import { clearCatalogMemory, invalidateCatalog, loadCatalog, type CatalogPaths } from '../src/skills/index-cache.js';
import { median, ms, percentile, printTable, timeRuns, type Bench, type Goal } from './table.js';

const SKILLS = 1_000;
const CATEGORIES = 20;
const RUNS = 20;
const COLD_GOAL_MS = 150;
const WARM_GOAL_MS = 5;
/** Rounds of the git steps of a skill change, through each implementation (interleaved; two more as warm-up). */
const GIT_ROUNDS = 15;
/** Fresh processes per new-process row (each costs a Node start, ~50 ms). */
const PROCESS_RUNS = 15;

/** The compiled index cache, imported by the child processes. */
const INDEX_CACHE_URL = new URL('../src/skills/index-cache.js', import.meta.url).href;

/** Runs `body` (an ES module snippet that prints a number of ms) in a fresh Node process. */
function inFreshProcess(body: string, arg: string): number {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', body, arg], { encoding: 'utf8' });
  return Number(out.trim());
}

const WARM_CHILD = `
const { loadCatalog } = await import(${JSON.stringify(INDEX_CACHE_URL)});
const paths = JSON.parse(process.argv[1]);
const t = process.hrtime.bigint();
const r = loadCatalog(paths);
const text = r.text;
const d = Number(process.hrtime.bigint() - t) / 1e6;
if (r.source !== 'snapshot' || !text) throw new Error('warm child did not use the snapshot: ' + r.source);
process.stdout.write(String(d));
`;

const FLOOR_CHILD = `
import { readFileSync, statSync } from 'node:fs';
const list = JSON.parse(readFileSync(process.argv[1], 'utf8'));
const opts = { throwIfNoEntry: false };
const t = process.hrtime.bigint();
for (const p of list) statSync(p, opts);
process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));
`;

function makeSkills(root: string): void {
  for (let i = 0; i < SKILLS; i++) {
    const name = `skill-${String(i).padStart(4, '0')}`;
    const dir = join(root, `category-${i % CATEGORIES}`, name);
    mkdirSync(dir, { recursive: true });
    const body = [
      `# ${name}`,
      '',
      '1. Change the schema in schema/api.yaml.',
      '2. Run `npm run gen` to regenerate src/generated/.',
      '3. Verify with `git diff --stat src/generated` that no file was edited by hand.',
      '4. Run the tests: `npm test -- --run`.',
      '',
      'Pitfalls: the generator needs Node 20; delete node_modules/.cache when it fails.',
    ].join('\n');
    writeFileSync(
      join(dir, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Regenerate the API client number ${i} after a schema change and verify the diff\n---\n${body}\n`,
    );
  }
}

/** The peer: walk and parse only, no scan, no manifest, no cache. */
function buildWithoutScan(root: string): string {
  const skills: SkillInfo[] = [];
  for (const cat of readdirSync(root)) {
    if (cat.startsWith('.')) continue;
    for (const name of readdirSync(join(root, cat))) {
      const text = readFileSync(join(root, cat, name, 'SKILL.md'), 'utf8');
      const end = text.indexOf('\n---', 3);
      const fm = parseYaml(text.slice(4, end)) as { description: string };
      skills.push({ name, category: cat, description: fm.description, scope: 'user', dir: join(root, cat, name), verdict: 'safe' });
    }
  }
  return renderIndex(skills);
}

type GitSteps = {
  ensure(): Promise<void>;
  commitPaths(paths: string[], message: string): Promise<string | undefined>;
  log(paths: string[]): Promise<unknown[]>;
  resolve(rev: string): Promise<string | undefined>;
  filesAt(rev: string, prefix: string): Promise<Array<{ blob: string }>>;
  blob(blob: string): Promise<Buffer>;
};

/** One skill change's git steps in a fresh repository, each step timed (ms). */
async function gitSteps(make: (dir: string) => GitSteps, base: string, round: number): Promise<Record<string, number>> {
  const dir = join(base, `git-${round}-${Math.random().toString(36).slice(2)}`);
  const repo = make(dir);
  const out: Record<string, number> = {};
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = process.hrtime.bigint();
    const r = await fn();
    out[name] = Number(process.hrtime.bigint() - t) / 1e6;
    return r;
  };
  mkdirSync(join(dir, 'ops', 'deploy'), { recursive: true });
  writeFileSync(join(dir, 'ops', 'deploy', 'SKILL.md'), '---\nname: deploy\ndescription: Deploy the service.\n---\n\n1. Build.\n2. Ship.\n');
  await step('create the repository, commit what is there', () => repo.ensure());
  writeFileSync(join(dir, 'ops', 'deploy', 'SKILL.md'), '---\nname: deploy\ndescription: Deploy the service.\n---\n\n1. Build.\n2. Test.\n3. Ship.\n');
  const rev = await step('commit a change to one skill', () => repo.commitPaths(['ops/deploy'], 'Patched skill "deploy"'));
  await step('history of the skill', () => repo.log(['ops/deploy']));
  await step('resolve a revision', () => repo.resolve(rev!));
  const files = await step("list the skill's files at it", () => repo.filesAt(rev!, 'ops/deploy'));
  await step('read a file back (revert)', () => repo.blob(files[0]!.blob));
  out.total = Object.values(out).reduce((a, b) => a + b, 0);
  return out;
}

async function gitStepsTable(base: string): Promise<void> {
  const impls = [
    { name: 'simple-git (SkillRepo now)', make: (dir: string) => new SkillRepo(dir) as GitSteps },
    { name: 'raw runner (SkillRepo before, bench/baseline)', make: (dir: string) => new SkillRepoBefore(dir) as GitSteps },
  ];
  const runs = impls.map(() => [] as Array<Record<string, number>>);
  for (let r = 0; r < GIT_ROUNDS + 2; r++) {
    for (const [i, impl] of (r % 2 ? [...impls].reverse() : impls).entries()) {
      const k = r % 2 ? impls.length - 1 - i : i;
      const steps = await gitSteps(impl.make, base, r);
      if (r >= 2) runs[k]!.push(steps);
    }
  }
  const names = Object.keys(runs[0]![0]!);
  printTable(
    `Git steps of a skill change, medians of ${GIT_ROUNDS} interleaved rounds (a fresh repository each)`,
    names.map((n) => ({
      step: n,
      ...Object.fromEntries(impls.map((impl, k) => [impl.name, ms(median(runs[k]!.map((x) => x[n]!)))])),
      'simple-git − raw': ms(median(runs[0]!.map((x, j) => x[n]! - runs[1]![j]![n]!))),
    })),
  );
}

export const bench: Bench = {
  name: 'skills',
  async run() {
    const base = mkdtempSync(join(tmpdir(), 'hd-bench-skills-'));
    try {
      const paths: CatalogPaths = {
        userRoot: join(base, 'skills'),
        snapshotDir: join(base, '.skills-index'),
        generationFile: join(base, '.skills-generation'),
      };
      makeSkills(paths.userRoot);

      const cold = await timeRuns(RUNS, () => {
        invalidateCatalog(paths);
        const r = loadCatalog(paths);
        if (r.source !== 'built' || r.skills.length !== SKILLS) throw new Error(`cold run did not build (${r.source}, ${r.skills.length})`);
      });
      const peer = await timeRuns(RUNS, () => buildWithoutScan(paths.userRoot));
      loadCatalog(paths);
      const warmDisk = await timeRuns(RUNS * 5, () => {
        clearCatalogMemory();
        const r = loadCatalog(paths);
        if (r.source !== 'snapshot') throw new Error(`warm run did not use the snapshot (${r.source})`);
      });
      const manifest = loadCatalog(paths).manifest;
      const statFloor = await timeRuns(RUNS * 5, () => {
        for (const [p] of manifest) statSync(p, { throwIfNoEntry: false });
      });
      const listFile = join(base, 'manifest-paths.json');
      writeFileSync(listFile, JSON.stringify(manifest.map(([p]) => p)));
      const warmProcess: number[] = [];
      const floorProcess: number[] = [];
      for (let i = 0; i < PROCESS_RUNS; i++) {
        warmProcess.push(inFreshProcess(WARM_CHILD, JSON.stringify(paths)));
        floorProcess.push(inFreshProcess(FLOOR_CHILD, listFile));
      }
      const snapshotBytes = readdirSync(paths.snapshotDir).reduce((n, f) => n + statSync(join(paths.snapshotDir, f)).size, 0);
      const warmMemory = await timeRuns(RUNS * 50, () => {
        if (loadCatalog(paths).source !== 'memory') throw new Error('memory run missed');
      });
      const text = loadCatalog(paths).text;

      const row = (what: string, xs: number[], goal?: number) => ({
        what,
        median: ms(median(xs)),
        p95: ms(percentile(xs, 95)),
        goal: goal === undefined ? '' : `≤ ${goal} ms`,
        met: goal === undefined ? '' : median(xs) <= goal ? 'yes' : 'NO',
      });
      printTable(`Skill index, ${SKILLS} skills in ${CATEGORIES} categories (index ${text.length} chars, snapshot ${Math.round(snapshotBytes / 1024)} KiB)`, [
        row('cold: walk + parse + scan + render + write snapshot', cold, COLD_GOAL_MS),
        row('peer: walk + parse + render, no scan, no cache', peer),
        row(`warm: from the disk snapshot, new process (${PROCESS_RUNS} processes)`, warmProcess, WARM_GOAL_MS),
        row(`floor: ${manifest.length} bare stat calls, new process`, floorProcess),
        row('warm: from the disk snapshot, same process, memory cleared', warmDisk),
        row(`floor: ${manifest.length} bare stat calls, same process`, statFloor),
        row('warm: in-process LRU', warmMemory),
      ]);
      const goals: Goal[] = [
        {
          measure: `index of ${SKILLS.toLocaleString('en')} skills, cold`,
          result: ms(median(cold), 0),
          goal: `≤ ${COLD_GOAL_MS} ms`,
          met: median(cold) <= COLD_GOAL_MS,
        },
        {
          measure: 'warm from the disk snapshot, same process',
          result: `${ms(median(warmDisk), 1)} (floor: ${manifest.length.toLocaleString('en')} bare \`stat\` calls ${ms(median(statFloor), 1)})`,
          goal: `≤ ${WARM_GOAL_MS} ms`,
          met: median(warmDisk) <= WARM_GOAL_MS,
        },
        {
          measure: 'warm from the disk snapshot, new process',
          result: `${ms(median(warmProcess), 1)} (floor: the same \`stat\` calls in a new process ${ms(median(floorProcess), 1)})`,
          goal: `≤ ${WARM_GOAL_MS} ms`,
          met: median(warmProcess) <= WARM_GOAL_MS,
        },
      ];
      await gitStepsTable(base);
      return goals;
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
