/**
 * Skills benchmark (issue #6): building the volatile-tier skill index for 1,000 skills —
 * cold (walk, parse front matter, security-scan every file, render), warm from the disk
 * snapshot (a new daemon: read the snapshot, stat the manifest), and warm from the
 * in-process LRU. Peer in the same run: the cold build without the security scan (what an
 * index that trusts its files would cost), to show what the scan adds.
 * Goals: cold ≤ 150 ms, warm from the snapshot ≤ 5 ms.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { renderIndex, type SkillInfo } from '../src/skills/catalog.js';
import { clearCatalogMemory, invalidateCatalog, loadCatalog, type CatalogPaths } from '../src/skills/index-cache.js';
import { median, ms, percentile, printTable, timeRuns, type Bench } from './table.js';

const SKILLS = 1_000;
const CATEGORIES = 20;
const RUNS = 20;
const COLD_GOAL_MS = 150;
const WARM_GOAL_MS = 5;

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
    writeFileSync(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: Regenerate the API client number ${i} after a schema change and verify the diff\n---\n${body}\n`);
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
      printTable(`Skill index, ${SKILLS} skills in ${CATEGORIES} categories (index ${text.length} chars)`, [
        row('cold: walk + parse + scan + render + write snapshot', cold, COLD_GOAL_MS),
        row('peer: walk + parse + render, no scan, no cache', peer),
        row('warm: from the disk snapshot (new process)', warmDisk, WARM_GOAL_MS),
        row(`floor: ${manifest.length} bare stat calls (the manifest check)`, statFloor),
        row('warm: in-process LRU', warmMemory),
      ]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
