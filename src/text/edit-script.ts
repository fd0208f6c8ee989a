/**
 * A shortest edit script between two sequences (Myers, "An O(ND) Difference Algorithm").
 *
 * Used by the fuzzy patch to tell which parts of `old_string` the caller kept in
 * `new_string`: only those parts may take the file's own characters back.
 */

export type DiffOp = { kind: 'equal' | 'delete' | 'insert'; aStart: number; aEnd: number; bStart: number; bEnd: number };

/**
 * Edit distance beyond which the middle of the two sequences is treated as one replacement.
 * The trace costs O(D²) memory; 2,000 edits is far beyond what one patch call changes and
 * keeps the worst case to a few megabytes.
 */
const MAX_EDIT_DISTANCE = 2000;

export function diffSequences<T>(a: readonly T[], b: readonly T[]): DiffOp[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ops: DiffOp[] = [];
  if (pre > 0) ops.push({ kind: 'equal', aStart: 0, aEnd: pre, bStart: 0, bEnd: pre });
  ops.push(...middle(a, b, pre, a.length - suf, pre, b.length - suf));
  if (suf > 0) ops.push({ kind: 'equal', aStart: a.length - suf, aEnd: a.length, bStart: b.length - suf, bEnd: b.length });
  return merge(ops);
}

function middle<T>(a: readonly T[], b: readonly T[], a0: number, a1: number, b0: number, b1: number): DiffOp[] {
  const n = a1 - a0;
  const m = b1 - b0;
  if (n === 0 && m === 0) return [];
  if (n === 0) return [{ kind: 'insert', aStart: a0, aEnd: a0, bStart: b0, bEnd: b1 }];
  if (m === 0) return [{ kind: 'delete', aStart: a0, aEnd: a1, bStart: b0, bEnd: b0 }];
  const replace: DiffOp[] = [
    { kind: 'delete', aStart: a0, aEnd: a1, bStart: b0, bEnd: b0 },
    { kind: 'insert', aStart: a1, aEnd: a1, bStart: b0, bEnd: b1 },
  ];
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, d, n, m, a0, b0);
    }
  }
  return replace;
}

function backtrack(trace: Int32Array[], offset: number, dEnd: number, n: number, m: number, a0: number, b0: number): DiffOp[] {
  const ops: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    const snakeX = prevK === k + 1 ? prevX : prevX + 1;
    const snakeY = snakeX - k;
    if (x > snakeX) ops.push({ kind: 'equal', aStart: a0 + snakeX, aEnd: a0 + x, bStart: b0 + snakeY, bEnd: b0 + y });
    if (prevK === k + 1) ops.push({ kind: 'insert', aStart: a0 + prevX, aEnd: a0 + prevX, bStart: b0 + prevY, bEnd: b0 + prevY + 1 });
    else ops.push({ kind: 'delete', aStart: a0 + prevX, aEnd: a0 + prevX + 1, bStart: b0 + prevY, bEnd: b0 + prevY });
    x = prevX;
    y = prevY;
  }
  if (x > 0) ops.push({ kind: 'equal', aStart: a0, aEnd: a0 + x, bStart: b0, bEnd: b0 + y });
  return ops.reverse();
}

/** Joins neighbouring operations of the same kind. */
function merge(ops: DiffOp[]): DiffOp[] {
  const out: DiffOp[] = [];
  for (const op of ops) {
    const last = out[out.length - 1];
    if (last && last.kind === op.kind && last.aEnd === op.aStart && last.bEnd === op.bStart) {
      last.aEnd = op.aEnd;
      last.bEnd = op.bEnd;
    } else out.push({ ...op });
  }
  return out;
}
