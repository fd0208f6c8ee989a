/** Shared helpers for `npm run bench`: timing, medians, percentiles and a plain-text table. */
export type Row = Record<string, string | number>;

/**
 * One line of the "goals at a glance" table in docs/benchmarks.md: what was measured, the
 * figure beside its peer or floor from the same run, the goal, and whether the run met it.
 */
export type Goal = { measure: string; result: string; goal: string; met?: boolean };

/** A benchmark prints its tables and returns its goal rows (none when it has no goal). */
export type Bench = { name: string; run: () => Promise<Goal[] | void> };

/** What a benchmark printed for the docs: its tables and the notes that go with them. */
export type Block = { kind: 'table'; title: string; rows: Row[] } | { kind: 'note'; text: string };

let recording: Block[] = [];

/** `xs` in a new random order (Fisher–Yates): each round of a benchmark runs its setups in one, so none always follows another. */
export function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let j = out.length - 1; j > 0; j--) {
    const r = Math.floor(Math.random() * (j + 1));
    [out[j], out[r]] = [out[r]!, out[j]!];
  }
  return out;
}

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export function ms(n: number, digits = 2): string {
  return `${n.toFixed(digits)} ms`;
}

/** Runs `fn` `n` times (after `warmup` runs) and returns the durations in ms. */
export async function timeRuns(n: number, fn: () => unknown | Promise<unknown>, warmup = 2): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

/** The columns of `rows` in first-seen order, as printed. */
export function columns(rows: Row[]): string[] {
  return [...new Set(rows.flatMap((r) => Object.keys(r)))];
}

/** Prints a table and keeps it for `npm run bench -- --write` (docs/benchmarks.md). */
export function printTable(title: string, rows: Row[]): void {
  if (rows.length === 0) return;
  recording.push({ kind: 'table', title, rows });
  const cols = columns(rows);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(width[i]!)).join(' | ') + ' |';
  process.stdout.write(`\n## ${title}\n\n`);
  process.stdout.write(line(cols) + '\n');
  process.stdout.write('|' + width.map((w) => '-'.repeat(w + 2)).join('|') + '|\n');
  for (const r of rows) process.stdout.write(line(cols.map((c) => String(r[c] ?? ''))) + '\n');
}

/** Prints a line that belongs with the tables (a verdict, what was skipped) and keeps it for the docs. */
export function printNote(text: string): void {
  recording.push({ kind: 'note', text });
  process.stdout.write(`\n${text}\n`);
}

/** Starts keeping what the next benchmark prints; returns what was kept since the last call. */
export function takeRecording(): Block[] {
  const out = recording;
  recording = [];
  return out;
}

/** mulberry32: small, fast, seeded — the same data every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
