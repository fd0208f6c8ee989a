/**
 * scripts/go-regex.mjs turns gitleaks' Go RE2 patterns into JavaScript ones. Node 20 has no
 * inline modifiers, so case-insensitive parts are spelt out; these cases hold the rewrite to
 * RE2's meaning.
 */
import { describe, expect, it } from 'vitest';
import { translateGoRegex } from '../../scripts/go-regex.mjs';

const re = (go: string) => {
  const { source, flags } = translateGoRegex(go);
  return new RegExp(source, flags);
};

describe('Go RE2 → JavaScript', () => {
  it('a pattern case-insensitive throughout keeps the i flag', () => {
    expect(translateGoRegex('(?i)abc[a-z]{2}')).toEqual({ source: 'abc[a-z]{2}', flags: 'i' });
  });

  it('(?i:…) groups are case-insensitive, the rest is not', () => {
    const r = re('(?i:key)=[a-z]{3}\\b');
    expect(r.test('KEY=abc')).toBe(true);
    expect(r.test('KEY=ABC')).toBe(false);
  });

  it('(?-i:…) inside a case-insensitive pattern stays case-sensitive', () => {
    const r = re('(?i)token|(?-i:[Aa]pi|API)');
    expect(r.test('TOKEN')).toBe(true);
    expect(r.test('api')).toBe(true);
    expect(r.test('aPI')).toBe(false);
  });

  it('a mid-pattern (?i) covers the rest of its group', () => {
    const r = re('\\b(p8e-(?i)[a-z0-9]{4})x');
    expect(r.test('p8e-AB12x')).toBe(true);
    expect(r.test('P8E-ab12x')).toBe(false);
    expect(r.test('p8e-ab12X')).toBe(false);
  });

  it('POSIX classes, \\z, (?s:.) and Go’s dot', () => {
    expect(re('pat[[:alnum:]]{3}\\z').test('patA1b')).toBe(true);
    expect(re('pat[[:alnum:]]{3}\\z').test('patA1b\n')).toBe(false);
    expect(re('a(?s:.)b').test('a\nb')).toBe(true);
    expect(re('a.b').test('a\nb')).toBe(false);
    expect(re('a.b').test('a\rb')).toBe(true);
  });

  it('a literal ] first in a class, and unknown syntax is refused', () => {
    expect(re('\\[[^]]+]').test('[abc]')).toBe(true);
    expect(() => translateGoRegex('\\pL')).toThrow(/unsupported escape/);
  });
});
