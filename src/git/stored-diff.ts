/**
 * What a change adds, read as git stores it. `git diff` shows a file as "Binary files differ"
 * when an attribute says so (`-diff`, `binary`, a driver with `binary = true`, in any
 * attributes file), when it holds a NUL byte, or when it is UTF-16 or UTF-32; none of that
 * changes the bytes git stores and pushes. So the one diff the rule engine reads is taken
 * with drivers, textconv and colour off (PLAIN_DIFF), and every changed regular file whose
 * patch shows no lines is read from the object store instead (`git cat-file --batch`, one
 * process for all of them): its text, decoded from a byte-order mark when it has one, and
 * the lines it adds to the file before it. A file git shows as text whose added lines hold
 * NUL bytes is read that way too when it starts with a UTF-16/32 byte-order mark (an
 * attribute can force such a file to text). Replace refs, grafts and the commit-graph are
 * off for every git this runs (env.ts).
 *
 *   const changes = await storedDiff(root, ['--cached'], { file: (p) => wanted(p), added: (p, n, text, cut) => … }, opts);
 */
import { lstatSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { addedLinesOf, hasWideBom, isRegularFile, parseRawZ, patchParser, rawPatchSplitter, textLinesOf, type Change, type PatchVisitor } from './diff.js';
import { batchHeads, lineSplitter } from './parse.js';
import { gitAsync, gitStream, plainGitCall, PLAIN_DIFF, type GitOptions } from './run.js';

/** Bytes of one file read from a blob: past this, the rest is not judged (the caller's own bound is smaller). */
const STORED_READ_MAX_BYTES = 2 * 1024 * 1024;

const NULL_ID = /^0+$/;
/** The empty blob (SHA-1 and SHA-256): a new empty file adds nothing. */
const EMPTY_BLOB = new Set(['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813']);

/**
 * Runs `git diff <range> --raw -z -U0` once: the listing of what changed (returned), and each
 * added line handed to `visitor` as the patch streams; then the added lines of the files the
 * patch showed as binary, read from their blobs. Without a visitor only the listing is asked for.
 * `worktree`: the range compares with the work tree, whose files git does not hash (read from disk).
 */
export async function storedDiff(root: string, range: string[], visitor: PatchVisitor | undefined, opts: GitOptions & { worktree?: boolean } = {}): Promise<Change[]> {
  const args = ['diff', ...range, '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF];
  const call = plainGitCall(root, opts);
  if (!visitor) return gitAsync(args, call).then(parseRawZ);
  const shown = new Set<string>();
  const nulLines = new Set<string>();
  const parse = patchParser(seeingVisitor(visitor, { shown, nulLines }));
  const split = lineSplitter(parse);
  const stream = rawPatchSplitter((chunk) => split.push(chunk));
  await gitStream([...args, '-U0'], (chunk) => stream.push(chunk), call);
  split.end();
  const changes = parseRawZ(stream.raw());
  await judgeUnshown(root, changes, { shown, nulLines }, visitor, opts);
  return changes;
}

/** What a streamed patch showed: the paths it had lines for, and those whose added lines held a NUL byte. */
export type PatchSeen = { shown: Set<string>; nulLines: Set<string> };

/** A visitor that also records what the patch showed, for judgeUnshown. */
export function seeingVisitor(visitor: PatchVisitor, seen: PatchSeen): PatchVisitor {
  return {
    file: (path) => {
      seen.shown.add(path);
      return visitor.file(path);
    },
    added: (path, line, text, cut) => {
      if (text.includes('\0')) seen.nulLines.add(path);
      visitor.added(path, line, text, cut);
    },
  };
}

/**
 * After a patch has streamed: the added lines of the `changes` it did not show as lines (git
 * called them binary), read from their blobs and handed to `visitor`.
 */
export async function judgeUnshown(root: string, changes: Change[], seen: PatchSeen, visitor: PatchVisitor, opts: GitOptions & { worktree?: boolean } = {}): Promise<void> {
  const unread = changes.filter((c) => isRegularFile(c.newMode) && c.status !== 'D' && c.newId !== c.oldId && !EMPTY_BLOB.has(c.newId ?? '') && (!seen.shown.has(c.path) || seen.nulLines.has(c.path)));
  if (unread.length > 0) await readAsStored(root, unread, seen.shown, visitor, opts);
}

/** The added lines of changes git showed as binary (or as text with NUL bytes), from their stored bytes. */
async function readAsStored(root: string, changes: Change[], shown: Set<string>, visitor: PatchVisitor, opts: GitOptions & { worktree?: boolean }): Promise<void> {
  const ids = new Set<string>();
  for (const c of changes) {
    if (c.newId && !NULL_ID.test(c.newId)) ids.add(c.newId);
    if (c.oldId && !NULL_ID.test(c.oldId) && isRegularFile(c.oldMode)) ids.add(c.oldId);
  }
  const blobs = await readBlobs(root, [...ids], opts);
  for (const c of changes) {
    const after = c.newId && !NULL_ID.test(c.newId) ? blobs.get(c.newId) : opts.worktree ? readHead(join(root, c.path)) : undefined;
    if (!after) continue;
    // A file shown as text is re-read only when it is UTF-16/32 text: its lines were judged already otherwise.
    if (shown.has(c.path) && !hasWideBom(after.bytes)) continue;
    const before = c.oldId && !NULL_ID.test(c.oldId) && isRegularFile(c.oldMode) ? blobs.get(c.oldId) : undefined;
    if (!visitor.file(c.path)) continue;
    const lines = textLinesOf(after.bytes);
    // The last line of a cut read is cut too: it and everything after were not read.
    const cut = after.size > after.bytes.length;
    const whole = cut ? lines.slice(0, -1) : lines;
    const added = addedLinesOf(before ? textLinesOf(before.bytes) : [], whole);
    for (const a of added) visitor.added(c.path, a.line, a.text, false);
    if (cut) visitor.added(c.path, whole.length + 1, lines[lines.length - 1] ?? '', true);
  }
}

type Stored = { bytes: Buffer; size: number };

/** Blobs by id, each up to STORED_READ_MAX_BYTES, in one `git cat-file --batch`. */
async function readBlobs(root: string, ids: string[], opts: GitOptions): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  if (ids.length === 0) return out;
  const parser = batchHeads(STORED_READ_MAX_BYTES, (name, head, size) => {
    if (head) out.set(name, { bytes: head, size });
  });
  await gitStream(['cat-file', '--batch'], (chunk) => parser.push(chunk), { ...plainGitCall(root, opts), input: ids.join('\n') + '\n' });
  return out;
}

/** A work-tree file's first STORED_READ_MAX_BYTES, or undefined when it is not a regular file (any more). */
function readHead(file: string): Stored | undefined {
  let size: number;
  try {
    const st = lstatSync(file);
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(Math.min(size, STORED_READ_MAX_BYTES));
  const fd = openSync(file, 'r');
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    return { bytes: buf.subarray(0, n), size };
  } finally {
    closeSync(fd);
  }
}

/** A work-tree file as the engine judges an untracked one: every line added, decoded like a stored file. */
export function addedLinesOfFile(file: string): { lines: Array<{ line: number; text: string }>; cut: boolean } | undefined {
  const read = readHead(file);
  if (!read) return undefined;
  const lines = textLinesOf(read.bytes);
  const cut = read.size > read.bytes.length;
  const whole = cut ? lines.slice(0, -1) : lines;
  return { lines: whole.map((text, i) => ({ line: i + 1, text })), cut };
}
