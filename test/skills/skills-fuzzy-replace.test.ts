import { describe, expect, it } from 'vitest';
import { fuzzyFindAndReplace, FUZZY_STRATEGIES, type FuzzyStrategy } from '../../src/text/fuzzy-replace.js';

type Case = { strategy: FuzzyStrategy; content: string; old: string; replacement: string; expected: string };

// Each case is built so that every earlier (stricter) strategy finds nothing.
const CASES: Case[] = [
  { strategy: 'exact', content: 'a\nrun npm test\nb\n', old: 'run npm test', replacement: 'run npm ci', expected: 'a\nrun npm ci\nb\n' },
  {
    strategy: 'line-trimmed',
    content: 'steps:  \n  one \t\n  two\n',
    old: 'steps:\n  one',
    replacement: 'steps:\n  zero',
    expected: 'steps:  \n  zero\n  two\n',
  },
  {
    strategy: 'whitespace-normalised',
    content: 'x\nconst  a =\t\t1;\ny\n',
    old: 'const a = 1;',
    replacement: 'const a = 2;',
    expected: 'x\nconst  a =\t\t2;\ny\n',
  },
  {
    strategy: 'indentation-flexible',
    content: 'def f():\n        if x:\n            go()\nend\n',
    old: 'if x:\ngo()',
    replacement: 'if y:\nstop()',
    expected: 'def f():\n        if y:\n            stop()\nend\n',
  },
  { strategy: 'escape-normalised', content: 'first\nsecond\nthird\n', old: 'first\\nsecond', replacement: 'one\\ntwo', expected: 'one\ntwo\nthird\n' },
  {
    strategy: 'trimmed-boundary',
    content: 'call deploy(now) please\n',
    old: '\n\ndeploy(now)\n\n',
    replacement: 'deploy(later)',
    expected: 'call deploy(later) please\n',
  },
  {
    strategy: 'unicode-normalised',
    content: 'Say \u201chello\u201d \u2014 then wait\u2026\n',
    old: 'Say "hello" - then wait...',
    replacement: 'Say "bye"',
    expected: 'Say \u201cbye\u201d\n',
  },
  {
    strategy: 'block-anchor',
    content: 'start\n  step one\n  step two: build it\n  step three\nfinish\nafter\n',
    old: 'start\n  step one\n  step 2: build\n  step three\nfinish',
    replacement: 'START\nFINISH',
    expected: 'START\nFINISH\nafter\n',
  },
  {
    strategy: 'context-aware',
    content: 'header\nalpha()\nbeta()\ngamma()\nomega\n',
    old: 'headers\nalpha()\nbeta()\ngamma()',
    replacement: 'replaced',
    expected: 'replaced\nomega\n',
  },
];

describe('fuzzy find-and-replace', () => {
  it('covers every strategy in the documented order', () => {
    expect(CASES.map((c) => c.strategy)).toEqual(FUZZY_STRATEGIES);
  });

  it.each(CASES)('$strategy finds and replaces what stricter strategies miss', ({ strategy, content, old, replacement, expected }) => {
    const r = fuzzyFindAndReplace(content, old, replacement);
    expect(r).toEqual({ content: expected, count: 1, strategy });
  });

  it('refuses several matches without replace_all, naming their lines', () => {
    const r = fuzzyFindAndReplace('x = 1\ny = 2\nx = 1\n', 'x = 1', 'x = 3');
    expect('error' in r && r.error).toMatch(/matches 2 places \(lines 1, 3; strategy exact\)/);
  });

  it('replaces every match with replace_all', () => {
    expect(fuzzyFindAndReplace('x = 1\ny = 2\nx = 1\n', 'x = 1', 'x = 3', true)).toEqual({ content: 'x = 3\ny = 2\nx = 3\n', count: 2, strategy: 'exact' });
  });

  it('refuses fuzzy ambiguity too', () => {
    const amb = fuzzyFindAndReplace('  a  b\nx\n  a \t b\n', 'a b', 'c');
    expect('error' in amb && amb.error).toMatch(/lines 1, 3; strategy whitespace-normalised/);
  });

  it('says what it tried when nothing matches, and refuses empty or no-op patches', () => {
    expect(fuzzyFindAndReplace('abc', 'zzz', 'y')).toEqual({ error: expect.stringMatching(/not found .*context-aware/) });
    expect(fuzzyFindAndReplace('abc', '  \n ', 'y')).toEqual({ error: expect.stringMatching(/only whitespace/) });
    expect(fuzzyFindAndReplace('abc', '', 'y')).toEqual({ error: expect.stringMatching(/empty/) });
    expect(fuzzyFindAndReplace('abc', 'b', 'b')).toEqual({ error: expect.stringMatching(/identical/) });
  });
});
