/**
 * Parsers for the two git outputs the engine reads: `git diff --raw -z` (what changed,
 * with renames, modes and object ids) and a `-U0` patch (which lines were added, at which
 * new-file line numbers); and the text of a file git shows as binary (decoded from a byte-order
 * mark, or from UTF-16/32 told by its NUL bytes) with the lines it adds. Parsers only; running
 * git is stored-diff.ts.
 */

export type ChangeStatus = 'A' | 'M' | 'D' | 'R' | 'C' | 'T' | 'U' | 'X';

export type Change = {
  status: ChangeStatus;
  /** Path after the change (for a deletion: the deleted path). */
  path: string;
  /** Path before a rename or copy. */
  oldPath?: string;
  /** A rename's or copy's status with its similarity, as git prints it (`R092`). */
  score?: string;
  oldMode: string;
  newMode: string;
  /** Object ids before and after (all zeros: none, or a work-tree file git did not hash). */
  oldId?: string;
  newId?: string;
};

/** gitlinks (submodules): their "content" is a commit id, never lines to judge. */
export const GITLINK_MODE = '160000';
export const SYMLINK_MODE = '120000';

/** Parses `git diff --raw -z` output: `:old new sha sha S\0path\0` (`R`/`C`: two paths); a merge's combined `::…` record has one path. */
export function parseRawZ(out: Buffer | string): Change[] {
  const parts = (typeof out === 'string' ? out : out.toString('utf8')).split('\0');
  const changes: Change[] = [];
  for (let i = 0; i < parts.length; i++) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    if (meta.startsWith('::')) {
      // A merge's combined listing (`--cc`): the paths that differ from every parent, one path each;
      // each parent's mode then the merge's, each parent's blob then the merge's, one status letter per parent.
      const fields = meta.replace(/^:+/, '').split(' ');
      const parents = meta.length - meta.replace(/^:+/, '').length;
      changes.push({
        status: (fields[fields.length - 1]!.charAt(0) || 'M') as ChangeStatus,
        path: parts[i + 1]!,
        oldMode: fields[0] ?? '',
        newMode: fields[parents] ?? '',
        oldId: fields[parents + 1] ?? '',
        newId: fields[2 * parents + 1] ?? '',
      });
      i += 1;
      continue;
    }
    const [oldMode = '', newMode = '', oldId = '', newId = '', score = ''] = meta.slice(1).split(' ');
    const status = score.charAt(0) as ChangeStatus;
    if (status === 'R' || status === 'C') {
      changes.push({ status, score, oldPath: parts[i + 1]!, path: parts[i + 2]!, oldMode, newMode, oldId, newId });
      i += 2;
    } else {
      changes.push({ status, path: parts[i + 1]!, oldMode, newMode, oldId, newId });
      i += 1;
    }
  }
  return changes;
}

/**
 * Splits the stream of `git diff --raw -z -p`: the NUL-terminated raw listing, one empty
 * record, then the patch. The listing is kept (it is small); patch bytes are handed on as
 * they arrive. Works for any chunking of the stream.
 */
export function rawPatchSplitter(onPatch: (chunk: Buffer) => void): { push(chunk: Buffer): void; raw(): Buffer } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let inPatch = false;
  return {
    push(chunk) {
      if (inPatch) return onPatch(chunk);
      const from = Math.max(0, bytes - 1); // a "\0\0" may straddle two chunks
      chunks.push(chunk);
      bytes += chunk.length;
      const all = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      // The listing ends at the first empty record: paths are never empty.
      const end = all.indexOf('\0\0', from);
      if (end === -1) return;
      chunks.length = 0;
      chunks.push(all.subarray(0, end + 1));
      inPatch = true;
      if (end + 2 < all.length) onPatch(all.subarray(end + 2));
    },
    raw: () => Buffer.concat(chunks),
  };
}

/** Parses `git ls-files -z` style output. */
export function parseNulList(out: Buffer | string): string[] {
  return (typeof out === 'string' ? out : out.toString('utf8')).split('\0').filter((p) => p.length > 0);
}

/**
 * Undoes git's C-style path quoting (`"a\tb\303\251"`): used when a path holds a quote,
 * a backslash or a control character (core.quotePath=false keeps other bytes raw).
 */
export function unquoteGitPath(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return s;
  const body = s.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The path of a `+++ b/<path>` line; undefined for `/dev/null` (a deletion). */
export function pathOfPlusLine(rest: string): string | undefined {
  // git appends a TAB after a name that contains a space, so the line parses unambiguously.
  const raw = rest.endsWith('\t') ? rest.slice(0, -1) : rest;
  if (raw === '/dev/null') return undefined;
  const name = unquoteGitPath(raw);
  return name.startsWith('b/') ? name.slice(2) : name;
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
/** A merge's combined hunk (`--cc`): one `@` more than its parents, a `-from` per parent, the merge's `+to`. */
const COMBINED_HUNK = /^(@{3,}) (?:-\d+(?:,\d+)? )+\+(\d+)(?:,\d+)? \1/;

export type PatchVisitor = {
  /** A file section with hunks begins; return false to skip its lines. */
  file(path: string): boolean;
  /** An added line, with its 1-based line number in the new file. `cut`: the line was longer than the splitter's cap. */
  added(path: string, line: number, text: string, cut: boolean): void;
};

/**
 * A push parser for a unified diff (any -U). Feed it lines; it calls the visitor for each
 * added line with the line number the line has in the new file. A merge's combined diff
 * (`--cc`) has a column per parent before each line: a line is added when every column says
 * `+` (no parent has it), and in the merge's file unless a column says `-`.
 */
export function patchParser(visitor: PatchVisitor): (line: Buffer, cut: boolean) => void {
  let path: string | undefined;
  let wanted = false;
  let inHunk = false;
  let next = 0;
  /** Prefix columns of the current hunk's lines: 1, or a combined hunk's number of parents. */
  let cols = 1;
  return (buf, cut) => {
    const first = buf[0];
    if (inHunk) {
      if (cols === 1) {
        if (first === 0x2b /* + */) {
          if (wanted) visitor.added(path!, next, decodeLine(buf.subarray(1)), cut);
          next++;
          return;
        }
        if (first === 0x20 /* space */) {
          next++;
          return;
        }
        if (first === 0x2d /* - */ || first === 0x5c /* \ No newline */) return;
      } else if (first === 0x20 || first === 0x2b || first === 0x2d) {
        let removed = false;
        let everywhere = true;
        for (let k = 0; k < cols; k++) {
          const c = buf[k];
          if (c === 0x2d) removed = true;
          else if (c !== 0x2b) everywhere = false;
        }
        if (removed) return;
        if (everywhere && wanted) visitor.added(path!, next, decodeLine(buf.subarray(cols)), cut);
        next++;
        return;
      } else if (first === 0x5c) return;
      if (first === 0x40 /* @ */) {
        const head = buf.toString('latin1', 0, Math.min(buf.length, 200));
        const m = cols === 1 ? HUNK.exec(head) : COMBINED_HUNK.exec(head);
        if (m) {
          next = Number(m[cols === 1 ? 1 : 2]);
          return;
        }
      }
      inHunk = false; // anything else ends the file's hunks (normally `diff --git`)
    }
    // Header lines that matter start with d(iff), +(++) or @(@); skip the rest undecoded.
    if (first !== 0x64 && first !== 0x2b && first !== 0x40) return;
    const head = buf.toString('utf8');
    if (head.startsWith('diff ')) {
      path = undefined;
      wanted = false;
    } else if (head.startsWith('+++ ')) {
      path = pathOfPlusLine(head.slice(4));
      wanted = path !== undefined && visitor.file(path);
    } else if (head.startsWith('@@@')) {
      const m = COMBINED_HUNK.exec(head);
      if (m) {
        cols = m[1]!.length - 1;
        next = Number(m[2]);
        inHunk = path !== undefined;
      }
    } else if (head.startsWith('@@ ')) {
      const m = HUNK.exec(head);
      if (m) {
        cols = 1;
        next = Number(m[1]);
        inHunk = path !== undefined;
      }
    }
  };
}

function decodeLine(buf: Buffer): string {
  const end = buf.length > 0 && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length; // CRLF files
  return buf.toString('utf8', 0, end);
}

/** Regular files (with or without the executable bit): the only changes whose content is lines. */
export function isRegularFile(mode: string): boolean {
  return mode === '100644' || mode === '100755';
}

/** Regular files and symlinks: the changes whose blob is content (a symlink's blob is its target, which git shows as a line). */
export function isContentMode(mode: string): boolean {
  return isRegularFile(mode) || mode === SYMLINK_MODE;
}

/**
 * Byte-order marks, longest first (UTF-32LE starts like UTF-16LE). A file with one is text
 * in that encoding, however binary its bytes look to git (UTF-16 holds a NUL per ASCII letter).
 */
const BOMS: Array<{ bytes: number[]; decode(body: Buffer): string }> = [
  { bytes: [0x00, 0x00, 0xfe, 0xff], decode: (b) => utf32(b, false) },
  { bytes: [0xff, 0xfe, 0x00, 0x00], decode: (b) => utf32(b, true) },
  { bytes: [0xef, 0xbb, 0xbf], decode: (b) => b.toString('utf8') },
  { bytes: [0xfe, 0xff], decode: (b) => new TextDecoder('utf-16be').decode(b) },
  { bytes: [0xff, 0xfe], decode: (b) => new TextDecoder('utf-16le').decode(b) },
];

/** Code points turned into text per slice of this many (String.fromCodePoint takes them as arguments). */
const CODE_POINTS_PER_SLICE = 8192;

function utf32(b: Buffer, little: boolean): string {
  const parts: string[] = [];
  const points: number[] = [];
  for (let i = 0; i + 4 <= b.length; i += 4) {
    const cp = little ? b.readUInt32LE(i) : b.readUInt32BE(i);
    points.push(cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? cp : 0xfffd);
    if (points.length === CODE_POINTS_PER_SLICE) parts.push(String.fromCodePoint(...points.splice(0)));
  }
  parts.push(String.fromCodePoint(...points));
  return parts.join('');
}

/**
 * UTF-16 and UTF-32 text without a byte-order mark, told by where its NUL bytes fall: in
 * mostly-ASCII text every code unit has NUL high bytes, at the same places in each unit, and a
 * non-NUL low byte. Binary data has its NULs anywhere. The shares below are of the bytes at one
 * place of the unit: text with some letters beyond ASCII still has most high bytes NUL.
 */
const WIDE_HIGH_NUL_MIN = 0.6;
const WIDE_LOW_NUL_MAX = 0.1;

/** How to decode `buf` when it is UTF-16 or UTF-32 without a byte-order mark: from which byte, with what; undefined when it is not. */
function wideEncodingOf(buf: Buffer): { offset: number; decode(body: Buffer): string } | undefined {
  if (buf.length < 4 || buf.indexOf(0) === -1) return undefined;
  const nuls = [0, 0, 0, 0];
  for (let i = 0; i < buf.length; i++) if (buf[i] === 0) nuls[i & 3]!++;
  const at = [0, 1, 2, 3].map((r) => Math.ceil((buf.length - r) / 4));
  const share = nuls.map((n, r) => n / at[r]!);
  const low = [0, 1, 2, 3].filter((r) => share[r]! <= WIDE_LOW_NUL_MAX);
  const high = [0, 1, 2, 3].filter((r) => share[r]! >= WIDE_HIGH_NUL_MIN);
  if (low.length === 1 && high.length === 3) {
    // UTF-32: the low byte comes first (LE) or last (BE) in its unit; a letter beyond ASCII fills the byte beside it.
    const r = low[0]!;
    const little = nuls[(r + 1) & 3]! <= nuls[(r + 3) & 3]!;
    return { offset: little ? r : (r + 1) & 3, decode: (b) => utf32(b, little) };
  }
  const even = (nuls[0]! + nuls[2]!) / (at[0]! + at[2]!);
  const odd = (nuls[1]! + nuls[3]!) / (at[1]! + at[3]!);
  // UTF-16: the NULs at odd bytes (LE) or even ones (BE; also LE text that starts one byte in).
  if (even <= WIDE_LOW_NUL_MAX && odd >= WIDE_HIGH_NUL_MIN) return { offset: 0, decode: (b) => new TextDecoder('utf-16le').decode(b) };
  if (odd <= WIDE_LOW_NUL_MAX && even >= WIDE_HIGH_NUL_MIN) return { offset: 0, decode: (b) => new TextDecoder('utf-16be').decode(b) };
  return undefined;
}

/** Whether `buf` is UTF-16 or UTF-32 text, with a byte-order mark or without (text git shows as binary). */
export function isWideText(buf: Buffer): boolean {
  return BOMS.some((b) => b.bytes.length !== 3 && b.bytes.every((x, i) => buf[i] === x)) || wideEncodingOf(buf) !== undefined;
}

/**
 * The lines of a file's bytes as text: decoded from the encoding its byte-order mark names, or
 * that the places of its NUL bytes show (UTF-16 and UTF-32 without a mark), else read as UTF-8
 * (a binary file's bytes too: a forbidden pattern is ASCII in any of them).
 */
export function textLinesOf(buf: Buffer): string[] {
  const bom = BOMS.find((b) => b.bytes.every((x, i) => buf[i] === x));
  const wide = bom ? undefined : wideEncodingOf(buf);
  const text = bom ? bom.decode(buf.subarray(bom.bytes.length)) : wide ? wide.decode(buf.subarray(wide.offset)) : buf.toString('utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/**
 * The lines `after` adds to `before`, with their 1-based line numbers in `after`: each line of
 * `after` beyond as many copies as `before` holds. (git's diff of a file it shows as binary is
 * one line, "Binary files differ"; this is what a line diff would add, give or take moves.)
 */
export function addedLinesOf(before: string[], after: string[]): Array<{ line: number; text: string }> {
  const left = new Map<string, number>();
  for (const l of before) left.set(l, (left.get(l) ?? 0) + 1);
  const out: Array<{ line: number; text: string }> = [];
  after.forEach((text, i) => {
    const n = left.get(text) ?? 0;
    if (n > 0) left.set(text, n - 1);
    else out.push({ line: i + 1, text });
  });
  return out;
}

/** How many bytes at the end of `buf` (from `pos` on) could be the start of `needle`: kept for the next chunk (0 for almost every chunk). */
function partialTail(buf: Buffer, pos: number, needle: Buffer): number {
  for (let from = Math.max(pos, buf.length - needle.length + 1); from < buf.length; from++) {
    if (buf[from] !== needle[0]) continue;
    if (needle.subarray(0, buf.length - from).equals(buf.subarray(from))) return buf.length - from;
  }
  return 0;
}

/**
 * Splits the stream of `git diff-tree --stdin --always -z --raw [-p]` into its diffs. For each
 * input line git prints the commit id and a NUL, the diff's raw listing (NUL-terminated
 * records), and with `-p` an empty record and the patch (lines). `ids` are the commit ids of
 * the input lines, in order: a diff ends where the next one's `<id>\0` starts, after a record
 * or after a patch line (no patch line starts with a commit id followed by a NUL). `patch` gets
 * each diff's patch bytes as they arrive, `end` its raw listing once it is whole. Works for any
 * chunking of the stream.
 */
export function diffTreeSplitter(
  ids: readonly string[],
  on: { patch(index: number, chunk: Buffer): void; end(index: number, raw: Buffer): void },
): { push(chunk: Buffer): void; end(): void } {
  let index = -1;
  /** Before the first id, or in a raw listing (`paths`: how many of the next records are paths), or in a patch. */
  let mode: 'raw' | 'patch' = 'raw';
  let paths = 0;
  /** In a patch: nothing of it seen yet (a next id right there has no newline before it). */
  let patchStart = false;
  let raw: Buffer[] = [];
  let rest: Buffer | undefined;
  let next: Buffer | undefined;
  let needle: Buffer | undefined;
  // Every `\n<id>\0` in one buffer, written at once: views of it are the needles.
  const marks = Buffer.from(ids.map((id) => `\n${id}\0`).join(''), 'latin1');
  const at: number[] = [0];
  for (const id of ids) at.push(at[at.length - 1]! + id.length + 2);
  const expect = (i: number) => {
    needle = i < ids.length ? marks.subarray(at[i]!, at[i + 1]!) : undefined;
    next = needle?.subarray(1);
  };
  expect(0);
  const finish = () => {
    if (index >= 0) on.end(index, Buffer.concat(raw));
    raw = [];
    index++;
    expect(index + 1);
    mode = 'raw';
    paths = 0;
  };
  /** One NUL-terminated record of a raw listing (or the id that starts the next diff). */
  const takeRecord = (record: Buffer) => {
    if (paths > 0) {
      raw.push(Buffer.from(record)); // a copy: a view would keep the whole chunk alive until the diff ends
      paths--;
    } else if (next && record.equals(next)) {
      finish();
    } else if (index >= 0 && record.length === 1) {
      mode = 'patch'; // the empty record between the listing and the patch
      patchStart = true;
    } else if (index >= 0 && record[0] === 0x3a /* : */) {
      raw.push(Buffer.from(record));
      const status =
        record[1] === 0x3a
          ? ''
          : record
              .toString('latin1', 0, record.length - 1)
              .split(' ')[4]
              ?.charAt(0); // `::`: a merge's, one path
      paths = status === 'R' || status === 'C' ? 2 : 1;
    }
  };
  return {
    push(chunk) {
      let buf = chunk;
      let pos = 0;
      if (rest && mode === 'raw') {
        // A record the last chunk cut: complete it from this one, without copying the whole chunk.
        const nul = chunk.indexOf(0);
        if (nul === -1) {
          rest = Buffer.concat([rest, chunk]);
          return;
        }
        const record = Buffer.concat([rest, chunk.subarray(0, nul + 1)]);
        rest = undefined;
        pos = nul + 1;
        takeRecord(record);
      } else if (rest) {
        buf = Buffer.concat([rest, chunk]);
        rest = undefined;
      }
      while (pos < buf.length) {
        if (mode === 'patch') {
          if (patchStart && next) {
            const head = buf.subarray(pos, pos + next.length);
            if (head.length < next.length && next.subarray(0, head.length).equals(head)) {
              rest = Buffer.from(head);
              return;
            }
            patchStart = false;
            if (head.equals(next)) {
              pos += next.length;
              finish();
              continue;
            }
          }
          patchStart = false;
          // The next diff starts at `\n<id>\0`: hand on what comes before, keep a tail that may be its beginning.
          const at = needle ? buf.indexOf(needle, pos) : -1;
          if (at === -1) {
            const keep = needle ? partialTail(buf, pos, needle) : 0;
            if (buf.length - keep > pos) on.patch(index, buf.subarray(pos, buf.length - keep));
            if (keep > 0) rest = Buffer.from(buf.subarray(buf.length - keep));
            return;
          }
          on.patch(index, buf.subarray(pos, at + 1));
          pos = at + needle!.length;
          finish();
          continue;
        }
        const nul = buf.indexOf(0, pos);
        if (nul === -1) {
          rest = Buffer.from(buf.subarray(pos));
          return;
        }
        const record = buf.subarray(pos, nul + 1);
        pos = nul + 1;
        takeRecord(record);
      }
    },
    end() {
      if (mode === 'patch' && rest) on.patch(index, rest);
      rest = undefined;
      if (index >= 0) on.end(index, Buffer.concat(raw));
      raw = [];
    },
  };
}
