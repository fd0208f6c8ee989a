/** Shared helpers for `npm run bench`: timing, medians, percentiles and a plain-text table. */
export type Row = Record<string, string | number>;

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

export function printTable(title: string, rows: Row[]): void {
  if (rows.length === 0) return;
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(width[i]!)).join(' | ') + ' |';
  process.stdout.write(`\n## ${title}\n\n`);
  process.stdout.write(line(cols) + '\n');
  process.stdout.write('|' + width.map((w) => '-'.repeat(w + 2)).join('|') + '|\n');
  for (const r of rows) process.stdout.write(line(cols.map((c) => String(r[c] ?? ''))) + '\n');
}

export type Bench = { name: string; run: () => Promise<void> };
