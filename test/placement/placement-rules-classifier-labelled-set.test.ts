/**
 * The rule-based classifier on the labelled sentences (test/fixtures/placement/, sources and
 * licences in its README.md): at least 85% correct owners on each set — the
 * development set the rules were written against and the held-out set written afterwards and
 * never tuned on — and a repository rule is never placed in USER.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyByRules } from '../../src/placement/classify-by-rules.js';
import { enforceableRule } from '../../src/placement/enforce.js';
import { REPO_ROOT } from '../helpers/env.js';

type Labelled = { sentence: string; owner: string; source: string };
const load = (name: string): Labelled[] => JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'placement', name), 'utf8')) as Labelled[];

/** The owner the rules give, with the deterministic enforceability check that turns a rule into a config rule. */
function ruleOwner(sentence: string): string {
  const c = classifyByRules(sentence);
  return c.owner === 'authority' && enforceableRule(sentence) ? 'config-rule' : c.owner;
}

describe.each([
  ['development set', 'sentences.json'],
  ['held-out set', 'held-out.json'],
])('the rule-based classifier on the %s', (_name, file) => {
  const set = load(file);

  it('covers every owner', () => {
    expect(new Set(set.map((s) => s.owner))).toEqual(new Set(['authority', 'config-rule', 'user', 'repo-memory', 'skill', 'none']));
  });

  it('places at least 85% of the sentences with their labelled owner', () => {
    const wrong = set.filter((s) => ruleOwner(s.sentence) !== s.owner).map((s) => `${s.owner} → ${ruleOwner(s.sentence)}: ${s.sentence}`);
    expect((set.length - wrong.length) / set.length, wrong.join('\n')).toBeGreaterThanOrEqual(0.85);
  });

  it('never places a repository rule in USER.md', () => {
    const leaked = set.filter((s) => (s.owner === 'authority' || s.owner === 'config-rule') && ruleOwner(s.sentence) === 'user');
    expect(leaked.map((s) => s.sentence)).toEqual([]);
  });
});

describe('the labelled set', () => {
  const all = [...load('sentences.json'), ...load('held-out.json')];
  const owners = ['authority', 'config-rule', 'user', 'repo-memory', 'skill', 'none'];

  it('holds at least 100 sentences, each with one of the five owners (authority split by enforceability) and a cited source', () => {
    expect(all.length).toBeGreaterThanOrEqual(100);
    const readme = readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'placement', 'README.md'), 'utf8');
    const uncited = [...new Set(all.map((s) => s.source))].filter((src) => !readme.includes(`\`${src}\``));
    expect(uncited).toEqual([]);
    expect(all.filter((s) => !owners.includes(s.owner))).toEqual([]);
  });

  it('the rules place at least 85% of all of it, and no repository rule in USER.md', () => {
    const right = all.filter((s) => ruleOwner(s.sentence) === s.owner).length;
    expect(right / all.length).toBeGreaterThanOrEqual(0.85);
    expect(all.filter((s) => (s.owner === 'authority' || s.owner === 'config-rule') && ruleOwner(s.sentence) === 'user')).toEqual([]);
  });
});

describe('what the rules say about the seed’s sentence', () => {
  it('a repository rule, a task constraint and a preference each get their owner and four reasons', () => {
    const rule = classifyByRules('Do not edit generated files directly in this repository.');
    expect(rule.owner).toBe('authority');
    expect(Object.keys(rule.reasons)).toEqual(['scope', 'lifetime', 'type', 'readTiming']);
    expect(rule.reasons.scope).toContain('this repository');
    expect(classifyByRules('Do not edit generated files for this task.').owner).toBe('none');
    expect(classifyByRules('In all my projects, do not edit generated files by hand.').owner).toBe('user');
  });

  it('an enforceable rule names the globs or the regex it needs; an unenforceable one none', () => {
    expect(enforceableRule('Never edit files under src/generated/; they are produced by npm run gen.')).toMatchObject({ protect: ['src/generated/**'] });
    expect(enforceableRule('The files in public/ are build output; never edit them, edit static/ instead.')).toMatchObject({ protect: ['public/**'] });
    expect(enforceableRule('Never commit console.log statements.')).toMatchObject({ forbid: 'console\\.log\\(' });
    expect(enforceableRule('Do not edit generated files directly in this repository.')).toBeUndefined();
  });
});
