/**
 * The keyword matcher that prefilters gitleaks' rules (src/security/keywords.ts: Aho–Corasick as
 * a transition table, built from the trie's rows) finds exactly the keywords a plain search of
 * the lower-cased text finds: gitleaks' own keyword list and small lists whose keywords overlap,
 * nest and share suffixes (where a wrong failure link loses a match), over texts built from
 * their pieces, in mixed case, with characters beyond ASCII between them. A rule runs only when
 * one of its keywords is found, so a keyword missed is a secret not looked for.
 */
import { describe, expect, it } from 'vitest';
import { gitleaksFileRuleSet } from '../../src/security/gitleaks.js';
import { buildKeywordMatcher, scanKeywords } from '../../src/security/keywords.js';

/** What a plain search finds: each keyword that occurs in the text with its ASCII letters lower-cased. */
const plain = (keywords: readonly string[], text: string) => {
  const lower = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return keywords.flatMap((k, i) => (lower.includes(k) ? [i] : [])).sort((a, b) => a - b);
};
const matchers = new Map<readonly string[], ReturnType<typeof buildKeywordMatcher>>();
const found = (keywords: readonly string[], text: string) => {
  const m = matchers.get(keywords) ?? buildKeywordMatcher(keywords);
  matchers.set(keywords, m);
  return [...scanKeywords(m, text)].sort((a, b) => a - b);
};

/** A seeded generator: the same texts every run, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Texts of pieces of the keywords (prefixes, suffixes, whole ones), joined by filler, some letters upper-cased. */
function texts(keywords: readonly string[], n: number, seed: number): string[] {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const fillers = [' ', '_', '-', 'x', 'é', '→', '\n', '"', '=', ''];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let text = '';
    const parts = 1 + Math.floor(r() * 8);
    for (let p = 0; p < parts; p++) {
      const k = pick(keywords);
      const cut = Math.floor(r() * (k.length + 1));
      const piece = r() < 0.4 ? k : r() < 0.5 ? k.slice(0, cut) : k.slice(cut);
      text += [...piece].map((c) => (r() < 0.3 ? c.toUpperCase() : c)).join('') + pick(fillers);
    }
    out.push(text);
  }
  return out;
}

describe('the keyword matcher', () => {
  const lists: Array<[string, readonly string[]]> = [
    ["gitleaks' keywords", gitleaksFileRuleSet().keywords.keywords],
    ['nested and overlapping', ['he', 'she', 'his', 'hers', 'her', 'e', 'ers']],
    ['one letter and its runs', ['a', 'aa', 'aaa', 'ab', 'ba', 'b']],
    ['shared suffixes', ['token', 'oken', 'ken', 'en', 'xoxb-', 'oxb', 'b-']],
  ];

  it.each(lists)('finds what a plain search finds: %s', (_name, keywords) => {
    const wrong: string[] = [];
    for (const text of texts(keywords, 3000, keywords.length)) {
      const want = plain(keywords, text);
      const got = found(keywords, text);
      if (JSON.stringify(got) !== JSON.stringify(want))
        wrong.push(`${JSON.stringify(text)}: found ${got.map((i) => keywords[i]).join(',')}; a plain search finds ${want.map((i) => keywords[i]).join(',')}`);
    }
    expect(wrong.slice(0, 5), `${wrong.length} texts whose keywords the matcher got wrong`).toEqual([]);
  });

  it('a character beyond ASCII inside a keyword breaks it; between keywords it does not hide them', () => {
    const keywords = ['ghp_', 'token'];
    expect(found(keywords, 'gh\u00e9p_ tok\u2192en')).toEqual([]);
    expect(found(keywords, '\u00e9GHP_\u2192TOKEN\u00e9')).toEqual([0, 1]);
  });

  it('a keyword that is not ASCII is refused when the matcher is built', () => {
    expect(() => buildKeywordMatcher(['caf\u00e9'])).toThrow(/not ASCII/);
  });
});
