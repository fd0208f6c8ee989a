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
 * it names are not handed over (a patch's removed lines, which no rule reads).
 */
export function lineSplitter(onLine: (line: Buffer, cut: boolean) => void, maxLineBytes = 2 * 1024 * 1024, skip?: (firstByte: number | undefined) => boolean): { push(chunk: Buffer): void; end(): void } {
  let rest: Buffer | undefined;
  let skipping = false; // inside an over-long line whose head was already delivered
  return {
    push(chunk) {
      let buf = chunk;
      let start = 0;
      if (rest) {
        // Only the line the last chunk cut is joined, not the whole chunk (copying every chunk costs a streamed patch's time).
        const nl = chunk.indexOf(10);
        if (nl === -1 || skipping) buf = Buffer.concat([rest, chunk]);
        else {
          onLine(Buffer.concat([rest, chunk.subarray(0, nl)]), false);
          start = nl + 1;
        }
        rest = undefined;
      }
      for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
        if (!skipping && !skip?.(buf[start])) onLine(buf.subarray(start, nl), false);
        skipping = false;
        start = nl + 1;
      }
      if (start >= buf.length || skipping) return;
      if (buf.length - start > maxLineBytes) {
        onLine(buf.subarray(start, start + maxLineBytes), true);
        skipping = true;
        return;
      }
      rest = Buffer.from(buf.subarray(start));
    },
    end() {
      if (rest && rest.length && !skipping) onLine(rest, false);
      rest = undefined;
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
 * A push parser of `git cat-file --batch` output that keeps at most `maxBytes` of each object
 * (the rest is read and dropped), so a huge blob costs time, not memory. `onObject` gets the
 * requested name, the bytes kept and the object's whole size; a missing object, no bytes.
 */
export function batchHeads(maxBytes: number, onObject: (name: string, head: Buffer | undefined, size: number) => void): { push(chunk: Buffer): void } {
  let header = Buffer.alloc(0);
  let current: { name: string; size: number; left: number; kept: Buffer[]; keptBytes: number } | undefined;
  let trailer = 0; // the newline after an object's bytes
  const feed = (chunk: Buffer): void => {
    let i = 0;
    while (i < chunk.length) {
      if (trailer > 0) {
        i++;
        trailer--;
        continue;
      }
      if (current) {
        const take = Math.min(current.left, chunk.length - i);
        const keep = Math.min(take, maxBytes - current.keptBytes);
        if (keep > 0) {
          current.kept.push(chunk.subarray(i, i + keep));
          current.keptBytes += keep;
        }
        current.left -= take;
        i += take;
        if (current.left === 0) {
          onObject(current.name, Buffer.concat(current.kept), current.size);
          current = undefined;
          trailer = 1;
        }
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
        current = { name: m[1]!, size: Number(m[3]), left: Number(m[3]), kept: [], keptBytes: 0 };
        if (current.left === 0) {
          onObject(current.name, Buffer.alloc(0), 0);
          current = undefined;
          trailer = 1;
        }
      } else {
        const missing = /^(\S+) missing$/.exec(line);
        if (missing) onObject(missing[1]!, undefined, 0);
      }
    }
  };
  return { push: feed };
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
