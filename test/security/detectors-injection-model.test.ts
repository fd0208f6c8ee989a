/**
 * The injection model shipped beside the threat patterns (src/security/injection-model.ts): its
 * weights are what the training script makes of the fixtures (reproducible, fixed seed), it is
 * never trained on a set false flags are measured on, and its findings are named, excerpted and
 * refused in the scopes it judges (context files, memory, skills), not in recalled evidence.
 * Its held-out figures (leave one source out) are held in detectors-injection-held-out.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  benignParagraphs,
  benignPrompts,
  benignGuideSentences,
  benignSentences,
  benignTraining,
  fixturesDir,
  overridePhrasings,
  realSkills,
  withoutNearDuplicates,
} from '../../bench/detector-corpus.js';
import { patternsFlag, weightsModule } from '../../bench/injection-train.js';
import { INJECTION_MODEL_ID, scanText } from '../../src/security/scan.js';
import { scanSkillText } from '../../src/skills/skill-scan.js';

const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();

describe('the shipped weights', () => {
  it('are what `node scripts/train-injection-model.mjs` writes from the fixtures (same seed, same file)', () => {
    const shipped = readFileSync(join(fixturesDir(), '..', '..', 'src', 'security', 'injection-weights.ts'), 'utf8');
    const trained = weightsModule();
    expect(trained === shipped, 'src/security/injection-weights.ts differs from what the training script writes: run it').toBe(true);
  }, 120_000);
});

describe('the benign training texts', () => {
  const training = benignTraining();

  it('hold a held-out fifth and none of the texts false flags are measured on', () => {
    expect(training.filter((s) => s.split === 'held-out').length).toBeGreaterThan(training.length / 6);
    const measured = new Set([...benignParagraphs(), ...realSkills(), ...benignSentences()].map((p) => norm(p.text)));
    expect(training.filter((s) => measured.has(norm(s.text))).map((s) => s.id)).toEqual([]);
    expect(withoutNearDuplicates(benignSentences(), training).length, 'a developer sentence false flags are measured on is in the training texts').toBe(
      benignSentences().length,
    );
    expect(
      withoutNearDuplicates(benignGuideSentences(), training).length,
      "a prompt guide's sentence false flags are measured on is in the training texts",
    ).toBe(benignGuideSentences().length);
    expect(withoutNearDuplicates(benignPrompts(), training).length, 'a benign prompt false flags are measured on is in the training texts').toBe(
      benignPrompts().length,
    );
  });

  it('short developer sentences about prompts, instructions and agents (held out): the model flags none of them', () => {
    const sentences = benignSentences();
    expect(sentences.length).toBeGreaterThan(1000);
    const byModel = sentences.filter((s) => [...scanText(s.text, 'memory'), ...scanText(s.text, 'context')].some((h) => h.id === INJECTION_MODEL_ID));
    expect(
      byModel.map((s) => `${s.set} ${s.id}: ${s.text}`),
      'developer sentences the injection model refuses',
    ).toEqual([]);
  });

  // A guide to writing prompts, measured after the model was built (2026-12-06): prose about
  // prompts from end to end. The model flags two of its 750 sentences ("Others recommend that you
  // place instructions at the beginning of the prompt.", "Now let's try removing the system
  // prompt:"); a change may lower that, not raise it. Retraining with another prompt guide's
  // sentences as negatives was tried and flagged four (docs/detectors.md).
  it('sentences of a guide to writing prompts (held out): the scan flags at most the two it flagged when first measured', () => {
    const guide = benignGuideSentences();
    expect(guide.length).toBeGreaterThanOrEqual(700);
    const flagged = guide.filter((s) => scanText(s.text, 'memory').length > 0 || scanText(s.text, 'context').length > 0);
    expect(flagged.length, `prompt-guide sentences the scan refuses: ${flagged.map((s) => `${s.id}: ${s.text}`).join(' | ')}`).toBeLessThanOrEqual(2);
  });

  it('the held-out fifth is flagged at most once in a thousand by the scan as shipped', () => {
    const held = training.filter((s) => s.split === 'held-out');
    const flagged = held.filter((s) => scanText(s.text, 'context').length > 0 || scanText(s.text, 'memory').length > 0);
    expect(flagged.length, flagged.map((s) => `${s.set} ${s.id}`).join(', ')).toBeLessThanOrEqual(held.length / 1000);
  });
});

describe('a model finding', () => {
  // Attacks the patterns miss and the model flags: jailbreak_llms prompts in the wild.
  const onlyModel = overridePhrasings().filter((s) => !patternsFlag(s.text) && scanText(s.text, 'context').some((h) => h.id === INJECTION_MODEL_ID));

  it('adds attacks the patterns miss', () => {
    expect(onlyModel.length).toBeGreaterThanOrEqual(100);
  });

  it('names its rule, is refused, and quotes the text it weighs most, in context files, memory and skills', () => {
    const sample = onlyModel[0]!;
    for (const scope of ['context', 'memory', 'skill'] as const) {
      const hit = scanText(sample.text, scope).find((h) => h.id === INJECTION_MODEL_ID);
      expect(hit, `${scope}: no ${INJECTION_MODEL_ID} finding`).toBeDefined();
      expect(hit!.severity).toBe('dangerous');
      expect(hit!.category).toBe('injection');
      expect(hit!.description).toMatch(/injection model .*threshold/);
      expect(norm(sample.text)).toContain(norm(hit!.excerpt));
    }
    const skill = scanSkillText(`---\nname: helper\ndescription: a helper\n---\n\n${sample.text}\n`, 'SKILL.md');
    expect(
      skill.some((f) => f.severity === 'dangerous' && f.id === INJECTION_MODEL_ID),
      JSON.stringify(skill),
    ).toBe(true);
  });

  it('is not made on recalled evidence (quoted, not obeyed)', () => {
    expect(scanText(onlyModel[0]!.text, 'recall').some((h) => h.id === INJECTION_MODEL_ID)).toBe(false);
  });
});
