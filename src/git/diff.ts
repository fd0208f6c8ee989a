/**
 * Parsers for the two git outputs the engine reads: `git diff --raw -z` (what changed,
 * with renames, modes and object ids) and a `-U0` patch (which lines were added, at which
 * new-file line numbers); and the text of a file git shows as binary (its byte-order mark
 * decoded) with the lines it adds. Parsers only; running git is stored-diff.ts.
 */

export type ChangeStatus = 'A' | 'M' | 'D' | 'R' | 'C' | 'T' | 'U' | 'X';

export type Change = {
  status: ChangeStatus;
  /** Path after the change (for a deletion: the deleted path). */
  path: string;
  /** Path before a rename or copy. */
  oldPath?: string;
  oldMode: string;
  newMode: string;
  /** Object ids before and after (all zeros: none, or a work-tree file git did not hash). */
  oldId?: string;
  newId?: string;
};

/** gitlinks (submodules): their "content" is a commit id, never lines to judge. */
export const GITLINK_MODE = '160000';
export const SYMLINK_MODE = '120000';

/** Parses `git diff --raw -z` output: `:old new sha sha S\0path\0` (`R`/`C`: two paths). */
export function parseRawZ(out: Buffer | string): Change[] {
  const parts = (typeof out === 'string' ? out : out.toString('utf8')).split('\0');
  const changes: Change[] = [];
  for (let i = 0; i < parts.length; i++) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    const [oldMode = '', newMode = '', oldId = '', newId = '', score = ''] = meta.slice(1).split(' ');
    const status = score.charAt(0) as ChangeStatus;
    if (status === 'R' || status === 'C') {
      changes.push({ status, oldPath: parts[i + 1]!, path: parts[i + 2]!, oldMode, newMode, oldId, newId });
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

export type PatchVisitor = {
  /** A file section with hunks begins; return false to skip its lines. */
  file(path: string): boolean;
  /** An added line, with its 1-based line number in the new file. `cut`: the line was longer than the splitter's cap. */
  added(path: string, line: number, text: string, cut: boolean): void;
};

/**
 * A push parser for a unified diff (any -U). Feed it lines; it calls the visitor for each
 * added line with the line number the line has in the new file.
 */
export function patchParser(visitor: PatchVisitor): (line: Buffer, cut: boolean) => void {
  let path: string | undefined;
  let wanted = false;
  let inHunk = false;
  let next = 0;
  return (buf, cut) => {
    const first = buf[0];
    if (inHunk) {
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
      if (first === 0x40 /* @ */) {
        const m = HUNK.exec(buf.toString('latin1', 0, Math.min(buf.length, 200)));
        if (m) {
          next = Number(m[1]);
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
    } else if (head.startsWith('@@ ')) {
      const m = HUNK.exec(head);
      if (m) {
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

function utf32(b: Buffer, little: boolean): string {
  let out = '';
  for (let i = 0; i + 4 <= b.length; i += 4) {
    const cp = little ? b.readUInt32LE(i) : b.readUInt32BE(i);
    out += cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
  }
  return out;
}

/** Whether `buf` starts with a UTF-16 or UTF-32 byte-order mark (text git shows as binary). */
export function hasWideBom(buf: Buffer): boolean {
  return BOMS.some((b) => b.bytes.length !== 3 && b.bytes.every((x, i) => buf[i] === x));
}

/**
 * The lines of a file's bytes as text: decoded from the encoding its byte-order mark names,
 * else read as UTF-8 (a binary file's bytes too: a forbidden pattern is ASCII in any of them).
 */
export function textLinesOf(buf: Buffer): string[] {
  const bom = BOMS.find((b) => b.bytes.every((x, i) => buf[i] === x));
  const text = bom ? bom.decode(buf.subarray(bom.bytes.length)) : buf.toString('utf8');
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
