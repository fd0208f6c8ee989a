/**
 * What a change adds, read as git stores it. `git diff` shows a file as "Binary files differ"
 * when an attribute says so (`-diff`, `binary`, a driver with `binary = true`, in any
 * attributes file), when it holds a NUL byte, or when it is UTF-16 or UTF-32; none of that
 * changes the bytes git stores and pushes. So the one diff the rule engine reads is taken
 * with drivers, textconv and colour off (PLAIN_DIFF), and every changed regular file whose
 * patch shows no lines is read from the object store instead (`git cat-file --batch`, one
 * process for all of them, every byte up to MAX_JUDGED_FILE_BYTES): its text, decoded from a
 * byte-order mark, or as UTF-16/32 where its NUL bytes say so, and the lines it adds to the file
 * before it. A symlink is content too: its blob is its target. A file git shows as text whose
 * added lines hold NUL bytes is read that way too when it is UTF-16/32 text (an attribute can
 * force such a file to text). Replace refs, grafts and the commit-graph are off for every git
 * this runs (env.ts).
 *
 *   const changes = await storedDiff(root, ['--cached'], { file: (p) => wanted(p), added: (p, n, text, cut) => … }, opts);
 */
import { closeSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';
import {
  addedLinesOf,
  isContentMode,
  isWideText,
  parseRawZ,
  patchParser,
  rawPatchSplitter,
  textLinesOf,
  type Change,
  type PatchVisitor,
} from './diff-parse.js';
import { batchObjects, lineSplitter } from './parse.js';
import { gitAsync, gitStream, plainGitCall, PLAIN_DIFF, type GitOptions } from './run.js';

/**
 * Bytes of one file hermesd reads to judge it. Every byte up to this is read: a stored file
 * streamed from git one at a time, a patch's added lines as they come. A file past it is not
 * read, and every content rule that applies to it refuses it (rules/engine.ts): a file passed
 * unread would be a way around the rules. 32 MiB keeps one file's text, held a few times over
 * while gitleaks' rules read it, within what a server hook may use; files that large belong in
 * Git LFS (GitHub refuses files over 100 MiB).
 */
export const MAX_JUDGED_FILE_BYTES = 32 * 1024 * 1024;

const NULL_ID = /^0+$/;
/** The empty blob (SHA-1 and SHA-256): a new empty file adds nothing. */
const EMPTY_BLOB = new Set(['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813']);

/**
 * Runs `git diff <range> --raw -z -U0` once: the listing of what changed (returned), and each
 * added line handed to `visitor` as the patch streams; then the added lines of the files the
 * patch showed as binary, read from their blobs. Without a visitor only the listing is asked for.
 * `worktree`: the range compares with the work tree, whose files git does not hash (read from disk).
 */
export async function storedDiff(
  root: string,
  range: string[],
  visitor: PatchVisitor | undefined,
  opts: GitOptions & { worktree?: boolean } = {},
): Promise<Change[]> {
  const args = ['diff', ...range, '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF];
  const call = plainGitCall(root, opts);
  if (!visitor) return gitAsync(args, call).then(parseRawZ);
  const shown = new Set<string>();
  const nulLines = new Set<string>();
  const parse = patchParser(seeingVisitor(visitor, { shown, nulLines }));
  const split = lineSplitter(parse, MAX_JUDGED_FILE_BYTES);
  const stream = rawPatchSplitter((chunk) => split.push(chunk));
  await gitStream([...args, '-U0'], (chunk) => stream.push(chunk), call);
  split.end();
  const changes = parseRawZ(stream.raw());
  await judgeUnshown(root, [{ changes, seen: { shown, nulLines }, visitor }], opts);
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

/** One diff whose patch has streamed: what it changed, what its patch showed, and the visitor its lines go to. */
export type StreamedDiff = { changes: Change[]; seen: PatchSeen; visitor: PatchVisitor };

/**
 * After patches have streamed: the added lines of each diff's `changes` its patch did not show
 * as lines (git called them binary), read from their blobs and handed to that diff's visitor,
 * diff by diff in the order given. One `git cat-file --batch` for all the diffs (a range's
 * thousand commits: one process, not one per commit with such a file). A file over
 * MAX_JUDGED_FILE_BYTES is handed over as one cut line at line 0 (not read).
 */
export async function judgeUnshown(root: string, diffs: readonly StreamedDiff[], opts: GitOptions & { worktree?: boolean } = {}): Promise<void> {
  const added = (c: Change) => isContentMode(c.newMode) && c.status !== 'D' && c.newId !== c.oldId && !EMPTY_BLOB.has(c.newId ?? '');
  const unread = diffs.flatMap((d) =>
    d.changes.filter((c) => added(c) && (!d.seen.shown.has(c.path) || d.seen.nulLines.has(c.path))).map((change) => ({ change, diff: d })),
  );
  if (unread.length > 0) await readAsStored(root, unread, opts);
}

/** A file's bytes as stored, or only its size when it is over MAX_JUDGED_FILE_BYTES. */
type Stored = { bytes?: Buffer; size: number };

const stored = (id: string | undefined) => id !== undefined && id !== '' && !NULL_ID.test(id);

/**
 * The added lines of changes git showed as binary (or as text with NUL bytes), from their
 * stored bytes, each to the visitor of its diff. Each change's blobs are asked for before then
 * after, and git answers in that order: one change's pair is all that is held at a time.
 */
async function readAsStored(
  root: string,
  changes: ReadonlyArray<{ change: Change; diff: StreamedDiff }>,
  opts: GitOptions & { worktree?: boolean },
): Promise<void> {
  const asks: Array<{ change: Change; diff: StreamedDiff; before: boolean }> = [];
  for (const { change: c, diff } of changes) {
    if (stored(c.oldId) && isContentMode(c.oldMode)) asks.push({ change: c, diff, before: true });
    if (stored(c.newId)) asks.push({ change: c, diff, before: false });
  }
  const fromDisk = (c: Change) => (opts.worktree ? readFromDisk(join(root, c.path)) : undefined);
  let before: { change: Change; blob: Stored } | undefined;
  let k = 0;
  await readStoredObjects(
    root,
    asks.map((a) => (a.before ? a.change.oldId! : a.change.newId!)),
    (object) => {
      const ask = asks[k++]!;
      const { shown } = ask.diff.seen;
      const blob = object.type === undefined ? undefined : { bytes: object.bytes, size: object.size };
      if (ask.before) {
        if (stored(ask.change.newId)) before = blob && { change: ask.change, blob };
        else judgeStored(ask.change, blob, fromDisk(ask.change), shown, ask.diff.visitor);
        return;
      }
      judgeStored(ask.change, before?.change === ask.change ? before.blob : undefined, blob, shown, ask.diff.visitor);
      before = undefined;
    },
    opts,
  );
  // A work-tree file git did not hash, with nothing before it.
  for (const { change: c, diff } of changes)
    if (!stored(c.newId) && !(stored(c.oldId) && isContentMode(c.oldMode))) judgeStored(c, undefined, fromDisk(c), diff.seen.shown, diff.visitor);
}

/** One change read as stored: the lines `after` adds to `before`, or, past the bound, one cut line at line 0. */
function judgeStored(c: Change, before: Stored | undefined, after: Stored | undefined, shown: Set<string>, visitor: PatchVisitor): void {
  if (!after) return;
  if (!after.bytes) {
    if (visitor.file(c.path)) visitor.added(c.path, 0, '', true);
    return;
  }
  // A file shown as text is read again only when it is UTF-16/32 text: its lines were judged already otherwise.
  if (shown.has(c.path) && !isWideText(after.bytes)) return;
  if (!visitor.file(c.path)) return;
  // A `before` too large to read: every line of `after` counts as added.
  const added = addedLinesOf(before?.bytes ? textLinesOf(before.bytes) : [], textLinesOf(after.bytes));
  for (const a of added) visitor.added(c.path, a.line, a.text, false);
}

/** One object of `git cat-file --batch`: its type (none: missing), size, and bytes when within the bound. */
export type StoredObject = { type?: string; size: number; bytes?: Buffer };

/**
 * Reads objects (ids, or `<rev>:<path>`) with one `git cat-file --batch`, handing each to
 * `onObject` in the order asked as git streams it: its bytes when it is at most `maxBytes`
 * (default MAX_JUDGED_FILE_BYTES), its size alone past that (read and dropped).
 */
export async function readStoredObjects(
  root: string,
  names: readonly string[],
  onObject: (object: StoredObject) => void,
  opts: GitOptions = {},
  maxBytes = MAX_JUDGED_FILE_BYTES,
): Promise<void> {
  if (names.length === 0) return;
  const parser = batchObjects(maxBytes, (_name, type, size, bytes) => onObject({ type, size, bytes }));
  await gitStream(['cat-file', '--batch'], (chunk) => parser.push(chunk), {
    ...plainGitCall(root, opts),
    input: names.join('\n') + '\n',
    // Read as a stream, one object held at a time: the output's size is no memory bound here.
    maxBuffer: Number.MAX_SAFE_INTEGER,
  });
}

/**
 * A work-tree file as git would store it: a regular file's bytes (its size alone past
 * MAX_JUDGED_FILE_BYTES), a symlink's target; undefined when it is neither (any more).
 */
function readFromDisk(file: string): Stored | undefined {
  let size: number;
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink()) {
      const target = readlinkSync(file, { encoding: 'buffer' });
      return { bytes: target, size: target.length };
    }
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    return undefined;
  }
  if (size > MAX_JUDGED_FILE_BYTES) return { size };
  const buf = Buffer.alloc(size);
  const fd = openSync(file, 'r');
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    return { bytes: buf.subarray(0, n), size };
  } finally {
    closeSync(fd);
  }
}

/**
 * A work-tree file as the engine judges an untracked one: every line added, decoded like a stored
 * file; `tooLarge` (and no lines) past MAX_JUDGED_FILE_BYTES.
 */
export function addedLinesOfFile(file: string): { lines: Array<{ line: number; text: string }>; tooLarge: boolean } | undefined {
  const read = readFromDisk(file);
  if (!read) return undefined;
  if (!read.bytes) return { lines: [], tooLarge: true };
  return { lines: textLinesOf(read.bytes).map((text, i) => ({ line: i + 1, text })), tooLarge: false };
}
