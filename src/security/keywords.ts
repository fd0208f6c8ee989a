/**
 * Finding which of a few hundred lower-case ASCII keywords occur in a text, in one pass
 * (Aho–Corasick as a dense transition table). gitleaks prefilters its rules the same way;
 * a JavaScript regex alternation of the same keywords costs about three times as much,
 * because V8 tries the alternatives one by one at every position.
 */

/** Table columns: the ASCII range (a power of two: the row is found by a shift). Keywords are ASCII; any other character restarts the search. */
const ALPHABET = 128;

export type KeywordMatcher = {
  keywords: readonly string[];
  /** Transition table: next state = table[state * ALPHABET + charCode]. */
  table: Int32Array;
  /** For each state, the keywords that end there (suffix links folded in), or -1 for none: an index into `outputLists`. */
  output: Int32Array;
  outputLists: ReadonlyArray<readonly number[]>;
};

export function buildKeywordMatcher(keywords: readonly string[]): KeywordMatcher {
  // The trie, in the table's rows (state 0 is the root, so 0 in a row means "no child yet"), with each state's children.
  const most = 1 + keywords.reduce((n, w) => n + w.length, 0);
  const trie = new Int32Array(most * ALPHABET);
  const children: number[][] = [[]];
  const ends: number[][] = [[]];
  keywords.forEach((word, index) => {
    let s = 0;
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      if (c >= ALPHABET) throw new Error(`keyword ${word} is not ASCII`);
      let next = trie[s * ALPHABET + c]!;
      if (next === 0) {
        next = children.length;
        children.push([]);
        ends.push([]);
        trie[s * ALPHABET + c] = next;
        children[s]!.push(c);
      }
      s = next;
    }
    ends[s]!.push(index);
  });
  const states = children.length;
  const table = trie.slice(0, states * ALPHABET);
  const fail = new Int32Array(states);
  const outputs: Array<number[] | undefined> = new Array(states);
  outputs[0] = ends[0]!.length ? ends[0] : undefined;
  // Breadth-first: a state's failure link and row are complete before its children's. The root's
  // row is the trie's (a missing child is the root); another state's row is its failure state's,
  // with its own children over it.
  const queue: number[] = children[0]!.map((c) => table[c]!);
  for (let q = 0; q < queue.length; q++) {
    const s = queue[q]!;
    const out = [...ends[s]!, ...(outputs[fail[s]!] ?? [])];
    outputs[s] = out.length ? out : undefined;
    const row = s * ALPHABET;
    const own = children[s]!.map((c) => table[row + c]!);
    table.copyWithin(row, fail[s]! * ALPHABET, (fail[s]! + 1) * ALPHABET);
    children[s]!.forEach((c, k) => {
      const next = own[k]!;
      fail[next] = table[row + c]!; // the failure state's move on c: its row is complete
      table[row + c] = next;
      queue.push(next);
    });
  }
  const output = new Int32Array(states).fill(-1);
  const outputLists: number[][] = [];
  outputs.forEach((out, state) => {
    if (!out) return;
    output[state] = outputLists.length;
    outputLists.push(out);
  });
  return { keywords, table, output, outputLists };
}

/**
 * Indices of the keywords found in `text`, compared case-insensitively (ASCII). `stop`, when
 * given, ends the scan as soon as it returns true for a found keyword.
 */
export function scanKeywords(m: KeywordMatcher, text: string, stop?: (index: number) => boolean): Set<number> {
  const found = new Set<number>();
  const { table, output, outputLists } = m;
  let s = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c >= ALPHABET) {
      s = 0;
      continue;
    }
    if (c >= 65 && c <= 90) c += 32;
    s = table[(s << 7) | c]!;
    const o = output[s]!;
    if (o >= 0) {
      for (const k of outputLists[o]!) {
        found.add(k);
        if (stop?.(k)) return found;
      }
    }
  }
  return found;
}
