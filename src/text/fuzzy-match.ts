/**
 * Where a quoted text is in a file: line geometry, character normalisations that remember
 * which original character each normalised one came from, and a similarity score. The
 * strategies in ./fuzzy-replace.ts are built from these.
 */

/** The ways a quoted text is looked for, in the order they are tried (exact first). */
export type FuzzyStrategy =
  | 'exact'
  | 'line-trimmed'
  | 'whitespace-normalised'
  | 'indentation-flexible'
  | 'escape-normalised'
  | 'trimmed-boundary'
  | 'unicode-normalised'
  | 'block-anchor'
  | 'context-aware';

export const FUZZY_STRATEGIES: FuzzyStrategy[] = [
  'exact',
  'line-trimmed',
  'whitespace-normalised',
  'indentation-flexible',
  'escape-normalised',
  'trimmed-boundary',
  'unicode-normalised',
  'block-anchor',
  'context-aware',
];

/** A match: a half-open character range of the original content. */
export type Range = { start: number; end: number };

export type Line = { text: string; start: number; end: number };

export function splitLines(content: string): Line[] {
  const lines: Line[] = [];
  let pos = 0;
  for (;;) {
    const nl = content.indexOf('\n', pos);
    if (nl === -1) {
      lines.push({ text: content.slice(pos), start: pos, end: content.length });
      return lines;
    }
    lines.push({ text: content.slice(pos, nl), start: pos, end: nl });
    pos = nl + 1;
  }
}

export function patternLines(old: string): string[] {
  const lines = old.split('\n');
  // A pattern that ends with a newline means "these whole lines"; the empty tail is not a line.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Finds windows of content lines whose normalised text equals the pattern's, line for line. */
export function lineWindows(content: string, old: string, norm: (line: string) => string): Range[] {
  const lines = splitLines(content);
  const pat = patternLines(old).map(norm);
  const normed = lines.map((l) => norm(l.text));
  const out: Range[] = [];
  const trailingNewline = old.endsWith('\n');
  for (let i = 0; i + pat.length <= lines.length; i++) {
    let ok = true;
    for (let k = 0; k < pat.length && ok; k++) if (normed[i + k] !== pat[k]) ok = false;
    if (!ok) continue;
    const last = lines[i + pat.length - 1]!;
    const end = trailingNewline && last.end < content.length ? last.end + 1 : last.end;
    out.push({ start: lines[i]!.start, end });
    i += pat.length - 1;
  }
  return out;
}

/** Non-overlapping occurrences, left to right, as String.prototype.replaceAll counts them. */
export function allIndexes(haystack: string, needle: string): number[] {
  const out: number[] = [];
  if (!needle) return out;
  let i = haystack.indexOf(needle);
  while (i !== -1) {
    out.push(i);
    i = haystack.indexOf(needle, i + needle.length);
  }
  return out;
}

/** Maps one original character (with the last character already produced and the next original one) to its normal form. */
export type CharMap = (ch: string, prev: string, next: string) => string;

/**
 * Normalises `text` character by character and keeps, for every character of the result,
 * the offset of the original character it came from, so a match found in the normalised
 * text maps back to an exact range of the original.
 */
export function normaliseWithMap(text: string, map: CharMap): { norm: string; offsets: number[] } {
  let norm = '';
  const offsets: number[] = [];
  let prev = '';
  for (let i = 0; i < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const next = text.charAt(i + ch.length);
    const out = map(ch, prev, next);
    for (let k = 0; k < out.length; k++) offsets.push(i);
    norm += out;
    if (out.length) prev = out[out.length - 1]!;
    i += ch.length;
  }
  offsets.push(text.length);
  return { norm, offsets };
}

/** Occurrences of `old` in `content` when both are normalised by `map`, as ranges of the original content. */
export function mappedMatches(content: string, old: string, map: CharMap): Range[] {
  const c = normaliseWithMap(content, map);
  const p = normaliseWithMap(old, map).norm;
  if (!p.trim()) return [];
  const out: Range[] = [];
  for (const i of allIndexes(c.norm, p)) {
    const j = i + p.length;
    // A match must start and end on whole original characters: "it.." is not "it…".
    if (i > 0 && c.offsets[i] === c.offsets[i - 1]) continue;
    if (j < c.norm.length && c.offsets[j] === c.offsets[j - 1]) continue;
    const last = c.offsets[j - 1]!;
    let end = last + String.fromCodePoint(content.codePointAt(last)!).length;
    // A match that ends in a collapsed blank takes the whole run of blanks, as it was typed.
    if (p.endsWith(' ')) end = j < c.norm.length ? c.offsets[j]! : content.length;
    out.push({ start: c.offsets[i]!, end });
  }
  return out;
}

export const collapseBlanks: CharMap = (ch, prev) => (ch === ' ' || ch === '\t' ? (prev === ' ' ? '' : ' ') : ch);

export const withoutCrBeforeLf: CharMap = (ch, _prev, next) => (ch === '\r' && next === '\n' ? '' : ch);

/**
 * Typographic characters a model types as ASCII. The em dash has two readings: `--` (as the
 * reference implementation and most Markdown writers spell it) and `-`; UNICODE_FOLDS says how
 * many readings there are, and folds are tried in order.
 */
const UNICODE_LOOKALIKES: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u2032': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u201F': '"',
  '\u2033': '"',
  '\u00AB': '"',
  '\u00BB': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2026': '...',
  '\u200B': '',
  '\u2060': '',
  '\uFEFF': '',
};
const EM_DASH_READINGS = ['--', '-'];
export const UNICODE_FOLDS = EM_DASH_READINGS.length;

/** Folds typographic characters and compatibility forms (ideographic and other spaces, full-width forms) to ASCII. */
export function foldUnicode(text: string, variant: number): string {
  let out = '';
  for (const ch of text) {
    if (ch.charCodeAt(0) < 0x80) out += ch;
    else if (ch === '\u2014') out += EM_DASH_READINGS[variant]!;
    else out += UNICODE_LOOKALIKES[ch] ?? ch.normalize('NFKC');
  }
  return out;
}

/**
 * Similarity in [0, 1]: twice the longest common subsequence over the total length, the
 * measure difflib's ratio() approximates (the reference implementation's thresholds were
 * tuned on it). Pairs whose comparison would cost more than this many cells are called
 * dissimilar: a quoted block that long is not a half-remembered one.
 */
const SIMILARITY_MAX_CELLS = 25_000_000;

export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return 0;
  if (n * m > SIMILARITY_MAX_CELLS) return 0;
  let prev = new Uint32Array(m + 1);
  let cur = new Uint32Array(m + 1);
  for (let i = 1; i <= n; i++) {
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) cur[j] = ai === b.charCodeAt(j - 1) ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    [prev, cur] = [cur, prev];
  }
  return (2 * prev[m]!) / (n + m);
}
