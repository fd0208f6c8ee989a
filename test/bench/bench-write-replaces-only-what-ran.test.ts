/**
 * `npm run bench -- --write` (bench/report.ts): the regions of the benchmarks that ran are
 * rewritten from what they printed, with the machine stamp; everything else in
 * docs/benchmarks.md — hand-written prose, other benchmarks' sections and goal rows — stays
 * byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { updateDoc, type Section } from '../../bench/report.js';

const order = ['daemon', 'context', 'hooks'];

function section(name: string, over: Partial<Section> = {}): Section {
  return {
    name,
    startedAt: '2031-02-03T04:05:06.000Z',
    seconds: 12.4,
    machine: { cpu: 'Test CPU 9000', cores: 2, loadStart: 0.5, loadEnd: 1.25, node: 'v20.99.0', extraCaCerts: true },
    blocks: [
      {
        kind: 'table',
        title: `${name} table`,
        rows: [
          { measure: 'a | b', value: 1 },
          { measure: 'c', value: '2 ms', extra: 'x' },
        ],
      },
      { kind: 'note', text: `${name}: goal met.` },
    ],
    goals: [{ measure: `${name} speed`, result: '3 ms', goal: '≤ 5 ms', met: true }],
    ...over,
  };
}

const begin = (id: string) => `<!-- ${id}:begin (written by npm run bench -- --write; edits here are overwritten) -->`;

const DOC = `# Benchmarks

Hand-written introduction.

## Goals at a glance

${begin('bench-goals')}
| benchmark | measure | result | goal | run |
|---|---|---|---|---|
| [hooks](#hooks) | hooks old | 99 ms | ≤ 40 ms ✗ | 2030-01-01 |
| [daemon](#daemon) | daemon old | 500 ms | ≤ 300 ms ✗ | 2030-01-01 |
<!-- bench-goals:end -->

## daemon

What the daemon benchmark measures (prose kept).

${begin('bench:daemon')}
old daemon numbers
<!-- bench:daemon:end -->

Prose after the daemon section.

## hooks

${begin('bench:hooks')}
old hooks numbers
<!-- bench:hooks:end -->
`;

describe('npm run bench -- --write rewrites only the sections of the benchmarks that ran', () => {
  it('replaces the daemon region and goal rows, keeps the hooks section, its goal row and all prose', () => {
    const out = updateDoc(DOC, [section('daemon')], order);
    expect(out).not.toContain('old daemon numbers');
    expect(out).toContain('old hooks numbers');
    for (const prose of ['Hand-written introduction.', 'What the daemon benchmark measures (prose kept).', 'Prose after the daemon section.'])
      expect(out).toContain(prose);
    expect(out).toContain(
      '_Run 2031-02-03 04:05 UTC on Test CPU 9000, 2 cores, load 0.50 → 1.25 (1-minute average at start → end); Node v20.99.0; NODE_EXTRA_CA_CERTS set; 12 s._',
    );
    expect(out).toContain('**daemon table**\n\n| measure | value | extra |\n|---|---|---|\n| a \\| b | 1 |  |\n| c | 2 ms | x |\n\ndaemon: goal met.');
    const goals = out.slice(out.indexOf(begin('bench-goals')), out.indexOf('<!-- bench-goals:end -->'));
    expect(goals.split('\n').filter((l) => l.startsWith('| ['))).toEqual([
      '| [daemon](#daemon) | daemon speed | 3 ms | ≤ 5 ms ✓ | 2031-02-03 |',
      '| [hooks](#hooks) | hooks old | 99 ms | ≤ 40 ms ✗ | 2030-01-01 |',
    ]);
    // Writing the same run twice changes nothing more.
    expect(updateDoc(out, [section('daemon')], order)).toBe(out);
  });

  it("adds a section for a benchmark the doc has no region for yet, and its goal rows in the registry's order", () => {
    const out = updateDoc(DOC, [section('context', { goals: [{ measure: 'watch', result: '1 MB', goal: '—' }] })], order);
    expect(out).toContain(`<!-- bench:hooks:end -->\n\n## context\n\n${begin('bench:context')}\n_Run 2031-02-03`);
    expect(out.endsWith('context: goal met.\n<!-- bench:context:end -->\n')).toBe(true);
    const rows = out.split('\n').filter((l) => l.startsWith('| ['));
    expect(rows.map((r) => r.slice(0, r.indexOf(']')))).toEqual(['| [daemon', '| [context', '| [hooks']);
    expect(rows[1]).toBe('| [context](#context) | watch | 1 MB | — | 2031-02-03 |');
  });

  it('refuses to write over broken markers', () => {
    const broken = DOC.replace('<!-- bench:hooks:end -->', '');
    expect(() => updateDoc(broken, [section('hooks')], order)).toThrow(/markers of "bench:hooks" are broken/);
  });
});
