/**
 * Fuzzy find-and-replace, shared by the `patch` file tool and `skill_manage` patch.
 *
 * Models quote text imperfectly: trailing spaces dropped, indentation changed, "\n" typed
 * as two characters, straight quotes for curly ones, a middle line half-remembered. Each
 * strategy below tolerates one kind of imperfection; they are tried from strictest to
 * loosest and the first strategy that finds anything decides. Several matches without
 * `replaceAll` are refused with their line numbers, because guessing which one was meant
 * silently edits the wrong place.
 */

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

export type FuzzyResult = { content: string; count: number; strategy: FuzzyStrategy } | { error: string };

/** A match is a half-open character range of the original content. */
type Range = { start: number; end: number };

/** Block-anchor: share of the middle lines that must be similar when the first and last lines match. */
const BLOCK_ANCHOR_MIN_SIMILARITY = 0.5;
/** Context-aware: share of the non-blank pattern lines that must appear, in place, in the window. */
const CONTEXT_AWARE_MIN_LINE_RATIO = 0.5;
/** Block-anchor may match a block this many times longer than the pattern (lines added in between). */
const BLOCK_ANCHOR_MAX_STRETCH = 2;

// ---------------------------------------------------------------------------------------------
// Line geometry

type Line = { text: string; start: number; end: number };

function splitLines(content: string): Line[] {
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

function patternLines(old: string): string[] {
  const lines = old.split('\n');
  // A pattern that ends with a newline means "these whole lines"; the empty tail is not a line.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Finds windows of content lines whose normalised text equals the pattern's, line for line. */
function lineWindows(content: string, old: string, norm: (line: string) => string): Range[] {
  const lines = splitLines(content);
  const pat = patternLines(old).map(norm);
  const out: Range[] = [];
  const trailingNewline = old.endsWith('\n');
  for (let i = 0; i + pat.length <= lines.length; i++) {
    let ok = true;
    for (let k = 0; k < pat.length; k++) {
      if (norm(lines[i + k]!.text) !== pat[k]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    const last = lines[i + pat.length - 1]!;
    const end = trailingNewline && last.end < content.length ? last.end + 1 : last.end;
    out.push({ start: lines[i]!.start, end });
    i += pat.length - 1;
  }
  return out;
}

function allIndexes(haystack: string, needle: string): number[] {
  const out: number[] = [];
  if (!needle) return out;
  let i = haystack.indexOf(needle);
  while (i !== -1) {
    out.push(i);
    i = haystack.indexOf(needle, i + needle.length);
  }
  return out;
}

/**
 * Normalises `text` character by character and keeps, for every character of the result,
 * the offset of the original character it came from, so a match found in the normalised
 * text maps back to an exact range of the original.
 */
function normaliseWithMap(text: string, map: (ch: string, prev: string) => string): { norm: string; offsets: number[] } {
  let norm = '';
  const offsets: number[] = [];
  let prev = '';
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    const out = map(ch, prev);
    for (let k = 0; k < out.length; k++) offsets.push(i);
    norm += out;
    if (out.length) prev = out[out.length - 1]!;
    i += ch.length;
  }
  offsets.push(text.length);
  return { norm, offsets };
}

function mappedMatches(content: string, old: string, map: (ch: string, prev: string) => string): Range[] {
  const c = normaliseWithMap(content, map);
  const p = normaliseWithMap(old, map).norm;
  if (!p.trim()) return [];
  return allIndexes(c.norm, p).map((i) => {
    const start = c.offsets[i]!;
    // The end is just past the original character that produced the last matched one.
    const lastOrig = c.offsets[i + p.length - 1]!;
    const cp = content.codePointAt(lastOrig)!;
    return { start, end: lastOrig + String.fromCodePoint(cp).length };
  });
}

// ---------------------------------------------------------------------------------------------
// Strategies

const collapseBlanks = (ch: string, prev: string) => (ch === ' ' || ch === '\t' ? (prev === ' ' ? '' : ' ') : ch);

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
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u00A0': ' ',
  '\u2007': ' ',
  '\u202F': ' ',
  '\u2026': '...',
  '\u200B': '',
  '\uFEFF': '',
};
const unicodeFold = (ch: string) => UNICODE_LOOKALIKES[ch] ?? ch.normalize('NFKC');

function unescapeModelText(s: string): string {
  return s.replace(/\\(r\\n|n|t|r|"|'|\\)/g, (_m, e: string) => {
    switch (e) {
      case 'n':
        return '\n';
      case 'r\\n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case '\\':
        return '\\';
      default:
        return e;
    }
  });
}

function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return 0;
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  for (let i = 1; i <= n; i++) {
    const cur = [i];
    for (let j = 1; j <= m; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return 1 - prev[m]! / Math.max(n, m);
}

function blockAnchor(content: string, old: string): Range[] {
  const pat = patternLines(old).map((l) => l.trim());
  if (pat.length < 3 || !pat[0] || !pat[pat.length - 1]) return [];
  const lines = splitLines(content);
  const trimmed = lines.map((l) => l.text.trim());
  const middle = pat.slice(1, -1);
  const found: Range[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (trimmed[i] !== pat[0]) continue;
    const maxEnd = Math.min(lines.length - 1, i + Math.max(pat.length * BLOCK_ANCHOR_MAX_STRETCH, pat.length + 2));
    for (let j = i + 2; j <= maxEnd; j++) {
      if (trimmed[j] !== pat[pat.length - 1]) continue;
      const between = trimmed.slice(i + 1, j);
      if (similarity(between.join('\n'), middle.join('\n')) >= BLOCK_ANCHOR_MIN_SIMILARITY) found.push({ start: lines[i]!.start, end: lines[j]!.end });
      break;
    }
  }
  return found;
}

function contextAware(content: string, old: string): Range[] {
  const pat = patternLines(old).map((l) => l.trim());
  const meaningful = pat.filter(Boolean).length;
  if (pat.length < 2 || meaningful < 2) return [];
  const lines = splitLines(content);
  const trimmed = lines.map((l) => l.text.trim());
  let best = 0;
  const scored: Array<Range & { ratio: number; first: number }> = [];
  for (let i = 0; i + pat.length <= lines.length; i++) {
    let same = 0;
    for (let k = 0; k < pat.length; k++) if (pat[k] && trimmed[i + k] === pat[k]) same++;
    const ratio = same / meaningful;
    if (ratio < CONTEXT_AWARE_MIN_LINE_RATIO) continue;
    best = Math.max(best, ratio);
    scored.push({ start: lines[i]!.start, end: lines[i + pat.length - 1]!.end, ratio, first: i });
  }
  // Keep only the best-scoring windows that do not overlap each other.
  const out: Range[] = [];
  let lastLine = -1;
  for (const s of scored) {
    if (s.ratio !== best || s.first <= lastLine) continue;
    out.push({ start: s.start, end: s.end });
    lastLine = s.first + pat.length - 1;
  }
  return out;
}

type Finder = (content: string, old: string) => Range[];

const FINDERS: Record<FuzzyStrategy, Finder> = {
  exact: (c, o) => allIndexes(c, o).map((i) => ({ start: i, end: i + o.length })),
  // Trailing spaces, tabs and CRs are invisible in most editors and often lost in quoting.
  'line-trimmed': (c, o) => lineWindows(c, o, (l) => l.trimEnd()),
  'whitespace-normalised': (c, o) => mappedMatches(c, o, collapseBlanks),
  'indentation-flexible': (c, o) => lineWindows(c, o, (l) => l.trimStart().trimEnd()),
  'escape-normalised': (c, o) => {
    const u = unescapeModelText(o);
    return u === o ? [] : allIndexes(c, u).map((i) => ({ start: i, end: i + u.length }));
  },
  'trimmed-boundary': (c, o) => {
    const t = o.trim();
    return t === o || !t ? [] : allIndexes(c, t).map((i) => ({ start: i, end: i + t.length }));
  },
  'unicode-normalised': (c, o) => mappedMatches(c, o, (ch) => unicodeFold(ch)),
  'block-anchor': blockAnchor,
  'context-aware': contextAware,
};

/** "exact, line-trimmed, … and context-aware": kept in step with FUZZY_STRATEGIES. */
const TRIED = `${FUZZY_STRATEGIES.slice(0, -1).join(', ')} and ${FUZZY_STRATEGIES[FUZZY_STRATEGIES.length - 1]}`;

function lineOf(content: string, offset: number): number {
  let n = 1;
  for (let i = content.indexOf('\n'); i !== -1 && i < offset; i = content.indexOf('\n', i + 1)) n++;
  return n;
}

/** Finds `old` in `content` with the first strategy that matches, and replaces it with `replacement`. */
export function fuzzyFindAndReplace(content: string, old: string, replacement: string, replaceAll = false): FuzzyResult {
  if (old === '') return { error: 'old_string is empty; give the exact text to replace.' };
  if (old === replacement) return { error: 'old_string and new_string are identical; nothing would change.' };
  for (const strategy of FUZZY_STRATEGIES) {
    const matches = FINDERS[strategy](content, old);
    if (matches.length === 0) continue;
    if (matches.length > 1 && !replaceAll) {
      const lines = matches.map((m) => lineOf(content, m.start));
      return {
        error:
          `old_string matches ${matches.length} places (lines ${lines.join(', ')}; strategy ${strategy}). ` +
          'Include more surrounding context to make it unique, or set replace_all to replace every one.',
      };
    }
    let newText = replacement;
    if (strategy === 'escape-normalised' && !replacement.includes('\n')) newText = unescapeModelText(replacement);
    let out = content;
    for (const m of [...matches].sort((a, b) => b.start - a.start)) out = out.slice(0, m.start) + newText + out.slice(m.end);
    return { content: out, count: matches.length, strategy };
  }
  return { error: `old_string was not found (tried ${TRIED} matching). Read the file again and quote it exactly.` };
}
