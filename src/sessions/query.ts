/**
 * From what a person (or a model) types to what FTS5 accepts. Every term leaves here as a
 * double-quoted FTS5 string, so no user text can reach the query parser as syntax: quotes,
 * column filters, `^`, `+`, parentheses, NEAR and dangling AND/OR/NOT are all neutralised.
 * Also the cheap excerpt used instead of FTS5 `snippet()` (which costs a second pass over
 * every ranked row when it sits in the ranking query).
 */

/** Longer input is cut: nobody searches for a paragraph, and a huge MATCH is slow to parse. */
export const QUERY_MAX_CHARS = 512;
/** Terms after this many are ignored; each one is another doclist to intersect. */
export const QUERY_MAX_TERMS = 32;
/** The trigram index cannot narrow a pattern shorter than one trigram (it would scan every row). */
const TRIGRAM_MIN_CHARS = 3;

export type QueryTerm = {
  /** The words of the term as the unicode61 tokenizer will see them ("chat-send" → ["chat", "send"]). */
  words: string[];
  /** The cleaned text the user typed, for substring (trigram) search and excerpts. */
  raw: string;
  /** `foo*`: match words starting with foo. */
  prefix: boolean;
};

export type FtsQuery = {
  /** MATCH expression for the word index, '' when the input has nothing searchable. */
  match: string;
  /**
   * Substrings for the trigram index (`content LIKE '%s%'`, all must occur): terms of 3+
   * characters, split at LIKE's own wildcards `%` and `_`. Empty when none is long enough.
   */
  substrings: string[];
  terms: QueryTerm[];
  /** The input contains Han, kana or Hangul: the word tokenizer cannot split those, the trigram index can. */
  cjk: boolean;
};

type Item = { kind: 'term'; term: QueryTerm } | { kind: 'op'; op: 'AND' | 'OR' | 'NOT' };

/** A word as FTS5's unicode61 tokenizer splits it (letters, digits, marks, private use). */
export const WORD_PARTS = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const COLUMN_FILTER = /^[\p{L}_][\p{L}\p{N}_]*:(?=.)/u;

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

function termOf(text: string, allowPrefix: boolean): QueryTerm | undefined {
  let raw = text.replace(/"/g, ' ').trim();
  let prefix = false;
  if (allowPrefix && /[\p{L}\p{N}]\*+$/u.test(raw)) {
    prefix = true;
    raw = raw.replace(/\*+$/u, '');
  }
  const words = raw.match(WORD_PARTS) ?? [];
  if (words.length === 0) return undefined;
  // Leading/trailing punctuation is never part of what was meant ("(foo)", "bar.").
  raw = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  return { words, raw, prefix };
}

function tokenize(input: string): Item[] {
  const items: Item[] = [];
  // Balanced "…" pairs are phrases; a stray quote is just a separator.
  const re = /"([^"]*)"/g;
  let last = 0;
  const bare = (chunk: string) => {
    for (let word of chunk.replace(/"/g, ' ').split(/\s+/)) {
      if (!word) continue;
      if (word === 'AND' || word === 'OR' || word === 'NOT') {
        items.push({ kind: 'op', op: word });
        continue;
      }
      // Column filters (`content:x`), NEAR groups and unary operators are syntax, not text.
      word = word
        .replace(COLUMN_FILTER, '')
        .replace(/^NEAR\(/, '')
        .replace(/^[-+^]+/, '');
      const term = termOf(word, true);
      if (term) items.push({ kind: 'term', term });
    }
  };
  for (let m = re.exec(input); m; m = re.exec(input)) {
    bare(input.slice(last, m.index));
    const term = termOf(m[1]!, false);
    if (term) items.push({ kind: 'term', term });
    last = m.index + m[0].length;
  }
  bare(input.slice(last));
  return items;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Turns any text into a safe FTS5 query; never throws. */
export function toFtsQuery(input: string): FtsQuery {
  const text = String(input ?? '')
    .normalize('NFC')
    .slice(0, QUERY_MAX_CHARS);
  const items = tokenize(text);
  const parts: string[] = [];
  const terms: QueryTerm[] = [];
  let pendingOp: 'OR' | 'NOT' | undefined;
  for (const item of items) {
    if (item.kind === 'op') {
      // AND is what juxtaposition means already; OR and NOT survive only between two terms.
      if (item.op !== 'AND' && terms.length > 0) pendingOp = item.op;
      continue;
    }
    if (terms.length >= QUERY_MAX_TERMS) break;
    const t = item.term;
    const expr = quote(t.words.join(' ')) + (t.prefix ? '*' : '');
    if (pendingOp && parts.length > 0) parts.push(pendingOp);
    pendingOp = undefined;
    parts.push(expr);
    terms.push(t);
  }
  const substrings = terms.flatMap((t) => t.raw.split(/[%_]+/)).filter((r) => [...r].length >= TRIGRAM_MIN_CHARS);
  return {
    match: parts.join(' '),
    substrings: [...new Set(substrings)],
    terms,
    cjk: hasCjk(text),
  };
}

/** A plain phrase of every word of the input: the fallback when a query is refused anyway. */
export function phraseQuery(input: string): string {
  const words =
    String(input ?? '')
      .slice(0, QUERY_MAX_CHARS)
      .match(WORD_PARTS) ?? [];
  return words.length ? quote(words.slice(0, QUERY_MAX_TERMS).join(' ')) : '';
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regular expression that finds any of the terms in stored text, case-insensitively. */
export function termPattern(terms: QueryTerm[]): RegExp | undefined {
  const alts = terms.map((t) => {
    const body = t.words.map(escapeRegex).join('[^\\p{L}\\p{N}]+');
    return t.prefix ? body + '[\\p{L}\\p{N}]*' : body;
  });
  for (const t of terms) if (t.raw && hasCjk(t.raw)) alts.push(escapeRegex(t.raw));
  return alts.length ? new RegExp(alts.join('|'), 'iu') : undefined;
}

/** Characters of context in an excerpt; about two lines of a terminal. */
export const EXCERPT_CHARS = 160;

/**
 * The part of `text` around the first match of `pattern`, whitespace collapsed, with `…`
 * where it was cut. Falls back to the start of the text when nothing matches (a diacritic or
 * stemming difference between the tokenizer and the regex).
 */
export function excerpt(text: string, pattern: RegExp | undefined, width = EXCERPT_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= width) return flat;
  const at = pattern ? flat.search(pattern) : -1;
  let start = at < 0 ? 0 : Math.max(0, at - Math.floor(width / 3));
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  let end = Math.min(flat.length, start + width);
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start + width / 2) end = space;
  }
  return (start > 0 ? '…' : '') + flat.slice(start, end) + (end < flat.length ? '…' : '');
}
