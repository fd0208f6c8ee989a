/**
 * Writing a fuzzy match back: the caller's edit (old_string → new_string) applied to the
 * file's own text of the matched span.
 *
 * The span and `old_string` are aligned piece by piece (indentation, line body, trailing
 * blanks, line ending; inside a body, characters that normalise alike). `old_string` and
 * `new_string` are diffed. A piece whose `old_string` side the caller kept whole is written
 * as the file has it; a piece the caller changed is written as the caller wrote it. So an
 * em dash, a tab, a CRLF or a trailing blank the caller did not touch survives, and what the
 * caller did change is exactly what new_string says.
 */

import { diffSequences } from './edit-script.js';
import { foldUnicode, normaliseWithMap, UNICODE_FOLDS, type CharMap, type FuzzyStrategy, type Range } from './fuzzy-match.js';

/** old_string and new_string as the matched strategy read them (escapes undone, boundary blanks trimmed). */
export type CallerView = { old: string; new: string };

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', "'": "'", '\\': '\\' };
const ESCAPE_RE = /\\([ntr"'\\])/g;

/**
 * Undoes only the escape kinds listed: the kinds `old_string` needed undone to match are
 * undone in `new_string` too, whether or not new_string also holds real newlines.
 */
function unescapeKinds(text: string, kinds: ReadonlySet<string>): string {
  return text.replace(ESCAPE_RE, (m, e: string) => (kinds.has(e) ? ESCAPES[e]! : m));
}

export function callerView(strategy: FuzzyStrategy, old: string, replacement: string): CallerView {
  if (strategy === 'escape-normalised') {
    const kinds = new Set([...old.matchAll(ESCAPE_RE)].map((m) => m[1]!));
    return { old: unescapeKinds(old, kinds), new: unescapeKinds(replacement, kinds) };
  }
  if (strategy === 'trimmed-boundary') {
    const lead = old.slice(0, old.length - old.trimStart().length);
    const trail = old.slice(old.trimEnd().length);
    let neu = replacement;
    if (lead && neu.startsWith(lead)) neu = neu.slice(lead.length);
    if (trail && neu.endsWith(trail)) neu = neu.slice(0, neu.length - trail.length);
    return { old: old.trim(), new: neu };
  }
  return { old, new: replacement };
}

// ---------------------------------------------------------------------------------------------
// Guards for non-exact matches (both from the reference implementation's matcher)

/**
 * `\'` or `\"` in both old_string and new_string but not in the matched file text: the
 * quotes were escaped in transit. Writing new_string would put backslashes into the code.
 */
export function escapeDrift(content: string, matches: Range[], view: CallerView): string | undefined {
  const matched = matches.map((m) => content.slice(m.start, m.end)).join('\n');
  for (const suspect of ["\\'", '\\"']) {
    if (view.new.includes(suspect) && view.old.includes(suspect) && !matched.includes(suspect)) {
      return (
        `old_string and new_string contain ${suspect} but the matched text of the file does not: the quote was ` +
        `backslash-escaped in transit. Read the file again and send ${suspect[1]} without a backslash.`
      );
    }
  }
  return undefined;
}

const leading = (line: string): string => /^[ \t]*/.exec(line)![0];
const opensBlock = (line: string): boolean => /[:{([]\s*$/.test(line);

/**
 * new_string lines indented deeper than any line of old_string while neither opens a block:
 * after a fuzzy match (a CRLF file quoted with LF, say) that is an indentation typo, and
 * writing it would misindent the file.
 */
export function rogueIndent(view: CallerView): string | undefined {
  const oldLines = view.old.split('\n').filter((l) => l.trim());
  const newLines = view.new.split('\n').filter((l) => l.trim());
  if (!oldLines.length || !newLines.length) return undefined;
  if (oldLines.some(opensBlock) || newLines.some(opensBlock)) return undefined;
  const maxOld = Math.max(...oldLines.map((l) => leading(l).length));
  const deeper = newLines.filter((l) => leading(l).length > maxOld);
  if (!deeper.length) return undefined;
  return (
    `new_string indents ${deeper.length} line(s) deeper than any line of old_string (${maxOld} columns) although neither ` +
    `opens a block; that looks like an indentation typo: ${JSON.stringify(deeper[0]!.trim().slice(0, 60))}. ` +
    'Check the indentation against read_file and send the patch again.'
  );
}

// ---------------------------------------------------------------------------------------------
// Applying the edit to one matched span

/** A piece of old_string [s, e) that stands for a piece of the file's span [fs, fe). */
type Atom = { s: number; e: number; fs: number; fe: number };

type LineSpan = { start: number; contentEnd: number; end: number };

function lineSpans(text: string): LineSpan[] {
  const out: LineSpan[] = [];
  let pos = 0;
  for (;;) {
    const nl = text.indexOf('\n', pos);
    const stop = nl === -1 ? text.length : nl;
    const contentEnd = stop > pos && text[stop - 1] === '\r' ? stop - 1 : stop;
    out.push({ start: pos, contentEnd, end: nl === -1 ? stop : nl + 1 });
    if (nl === -1) return out;
    pos = nl + 1;
  }
}

function bodyMap(variant: number): CharMap {
  return (ch, prev) => {
    const f = foldUnicode(ch, variant);
    return f === ' ' || f === '\t' ? (prev === ' ' ? '' : ' ') : f;
  };
}

/** Pieces of two line bodies: characters that normalise alike pair up; bodies that differ pair as a whole. */
function bodyAtoms(old: string, os: number, oe: number, region: string, fs: number, fe: number, out: Atom[]): void {
  if (os === oe && fs === fe) return;
  const a = old.slice(os, oe);
  const b = region.slice(fs, fe);
  if (a !== b) {
    for (let variant = 0; variant < UNICODE_FOLDS; variant++) {
      const na = normaliseWithMap(a, bodyMap(variant));
      const nb = normaliseWithMap(b, bodyMap(variant));
      if (na.norm !== nb.norm || !na.norm) continue;
      // Cut wherever both originals start a character at the same normalised position.
      const starts = (o: number[], p: number) => p === 0 || o[p] !== o[p - 1];
      let pa = 0;
      let pb = 0;
      for (let p = 1; p <= na.norm.length; p++) {
        if (p < na.norm.length && !(starts(na.offsets, p) && starts(nb.offsets, p))) continue;
        const ea = p < na.norm.length ? na.offsets[p]! : a.length;
        const eb = p < nb.norm.length ? nb.offsets[p]! : b.length;
        out.push({ s: os + pa, e: os + ea, fs: fs + pb, fe: fs + eb });
        pa = ea;
        pb = eb;
      }
      return;
    }
  }
  out.push({ s: os, e: oe, fs, fe });
}

function align(old: string, region: string): Atom[] {
  const o = lineSpans(old);
  const f = lineSpans(region);
  const atoms: Atom[] = [];
  for (let k = 0; k < Math.max(o.length, f.length); k++) {
    const a = o[k];
    const b = f[k];
    if (!a) {
      atoms.push({ s: old.length, e: old.length, fs: b!.start, fe: b!.end });
      continue;
    }
    if (!b) {
      atoms.push({ s: a.start, e: a.end, fs: region.length, fe: region.length });
      continue;
    }
    const ol = old.slice(a.start, a.contentEnd);
    const fl = region.slice(b.start, b.contentEnd);
    // Each line: indentation, body, trailing blanks, line ending; a blank line is all indentation.
    const oIndent = leading(ol).length;
    const fIndent = leading(fl).length;
    const oBody = ol.length - oIndent - /[ \t]*$/.exec(ol.slice(oIndent))![0].length;
    const fBody = fl.length - fIndent - /[ \t]*$/.exec(fl.slice(fIndent))![0].length;
    if (oIndent || fIndent) atoms.push({ s: a.start, e: a.start + oIndent, fs: b.start, fe: b.start + fIndent });
    bodyAtoms(old, a.start + oIndent, a.start + oIndent + oBody, region, b.start + fIndent, b.start + fIndent + fBody, atoms);
    if (oIndent + oBody < ol.length || fIndent + fBody < fl.length) {
      atoms.push({ s: a.start + oIndent + oBody, e: a.contentEnd, fs: b.start + fIndent + fBody, fe: b.contentEnd });
    }
    if (a.contentEnd < a.end || b.contentEnd < b.end) atoms.push({ s: a.contentEnd, e: a.end, fs: b.contentEnd, fe: b.end });
  }
  return atoms;
}

/** Hunks longer than this (characters, both sides) are diffed by line only: a rewrite that large has no "kept characters" worth finding. */
const CHAR_DIFF_MAX_CHARS = 20_000;

/** Which characters of `old` the caller kept, and what they inserted before each position. */
function editMarks(old: string, neu: string): { kept: Uint8Array; ins: string[] } {
  const kept = new Uint8Array(old.length);
  const ins: string[] = new Array<string>(old.length + 1).fill('');
  const ol = old.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const nl = neu.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const oOff = [0];
  for (const l of ol) oOff.push(oOff[oOff.length - 1]! + l.length);
  const nOff = [0];
  for (const l of nl) nOff.push(nOff[nOff.length - 1]! + l.length);
  const ops = diffSequences(ol, nl);
  for (let i = 0; i < ops.length; ) {
    const op = ops[i]!;
    if (op.kind === 'equal') {
      kept.fill(1, oOff[op.aStart], oOff[op.aEnd]);
      i++;
      continue;
    }
    let j = i;
    while (j < ops.length && ops[j]!.kind !== 'equal') j++;
    const oa = oOff[op.aStart]!;
    const ob = oOff[ops[j - 1]!.aEnd]!;
    const na = nOff[op.bStart]!;
    const nb = nOff[ops[j - 1]!.bEnd]!;
    if (ob - oa + (nb - na) > CHAR_DIFF_MAX_CHARS) ins[oa] += neu.slice(na, nb);
    else {
      for (const c of diffSequences(old.slice(oa, ob).split(''), neu.slice(na, nb).split(''))) {
        if (c.kind === 'equal') kept.fill(1, oa + c.aStart, oa + c.aEnd);
        else if (c.kind === 'insert') ins[oa + c.aStart] += neu.slice(na + c.bStart, na + c.bEnd);
      }
    }
    i = j;
  }
  return { kept, ins };
}

/**
 * Shifts lines from the caller's indentation to the block's: the caller's base indent (first
 * non-blank line) becomes the file's, deeper lines keep their extra indent on top of it.
 * Blank lines are left as they are; a first line that starts mid-line is not a line start.
 */
function reindent(view: CallerView, region: string, atLineStart: boolean): CallerView {
  const ol = view.old.split('\n');
  const rl = region.split('\n');
  let oldBase: string | undefined;
  let fileBase = '';
  for (let k = atLineStart ? 0 : 1; k < Math.min(ol.length, rl.length); k++) {
    if (ol[k]!.trim() && rl[k]!.trim()) {
      oldBase = leading(ol[k]!);
      fileBase = leading(rl[k]!);
      break;
    }
  }
  if (oldBase === undefined || oldBase === fileBase) return view;
  const base = oldBase;
  const shift = (text: string) =>
    text
      .split('\n')
      .map((line, j) => {
        if ((j === 0 && !atLineStart) || !line.trim()) return line;
        return leading(line).startsWith(base) ? fileBase + line.slice(base.length) : fileBase + line.trimStart();
      })
      .join('\n');
  return { old: shift(view.old), new: shift(view.new) };
}

/**
 * Literal `\t` / `\r` in new_string where the matched text has real tabs / CRs and no literal
 * ones, and new_string has no real ones itself: the model serialised the control characters.
 */
function literalControls(view: CallerView, region: string): CallerView {
  let neu = view.new;
  for (const [lit, real] of [
    ['\\t', '\t'],
    ['\\r', '\r'],
  ] as const) {
    if (neu.includes(lit) && !neu.includes(real) && !view.old.includes(lit) && region.includes(real) && !region.includes(lit)) neu = neu.split(lit).join(real);
  }
  return neu === view.new ? view : { old: view.old, new: neu };
}

/** What applyEdit needs to know about the whole file, computed once per patch. */
export type FileLineEndings = { dominant: '\r\n' | '\n'; lfOnly: boolean };

export function fileLineEndings(content: string): FileLineEndings {
  const all = content.split('\n').length - 1;
  const crlf = content.split('\r\n').length - 1;
  return { dominant: crlf > all - crlf ? '\r\n' : '\n', lfOnly: crlf === 0 };
}

/** The span's own line ending, or the file's when the span is one line. */
function lineEnding(file: FileLineEndings, region: string): '\r\n' | '\n' {
  if (region.includes('\r\n')) return '\r\n';
  if (region.includes('\n')) return '\n';
  return file.dominant;
}

/**
 * new_string written with old_string's line endings (or, when old_string is one line, the
 * span's), so the diff between them sees only the caller's edit, not a CRLF/LF mix.
 */
function sameLineEndings(view: CallerView, file: FileLineEndings, region: string): CallerView {
  let crlf: boolean;
  if (view.old.includes('\n')) crlf = !/(^|[^\r])\n/.test(view.old);
  else crlf = lineEnding(file, region) === '\r\n';
  const neu = crlf ? view.new.replace(/\r?\n/g, '\r\n') : view.new.replace(/\r\n/g, '\n');
  return neu === view.new ? view : { old: view.old, new: neu };
}

/** The text that replaces `content[range]`: the caller's edit applied to the file's own characters. */
export function applyEdit(content: string, range: Range, caller: CallerView, eols: FileLineEndings = fileLineEndings(content)): string {
  const region = content.slice(range.start, range.end);
  const atLineStart = range.start === 0 || content[range.start - 1] === '\n';
  const view = reindent(literalControls(sameLineEndings(caller, eols, region), region), region, atLineStart);
  const { kept, ins } = editMarks(view.old, view.new);
  const old = view.old;
  const eol = lineEnding(eols, region);
  const lfOnly = eols.lfOnly;
  let out = '';
  /** Whether the text written last was the caller's and ended in a blank. */
  let callerBlankBefore = false;
  const file = (text: string) => {
    out += text;
    if (text) callerBlankBefore = false;
  };
  const fromCaller = (text: string) => {
    if (!text) return;
    if (eol === '\r\n') text = text.replace(/\r?\n/g, '\r\n');
    else if (lfOnly) text = text.replace(/\r\n/g, '\n');
    // A CR the file kept followed by a newline the caller wrote is already one CRLF.
    if (eol === '\r\n' && out.endsWith('\r') && text.startsWith('\r\n')) text = text.slice(1);
    out += text;
    callerBlankBefore = /[ \t]$/.test(text);
  };
  /** Whether the caller's next insertion after old[p…] (past characters it deleted) starts with a blank. */
  const callerBlankAfter = (p: number) => {
    while (p < old.length && !kept[p] && !ins[p]) p++;
    return /^[ \t]/.test(ins[p] ?? '');
  };
  let insDone = -1;
  const insert = (p: number) => {
    if (p > insDone) {
      fromCaller(ins[p]!);
      insDone = p;
    }
  };
  const isKept = (p: number) => p < 0 || p >= old.length || kept[p] === 1;
  for (const a of align(old, region)) {
    insert(a.s);
    if (a.s === a.e) {
      // Text only the file has (indentation, trailing blanks, a CR): kept where the caller kept
      // both neighbours and wrote nothing into that line there.
      const added = ins[a.s]!;
      if (isKept(a.s - 1) && isKept(a.s) && (!added || added.endsWith('\n'))) file(region.slice(a.fs, a.fe));
      continue;
    }
    let whole = true;
    for (let p = a.s; p < a.e && whole; p++) if (!kept[p] || (p > a.s && ins[p])) whole = false;
    if (whole) {
      // A run of blanks the caller wrote blanks next to is the caller's to spell: the file's
      // run plus the caller's blank would write more space than either asked for ("y   = 1").
      const blanks = /^[ \t]+$/.test(old.slice(a.s, a.e)) && region.slice(a.fs, a.fe) !== old.slice(a.s, a.e);
      if (blanks && (callerBlankBefore || callerBlankAfter(a.e))) fromCaller(old.slice(a.s, a.e));
      else file(region.slice(a.fs, a.fe));
      continue;
    }
    let run = '';
    for (let p = a.s; p < a.e; p++) {
      if (p > a.s && ins[p]) {
        fromCaller(run);
        run = '';
        insert(p);
      }
      if (kept[p]) run += old[p];
    }
    fromCaller(run);
  }
  insert(old.length);
  return out;
}

// ---------------------------------------------------------------------------------------------
// "Did you mean": the lines of the file nearest to what the caller quoted

/** A file line must share this much (bigram Dice) with the first quoted line to be offered. */
const CLOSEST_MIN_SIMILARITY = 0.4;
const CLOSEST_SHOWN = 3;
const CLOSEST_CONTEXT_LINES = 2;
/** Quoted lines beyond this are not echoed in the hint: the first lines locate the block. */
const CLOSEST_MAX_BLOCK_LINES = 6;
const CLOSEST_MAX_LINE_CHARS = 160;

const visible = (line: string): string => {
  const lead = leading(line);
  return lead.replace(/\t/g, '→').replace(/ /g, '·') + line.slice(lead.length);
};

type Bigrams = { counts: Map<number, number>; total: number };

/** Character bigrams as numbers (two UTF-16 units), counted. */
function bigramCounts(text: string): Bigrams {
  const counts = new Map<number, number>();
  for (let i = 0; i + 1 < text.length; i++) {
    const g = text.charCodeAt(i) * 65536 + text.charCodeAt(i + 1);
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  return { counts, total: Math.max(0, text.length - 1) };
}

/** Dice coefficient over character bigrams, from counts: each quoted line's are built once, not once per file line. */
function diceOf(a: Bigrams, b: Bigrams): number {
  if (a.total === 0 || b.total === 0) return 0;
  // The score cannot reach the threshold when one side is under a quarter of the other.
  if (Math.min(a.total, b.total) * 2 < CLOSEST_MIN_SIMILARITY * (a.total + b.total)) return 0;
  let shared = 0;
  for (const [g, n] of a.counts) {
    const m = b.counts.get(g);
    if (m) shared += Math.min(n, m);
  }
  return (2 * shared) / (a.total + b.total);
}

/** Quoted lines scored against the file for the hint: enough to find a block whose first line was rewritten. */
const CLOSEST_MAX_QUOTED_LINES = 6;

/**
 * Numbered file lines most similar to what `old` quotes, or '' when nothing is close. Every
 * non-blank quoted line (the first CLOSEST_MAX_QUOTED_LINES) is an anchor: a block whose first
 * line the caller rewrote or invented (a comment it meant to add) is still found by the lines
 * after it. A window is placed where the best anchor's block would start.
 */
export function closestLines(content: string, old: string): string {
  const oldLines = old.split('\n').map((l) => l.replace(/\r$/, ''));
  const anchors = oldLines.flatMap((line, k) => (line.trim() && k < CLOSEST_MAX_QUOTED_LINES ? [{ k, text: line.trim() }] : []));
  if (!anchors.length || !content) return '';
  const lines = content.split('\n').map((l) => l.replace(/\r$/, ''));
  // A file that ends with a newline has no empty line after it.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const grams = anchors.map((a) => ({ ...a, bigrams: bigramCounts(a.text) }));
  const scored: Array<{ score: number; index: number; k: number }> = [];
  lines.forEach((line, index) => {
    const t = line.trim();
    if (t.length < 2) return;
    const mine = bigramCounts(t);
    let best = { score: 0, k: 0 };
    for (const a of grams) {
      const score = diceOf(a.bigrams, mine);
      if (score > best.score) best = { score, k: a.k };
    }
    if (best.score >= CLOSEST_MIN_SIMILARITY) scored.push({ score: best.score, index, k: best.k });
  });
  if (!scored.length) return '';
  scored.sort((x, y) => y.score - x.score || x.index - y.index);
  const span = Math.min(oldLines.length, CLOSEST_MAX_BLOCK_LINES);
  const shown: Array<[number, number]> = [];
  const parts: string[] = [];
  for (const { index, k } of scored) {
    if (parts.length === CLOSEST_SHOWN) break;
    const start = Math.max(0, index - Math.min(k, CLOSEST_MAX_BLOCK_LINES));
    const from = Math.max(0, start - CLOSEST_CONTEXT_LINES);
    const to = Math.min(lines.length, start + span + CLOSEST_CONTEXT_LINES);
    if (shown.some(([a, b]) => from < b && a < to)) continue;
    shown.push([from, to]);
    const width = String(to).length;
    parts.push(
      lines
        .slice(from, to)
        .map((l, j) => `${String(from + j + 1).padStart(width)}| ${l.length > CLOSEST_MAX_LINE_CHARS ? `${l.slice(0, CLOSEST_MAX_LINE_CHARS)}…` : l}`)
        .join('\n'),
    );
  }
  let hint = parts.join('\n---\n');
  const best = lines[scored[0]!.index]!;
  const sent = oldLines[scored[0]!.k]!;
  if (best.trim() === sent.trim() && best !== sent) {
    hint += `\nOnly whitespace differs (→ tab, · space):\n  file has: ${visible(best)}\n  you sent: ${visible(sent)}\n` + 'Send the whitespace the file has.';
  }
  return hint;
}
