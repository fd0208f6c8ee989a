/**
 * A unified diff (`git apply` and `patch -p1` read it) between two versions of one text
 * file, so a proposed change to a repository file can be reviewed as a patch and applied by
 * git, which refuses it when the file no longer matches.
 */
import { diffSequences } from './edit-script.js';

/** Lines of context around each change, as `git diff` shows by default. */
const CONTEXT_LINES = 3;

/** Splits text into lines keeping track of a missing final newline (git's "\ No newline at end of file"). */
function linesOf(text: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith('\n');
  const lines = (finalNewline ? text.slice(0, -1) : text).split('\n');
  return { lines, finalNewline };
}

/**
 * The patch that turns `before` into `after` for the repository-relative `path`; `''` when
 * they are equal. `before === undefined` makes a patch that creates the file.
 */
export function unifiedDiff(path: string, before: string | undefined, after: string): string {
  if (before === after) return '';
  const a = linesOf(before ?? '');
  const b = linesOf(after);
  // The last line compares unequal when only one side ends in a newline, as git sees it.
  const key = (l: { lines: string[]; finalNewline: boolean }) => l.lines.map((s, i) => (i === l.lines.length - 1 && !l.finalNewline ? `${s}\u0000` : s));
  const ops = diffSequences(key(a), key(b));
  type Line = { tag: ' ' | '-' | '+'; text: string; noEol: boolean; ai: number; bi: number };
  const all: Line[] = [];
  for (const op of ops) {
    if (op.kind === 'equal')
      for (let i = op.aStart, j = op.bStart; i < op.aEnd; i++, j++)
        all.push({ tag: ' ', text: a.lines[i]!, noEol: i === a.lines.length - 1 && !a.finalNewline, ai: i, bi: j });
    if (op.kind === 'delete')
      for (let i = op.aStart; i < op.aEnd; i++)
        all.push({ tag: '-', text: a.lines[i]!, noEol: i === a.lines.length - 1 && !a.finalNewline, ai: i, bi: op.bStart });
    if (op.kind === 'insert')
      for (let j = op.bStart; j < op.bEnd; j++)
        all.push({ tag: '+', text: b.lines[j]!, noEol: j === b.lines.length - 1 && !b.finalNewline, ai: op.aStart, bi: j });
  }
  const changed = all.flatMap((l, i) => (l.tag === ' ' ? [] : [i]));
  if (changed.length === 0) return '';
  // Hunks: runs of changes whose context windows touch.
  const hunks: Array<[number, number]> = [];
  for (const i of changed) {
    const start = Math.max(0, i - CONTEXT_LINES);
    const end = Math.min(all.length, i + CONTEXT_LINES + 1);
    const last = hunks[hunks.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else hunks.push([start, end]);
  }
  const out = [`diff --git a/${path} b/${path}`, ...(before === undefined ? ['new file mode 100644', '--- /dev/null'] : [`--- a/${path}`]), `+++ b/${path}`];
  for (const [start, end] of hunks) {
    const slice = all.slice(start, end);
    const aCount = slice.filter((l) => l.tag !== '+').length;
    const bCount = slice.filter((l) => l.tag !== '-').length;
    const first = slice[0]!;
    const aStart = aCount === 0 ? first.ai : first.ai + 1;
    const bStart = bCount === 0 ? first.bi : first.bi + 1;
    out.push(`@@ -${aStart}${aCount === 1 ? '' : `,${aCount}`} +${bStart}${bCount === 1 ? '' : `,${bCount}`} @@`);
    for (const l of slice) {
      out.push(`${l.tag}${l.text}`);
      if (l.noEol) out.push('\\ No newline at end of file');
    }
  }
  return out.join('\n') + '\n';
}
