/**
 * Fuzzy find-and-replace, shared by the `patch` file tool and `skill_manage` patch.
 *
 * Models quote text imperfectly: trailing spaces dropped, indentation changed, "\n" typed
 * as two characters, straight quotes for curly ones, a middle line half-remembered. Each
 * strategy below tolerates one kind of imperfection; they are tried from strictest to
 * loosest and the first strategy that finds anything decides. Several matches without
 * `replaceAll` are refused with their line numbers, because guessing which one was meant
 * silently edits the wrong place.
 *
 * Normalisation only decides *where* the match is. What is written is the file's own text
 * with the caller's edit applied to it (see ./fuzzy-apply.ts): characters of the span that
 * `new_string` leaves unchanged keep the file's spelling (em dashes, tabs, CRLF, trailing
 * blanks), lines the caller adds are indented relative to the matched block, and nothing
 * outside the span is touched (DESIGN.md §8).
 */

import { applyEdit, callerView, closestLines, escapeDrift, fileLineEndings, rogueIndent } from './fuzzy-apply.js';
import {
  allIndexes,
  collapseBlanks,
  foldUnicode,
  lineWindows,
  mappedMatches,
  patternLines,
  similarity,
  splitLines,
  UNICODE_FOLDS,
  withoutCrBeforeLf,
  FUZZY_STRATEGIES,
  type FuzzyStrategy,
  type Line,
  type Range,
} from './fuzzy-match.js';

export { FUZZY_STRATEGIES, type FuzzyStrategy } from './fuzzy-match.js';

/**
 * Strategies that accept a block which only resembles `old_string`. Safe for one unique
 * replacement the caller pointed at; never for replace_all ("replace every approximate
 * match" rewrites text that does not occur in the file), nor for a short `old_string`.
 */
const SIMILARITY_STRATEGIES: ReadonlySet<FuzzyStrategy> = new Set(['block-anchor', 'context-aware']);

/**
 * Below three non-blank lines or twenty non-blank characters, a similarity score is decided
 * by a couple of characters (`a = 1` vs `a = 2` is 80 % similar), so a similarity match would
 * be a coincidence, not a recollection of the block.
 */
const SIMILARITY_MIN_LINES = 3;
const SIMILARITY_MIN_CHARS = 20;

/** Block-anchor: share of the middle that must be similar when first and last lines match (one candidate / several). */
const BLOCK_ANCHOR_MIN_SIMILARITY = 0.5;
const BLOCK_ANCHOR_MIN_SIMILARITY_AMONG_SEVERAL = 0.7;
/** Context-aware: every non-blank line of `old_string` must be at least this similar to the line it lands on. */
const CONTEXT_AWARE_MIN_LINE_SIMILARITY = 0.8;
/** Ambiguity errors quote this many of the matches. */
const AMBIGUOUS_MATCHES_SHOWN = 5;

export type FuzzyResult = { content: string; count: number; strategy: FuzzyStrategy } | { error: string };

// ---------------------------------------------------------------------------------------------
// Strategies

function blockAnchor(content: string, old: string): Range[] {
  const pat = patternLines(old).map((l) => foldUnicode(l, 0).trim());
  if (pat.length < 3 || !pat[0] || !pat[pat.length - 1]) return [];
  const lines = splitLines(content);
  const trimmed = lines.map((l) => foldUnicode(l.text, 0).trim());
  const candidates: number[] = [];
  for (let i = 0; i + pat.length <= lines.length; i++) {
    if (trimmed[i] === pat[0] && trimmed[i + pat.length - 1] === pat[pat.length - 1]) candidates.push(i);
  }
  const threshold = candidates.length === 1 ? BLOCK_ANCHOR_MIN_SIMILARITY : BLOCK_ANCHOR_MIN_SIMILARITY_AMONG_SEVERAL;
  const middle = pat.slice(1, -1).join('\n');
  return candidates
    .filter((i) => similarity(trimmed.slice(i + 1, i + pat.length - 1).join('\n'), middle) >= threshold)
    .map((i) => windowRange(content, lines, i, pat.length, old));
}

function contextAware(content: string, old: string): Range[] {
  const pat = patternLines(old).map((l) => l.trim());
  const lines = splitLines(content);
  const trimmed = lines.map((l) => l.text.trim());
  const out: Range[] = [];
  for (let i = 0; i + pat.length <= lines.length; i++) {
    // The anchors first: cheap, and they rule out almost every window.
    if (similarity(pat[0]!, trimmed[i]!) < CONTEXT_AWARE_MIN_LINE_SIMILARITY) continue;
    if (similarity(pat[pat.length - 1]!, trimmed[i + pat.length - 1]!) < CONTEXT_AWARE_MIN_LINE_SIMILARITY) continue;
    let ok = true;
    for (let k = 1; k < pat.length - 1 && ok; k++) {
      if (pat[k] && similarity(pat[k]!, trimmed[i + k]!) < CONTEXT_AWARE_MIN_LINE_SIMILARITY) ok = false;
    }
    if (!ok) continue;
    out.push(windowRange(content, lines, i, pat.length, old));
    i += pat.length - 1;
  }
  return out;
}

function windowRange(content: string, lines: Line[], first: number, count: number, old: string): Range {
  const last = lines[first + count - 1]!;
  const end = old.endsWith('\n') && last.end < content.length ? last.end + 1 : last.end;
  return { start: lines[first]!.start, end };
}

const ASCII = /^[\x00-\x7f]*$/;

function unicodeNormalised(content: string, old: string): Range[] {
  // Folding leaves ASCII as it is: on ASCII text this strategy would only repeat stricter ones.
  if (ASCII.test(content) && ASCII.test(old)) return [];
  for (let variant = 0; variant < UNICODE_FOLDS; variant++) {
    const fold = (ch: string) => foldUnicode(ch, variant);
    const found = mappedMatches(content, old, fold);
    if (found.length) return found;
  }
  for (let variant = 0; variant < UNICODE_FOLDS; variant++) {
    const found = lineWindows(content, old, (l) => foldUnicode(l, variant).trim());
    if (found.length) return found;
  }
  return [];
}

type Finder = (content: string, old: string) => Range[];

const FINDERS: Record<FuzzyStrategy, Finder> = {
  exact: (c, o) => allIndexes(c, o).map((i) => ({ start: i, end: i + o.length })),
  // Trailing spaces, tabs and CRs are invisible in most editors and often lost in quoting.
  'line-trimmed': (c, o) => lineWindows(c, o, (l) => l.trimEnd()),
  'whitespace-normalised': (c, o) => mappedMatches(c, o, collapseBlanks),
  'indentation-flexible': (c, o) => lineWindows(c, o, (l) => l.trim()),
  'escape-normalised': (c, o) => {
    const u = callerView('escape-normalised', o, '').old;
    if (u === o) return [];
    const exact = allIndexes(c, u).map((i) => ({ start: i, end: i + u.length }));
    // A literal "\r\n" typed for a file with LF endings, or "\n" for a CRLF file.
    return exact.length ? exact : mappedMatches(c, u, withoutCrBeforeLf);
  },
  'trimmed-boundary': (c, o) => {
    const t = o.trim();
    return t === o || !t ? [] : allIndexes(c, t).map((i) => ({ start: i, end: i + t.length }));
  },
  'unicode-normalised': unicodeNormalised,
  'block-anchor': blockAnchor,
  'context-aware': contextAware,
};

/** "exact, line-trimmed, … and context-aware": kept in step with FUZZY_STRATEGIES. */
const TRIED = `${FUZZY_STRATEGIES.slice(0, -1).join(', ')} and ${FUZZY_STRATEGIES[FUZZY_STRATEGIES.length - 1]}`;

function longEnoughForSimilarity(old: string): boolean {
  const lines = old.split('\n').filter((l) => l.trim());
  return lines.length >= SIMILARITY_MIN_LINES && old.replace(/\s+/g, '').length >= SIMILARITY_MIN_CHARS;
}

function lineOf(content: string, offset: number): number {
  let n = 1;
  for (let i = content.indexOf('\n'); i !== -1 && i < offset; i = content.indexOf('\n', i + 1)) n++;
  return n;
}

function describeMatches(content: string, matches: Range[]): string {
  const rows = matches.slice(0, AMBIGUOUS_MATCHES_SHOWN).map((m) => {
    const lineStart = content.lastIndexOf('\n', m.start - 1) + 1;
    const nl = content.indexOf('\n', lineStart);
    const text = content.slice(lineStart, nl === -1 ? content.length : nl).trim();
    return `  L${lineOf(content, m.start)}: ${text.length > 80 ? `${text.slice(0, 77)}...` : text}`;
  });
  if (matches.length > AMBIGUOUS_MATCHES_SHOWN) rows.push(`  … and ${matches.length - AMBIGUOUS_MATCHES_SHOWN} more`);
  return rows.join('\n');
}

/**
 * A line-based match in a CRLF file ends between the CR and the LF of its last line; the CR
 * belongs to the line ending after the span, not to the quoted text.
 */
function withoutLineEndCr(content: string, m: Range, old: string): Range {
  const cr = m.end - 1 > m.start && content[m.end] === '\n' && content[m.end - 1] === '\r' && !old.endsWith('\r');
  return cr ? { start: m.start, end: m.end - 1 } : m;
}

/** Finds `old` in `content` with the first strategy that matches, and replaces it with `replacement`. */
export function fuzzyFindAndReplace(content: string, old: string, replacement: string, replaceAll = false): FuzzyResult {
  if (old === '') return { error: 'old_string is empty; give the exact text to replace.' };
  if (!old.trim()) return { error: 'old_string is only whitespace, which matches blank lines anywhere; give non-blank text to replace.' };
  if (old === replacement) return { error: 'old_string and new_string are identical; nothing would change.' };
  const similarityAllowed = longEnoughForSimilarity(old);
  for (const strategy of FUZZY_STRATEGIES) {
    const similar = SIMILARITY_STRATEGIES.has(strategy);
    if (similar && !similarityAllowed) continue;
    const matches = FINDERS[strategy](content, old).map((m) => withoutLineEndCr(content, m, old));
    if (matches.length === 0) continue;
    if (similar && replaceAll) {
      return {
        error:
          `old_string only resembles ${matches.length === 1 ? 'one block' : `${matches.length} blocks`} of the file (strategy ${strategy}); ` +
          'replace_all applies only to text that occurs in the file. Quote the text exactly (whitespace included), or patch one place at a time.',
      };
    }
    if (matches.length > 1 && !replaceAll) {
      const lines = matches.map((m) => lineOf(content, m.start));
      return {
        error:
          `old_string matches ${matches.length} places (lines ${lines.join(', ')}; strategy ${strategy}). ` +
          `Include more surrounding context to make it unique, or set replace_all to replace every one.\n${describeMatches(content, matches)}`,
      };
    }
    const view = callerView(strategy, old, replacement);
    if (strategy !== 'exact') {
      const refusal = escapeDrift(content, matches, view) ?? rogueIndent(view);
      if (refusal) return { error: refusal };
    }
    const eols = fileLineEndings(content);
    const parts: string[] = [];
    let at = 0;
    for (const m of [...matches].sort((a, b) => a.start - b.start)) {
      parts.push(content.slice(at, m.start), applyEdit(content, m, view, eols));
      at = m.end;
    }
    parts.push(content.slice(at));
    return { content: parts.join(''), count: matches.length, strategy };
  }
  const hint = closestLines(content, old);
  return {
    error:
      `old_string was not found (tried ${TRIED} matching). Read the file again and quote it exactly.` + (hint ? `\nClosest lines in the file:\n${hint}` : ''),
  };
}
