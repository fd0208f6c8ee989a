/**
 * Parsers of git's output, apart from the runners (run.ts) that produce it: `-z` lists,
 * lines of a stream, `status --porcelain=v2`, `cat-file --batch`, `push --porcelain`.
 * The diff formats the rule engine reads are in diff.ts, the index file in index-file.ts.
 */

/** Splits NUL-separated git output (`-z`), dropping the empty tail. */
export function splitZ(out: string): string[] {
  const parts = out.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/**
 * Splits a byte stream into lines (without the newline), across chunk boundaries. A line
 * longer than `maxLineBytes` is handed over cut to that length with `cut = true`, so one
 * minified megabyte line cannot grow the buffer without bound. `skip`: lines whose first byte
 * it names are not handed over, nor held (a patch's removed lines, which no rule reads).
 * A line that spans chunks is held as its pieces and joined once, when it ends: joining at
 * every chunk would copy a long line once per chunk.
 */
export function lineSplitter(
  onLine: (line: Buffer, cut: boolean) => void,
  maxLineBytes = 2 * 1024 * 1024,
  skip?: (firstByte: number | undefined) => boolean,
): { push(chunk: Buffer): void; end(): void } {
  let parts: Buffer[] = [];
  let held = 0;
  /** Whether the next byte starts a line. */
  let atStart = true;
  /** The line in progress is not handed over (skipped, or handed over cut already). */
  let dropping = false;
  const deliver = (line: Buffer) => (line.length > maxLineBytes ? onLine(line.subarray(0, maxLineBytes), true) : onLine(line, false));
  return {
    push(chunk) {
      let pos = 0;
      while (pos < chunk.length) {
        if (atStart) {
          dropping = skip?.(chunk[pos]) ?? false;
          atStart = false;
        }
        const nl = chunk.indexOf(10, pos);
        if (nl === -1) {
          if (dropping) return;
          const piece = chunk.subarray(pos);
          if (held + piece.length > maxLineBytes) {
            onLine(Buffer.concat([...parts, piece]).subarray(0, maxLineBytes), true);
            parts = [];
            held = 0;
            dropping = true;
            return;
          }
          parts.push(Buffer.from(piece)); // a copy: a view would keep the whole chunk alive until the line ends
          held += piece.length;
          return;
        }
        if (!dropping) deliver(held === 0 ? chunk.subarray(pos, nl) : Buffer.concat([...parts, chunk.subarray(pos, nl)]));
        parts = [];
        held = 0;
        dropping = false;
        atStart = true;
        pos = nl + 1;
      }
    },
    end() {
      if (!dropping && held > 0) deliver(Buffer.concat(parts));
      parts = [];
      held = 0;
      atStart = true;
      dropping = false;
    },
  };
}

/** What `git status --porcelain=v2 --branch -z` says about a work tree: where HEAD is and how many paths are in each state. */
export type StatusSummary = { branch: string; head: string; staged: number; unstaged: number; untracked: number; conflicted: number };

/** Parses `git status --porcelain=v2 --branch -z`. */
export function parseStatus(out: string): StatusSummary {
  const ws = { branch: '(unknown)', head: '(none)', staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  const records = out.split('\0');
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r.startsWith('# branch.oid ')) {
      const oid = r.slice(13);
      ws.head = oid === '(initial)' ? '(no commits yet)' : oid.slice(0, 7);
    } else if (r.startsWith('# branch.head ')) {
      ws.branch = r.slice(14);
    } else if (r.startsWith('1 ') || r.startsWith('2 ')) {
      const xy = r.slice(2, 4);
      if (xy[0] !== '.') ws.staged++;
      if (xy[1] !== '.') ws.unstaged++;
      // A rename record carries its original path as the next NUL-separated field.
      if (r.startsWith('2 ')) i++;
    } else if (r.startsWith('u ')) {
      ws.conflicted++;
    } else if (r.startsWith('? ')) {
      ws.untracked++;
    }
  }
  return ws;
}

/** `git cat-file --batch` output: `<oid> <type> <size>\n<bytes>\n` per object, `<spec> missing` for none. */
export function parseBatch(out: Buffer): Buffer[] {
  const blobs: Buffer[] = [];
  let i = 0;
  while (i < out.length) {
    const nl = out.indexOf(10, i);
    if (nl < 0) break;
    const header = out.subarray(i, nl).toString('utf8');
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (!m) {
      i = nl + 1;
      continue;
    }
    const size = Number(m[2]);
    if (m[1] === 'blob') blobs.push(out.subarray(nl + 1, nl + 1 + size));
    i = nl + 1 + size + 1;
  }
  return blobs;
}

/**
 * A push parser of `git cat-file --batch` output that keeps an object's bytes only when it is at
 * most `maxBytes` long: a larger one is read and dropped, so a huge blob costs time, not memory,
 * and one object is held at a time. `onObject` gets the requested name, the object's type and
 * size, and its bytes (none past `maxBytes`); a missing object, no type.
 */
export function batchObjects(
  maxBytes: number,
  onObject: (name: string, type: string | undefined, size: number, bytes: Buffer | undefined) => void,
): { push(chunk: Buffer): void } {
  let header = Buffer.alloc(0);
  let current: { name: string; type: string; size: number; left: number; kept: Buffer[] | undefined } | undefined;
  let trailer = 0; // the newline after an object's bytes
  const done = () => {
    const c = current!;
    current = undefined;
    trailer = 1;
    onObject(c.name, c.type, c.size, c.kept ? Buffer.concat(c.kept) : undefined);
  };
  return {
    push(chunk) {
      let i = 0;
      while (i < chunk.length) {
        if (trailer > 0) {
          i++;
          trailer--;
          continue;
        }
        if (current) {
          const take = Math.min(current.left, chunk.length - i);
          if (current.kept) current.kept.push(chunk.subarray(i, i + take));
          current.left -= take;
          i += take;
          if (current.left === 0) done();
          continue;
        }
        const nl = chunk.indexOf(10, i);
        if (nl < 0) {
          header = Buffer.concat([header, chunk.subarray(i)]);
          return;
        }
        const line = Buffer.concat([header, chunk.subarray(i, nl)]).toString('utf8');
        header = Buffer.alloc(0);
        i = nl + 1;
        const m = /^(\S+) (\w+) (\d+)$/.exec(line);
        if (m) {
          const size = Number(m[3]);
          current = { name: m[1]!, type: m[2]!, size, left: size, kept: size <= maxBytes ? [] : undefined };
          if (size === 0) done();
        } else {
          const missing = /^(\S+) (?:missing|ambiguous)$/.exec(line);
          if (missing) onObject(missing[1]!, undefined, 0, undefined);
        }
      }
    },
  };
}

/** Update lines of `git push --porcelain`: flag, local ref, remote ref, summary. */
export function porcelainUpdates(out: string): Array<{ flag: string; from: string; to: string; summary: string }> {
  const updates: Array<{ flag: string; from: string; to: string; summary: string }> = [];
  for (const line of out.split('\n')) {
    const m = /^([ +\-*!=])\t([^:]*):([^\t]*)\t(.*)$/.exec(line);
    if (m) updates.push({ flag: m[1]!, from: m[2]!, to: m[3]!, summary: m[4]! });
  }
  return updates;
}
