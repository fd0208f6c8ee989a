/**
 * `npm run bench -- --write`: puts what a run printed into docs/benchmarks.md, between markers,
 * so no figure in the docs is ever copied by hand. Each benchmark owns one region (its tables
 * and notes, stamped with the date, machine, load, Node and NODE_EXTRA_CA_CERTS); the "goals at
 * a glance" table owns another, where the rows of the benchmarks that ran are replaced and the
 * others are kept as they were.
 */
import { cpus, loadavg } from 'node:os';
import { columns, type Block, type Goal, type Row } from './table.js';

/** One benchmark's run, as it goes into the docs. */
export type Section = {
  name: string;
  /** When the run started (ISO 8601). */
  startedAt: string;
  seconds: number;
  machine: Machine;
  blocks: Block[];
  goals: Goal[];
};

export type Machine = { cpu: string; cores: number; loadStart: number; loadEnd: number; node: string; extraCaCerts: boolean };

const GOALS = 'bench-goals';
const begin = (id: string) => `<!-- ${id}:begin (written by npm run bench -- --write; edits here are overwritten) -->`;
const end = (id: string) => `<!-- ${id}:end -->`;
const sectionId = (name: string) => `bench:${name}`;

/** The machine as a run sees it; call `done()` when the benchmark ends, for the load then. */
export function observeMachine(): () => Machine {
  const cpu = cpus()[0]?.model.trim() || 'unknown CPU';
  const cores = cpus().length;
  const loadStart = loadavg()[0]!;
  return () => ({ cpu, cores, loadStart, loadEnd: loadavg()[0]!, node: process.version, extraCaCerts: Boolean(process.env.NODE_EXTRA_CA_CERTS) });
}

function cell(v: unknown): string {
  return String(v ?? '')
    .replace(/\r?\n/g, ' ')
    .replace(/\|/g, '\\|');
}

function markdownTable(rows: Row[]): string {
  const cols = columns(rows);
  return [
    `| ${cols.map(cell).join(' | ')} |`,
    `|${cols.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${cols.map((c) => cell(r[c])).join(' | ')} |`),
  ].join('\n');
}

export function stamp(s: Section): string {
  const m = s.machine;
  const when = s.startedAt.slice(0, 16).replace('T', ' ');
  return (
    `_Run ${when} UTC on ${m.cpu}, ${m.cores} cores, load ${m.loadStart.toFixed(2)} → ${m.loadEnd.toFixed(2)} ` +
    `(1-minute average at start → end); Node ${m.node}; NODE_EXTRA_CA_CERTS ${m.extraCaCerts ? 'set' : 'unset'}; ${s.seconds.toFixed(0)} s._`
  );
}

export function renderSection(s: Section): string {
  const parts = [stamp(s)];
  for (const b of s.blocks) parts.push(b.kind === 'table' ? `**${b.title}**\n\n${markdownTable(b.rows)}` : b.text);
  if (s.blocks.length === 0) parts.push('(this run printed no table)');
  return parts.join('\n\n');
}

function goalRow(name: string, g: Goal, date: string): string {
  const verdict = g.met === undefined ? '' : g.met ? ' ✓' : ' ✗';
  return `| [${name}](#${name}) | ${cell(g.measure)} | ${cell(g.result)} | ${cell(g.goal + verdict)} | ${date} |`;
}

const GOALS_HEAD = '| benchmark | measure | result | goal | run |\n|---|---|---|---|---|';

/** The goals region: rows of the benchmarks that ran replaced, the others kept, in `order`. */
function renderGoals(previous: string | undefined, sections: Section[], order: string[]): string {
  const rows = new Map<string, string[]>();
  for (const line of (previous ?? '').split('\n')) {
    const name = /^\| \[([^\]]+)\]\(#/.exec(line)?.[1];
    if (name) rows.set(name, [...(rows.get(name) ?? []), line]);
  }
  for (const s of sections)
    rows.set(
      s.name,
      s.goals.map((g) => goalRow(s.name, g, s.startedAt.slice(0, 10))),
    );
  const names = [...order.filter((n) => rows.has(n)), ...[...rows.keys()].filter((n) => !order.includes(n))];
  return `${GOALS_HEAD}\n${names.flatMap((n) => rows.get(n)!).join('\n')}`;
}

/** Where the region `id` is in `doc`: the text between its markers, or undefined when absent. */
function region(doc: string, id: string): { from: number; to: number; body: string } | undefined {
  const b = doc.indexOf(`<!-- ${id}:begin`);
  const e = doc.indexOf(end(id));
  if (b < 0 && e < 0) return undefined;
  const bodyStart = b < 0 ? -1 : doc.indexOf('-->', b) + 3;
  if (b < 0 || e < bodyStart) throw new Error(`docs/benchmarks.md: the markers of "${id}" are broken (a begin needs an end after it); fix them by hand`);
  return { from: b, to: e + end(id).length, body: doc.slice(bodyStart, e).trim() };
}

function replaceRegion(doc: string, id: string, body: string, heading: string): string {
  const block = `${begin(id)}\n${body}\n${end(id)}`;
  const r = region(doc, id);
  if (r) return doc.slice(0, r.from) + block + doc.slice(r.to);
  return `${doc.trimEnd()}\n\n${heading}\n\n${block}\n`;
}

/**
 * The doc with each section's region and the goal rows of those benchmarks rewritten. A
 * benchmark without a region yet gets a `## <name>` section at the end (its anchor is what
 * the goals table links to).
 */
export function updateDoc(doc: string, sections: Section[], order: string[]): string {
  let out = doc;
  for (const s of sections) out = replaceRegion(out, sectionId(s.name), renderSection(s), `## ${s.name}`);
  const previous = region(out, GOALS)?.body;
  return replaceRegion(out, GOALS, renderGoals(previous, sections, order), '## Goals at a glance');
}
