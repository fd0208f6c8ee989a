/**
 * `npm run bench [-- name…] [--write]`: runs the benchmarks and prints one table each, with the
 * peer or baseline measured in the same run. Medians, because this machine is shared.
 * `--write` puts the tables, notes and goal rows of the benchmarks that ran into
 * docs/benchmarks.md (bench/report.ts); the sections of the others stay as they were.
 * Adding a benchmark is one entry below: a module exporting `bench`, whose `run` returns its goal rows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { observeMachine, updateDoc, type Section } from './report.js';
import { takeRecording, type Bench } from './table.js';

type Entry = {
  load: () => Promise<{ bench: Bench }>;
  /** Runs only when named: it takes many minutes and measures no speed. */
  onlyWhenNamed?: boolean;
};

const benches: Record<string, Entry> = {
  daemon: { load: () => import('./daemon.js') },
  idle: { load: () => import('./idle.js') },
  context: { load: () => import('./context.js') },
  rules: { load: () => import('./rules.js') },
  sessions: { load: () => import('./sessions.js') },
  skills: { load: () => import('./skills.js') },
  agent: { load: () => import('./agent.js') },
  hooks: { load: () => import('./hooks.js') },
  scale: { load: () => import('./scale.js') },
  'repo-size': { load: () => import('./repo-size.js') },
  'hooks-trials': { load: () => import('./hooks-trials.js'), onlyWhenNamed: true },
  detectors: { load: () => import('./detectors.js') },
  sandbox: { load: () => import('./sandbox.js') },
  mcp: { load: () => import('./mcp.js') },
  'agent-hooks': { load: () => import('./agent-hooks.js') },
  'agents-e2e': { load: () => import('./agents-e2e.js') },
  'claude-call-parts': { load: () => import('./claude-call-parts.js') },
  placement: { load: () => import('./placement.js') },
  recall: { load: () => import('./recall.js') },
  commits: { load: () => import('./commits.js') },
  'secret-walk': { load: () => import('./secret-walk.js') },
};

/** docs/benchmarks.md of this checkout (this file runs as dist/bench/run.js). */
const DOC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'benchmarks.md');

const args = process.argv.slice(2);
const write = args.includes('--write');
const wanted = args.filter((a) => a !== '--write');
const unknown = wanted.filter((a) => !(a in benches));
if (unknown.length) {
  process.stderr.write(
    `npm run bench: no benchmark ${unknown.map((u) => `"${u}"`).join(', ')}; the benchmarks are: ${Object.keys(benches).join(', ')} (and --write)\n`,
  );
  process.exit(2);
}

const sections: Section[] = [];
const failed: string[] = [];
for (const [name, entry] of Object.entries(benches)) {
  if (wanted.length ? !wanted.includes(name) : entry.onlyWhenNamed) continue;
  const { bench } = await entry.load();
  const startedAt = new Date().toISOString();
  const machine = observeMachine();
  const t = Date.now();
  takeRecording();
  try {
    const goals = (await bench.run()) ?? [];
    const seconds = (Date.now() - t) / 1000;
    sections.push({ name, startedAt, seconds, machine: machine(), blocks: takeRecording(), goals });
    process.stdout.write(`\n(${name}: ${seconds.toFixed(1)} s)\n`);
  } catch (err) {
    failed.push(name);
    process.stderr.write(`\n${name} failed: ${(err as Error).stack ?? String(err)}\n`);
  }
}

if (write && sections.length) {
  writeFileSync(DOC, updateDoc(readFileSync(DOC, 'utf8'), sections, Object.keys(benches)));
  process.stdout.write(`\nwrote ${sections.map((s) => s.name).join(', ')} into docs/benchmarks.md\n`);
}
if (failed.length) {
  process.stderr.write(`\nfailed: ${failed.join(', ')}${write ? ' (their sections in docs/benchmarks.md are unchanged)' : ''}\n`);
  process.exitCode = 1;
}
