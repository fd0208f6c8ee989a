/**
 * The index file, read without starting git: the tree of the staged snapshot (computed from
 * its entries), and a digest of what it stages. The index format: Documentation/gitformat-index.txt.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The tree of the staged snapshot — what the pre-commit judged — computed from the index's
 * entries without starting git (each folder's tree object built and hashed as git builds it),
 * never taken from the cache-tree ("TREE") extension: `git commit` records the cache tree
 * as it finds it, and a command that can write the index can make it name a tree other than
 * its entries (one with a file the entries do not stage, which `git diff --cached` would not
 * show). A commit whose tree is not this one was not judged by the pre-commit, and is judged
 * by content afterwards. Undefined when the index cannot be read this way (a split index,
 * a conflict, an unknown layout): then ask git.
 */
export function stagedTreeOf(indexFile: string): string | undefined {
  const index = readIndex(indexFile);
  if (!index) return undefined;
  const { buf, version } = index;
  for (const hashLen of [20, 32]) {
    const entries: StagedEntry[] = [];
    let conflict = false;
    const w = walk(buf, version, hashLen, (at, path, flags, extended) => {
      // A conflict cannot be committed; an intent-to-add entry is not in the tree git writes.
      if (flags & STAGE_MASK) conflict = true;
      else if (!(extended & INTENT_TO_ADD)) entries.push({ path, mode: buf.readUInt32BE(at + 24), oid: buf.subarray(at + 40, at + 40 + hashLen) });
    });
    if (w === null) continue;
    if (w.split || conflict) return undefined;
    return treeOfEntries(entries, 0, entries.length, 0, hashLen).toString('hex');
  }
  return undefined;
}

type StagedEntry = { path: Buffer; mode: number; oid: Buffer };

const SLASH = 0x2f;
const TREE_MODE = 0o40000;

/**
 * The id of the tree git writes for entries [from, to) — all under one folder whose path ends
 * at byte `depth` of theirs, in the index's order (sorted by path, so a folder's entries are
 * consecutive). A folder sorts among its siblings as its name and a slash (git's tree order).
 */
function treeOfEntries(entries: StagedEntry[], from: number, to: number, depth: number, hashLen: number): Buffer {
  const items: Array<{ key: Buffer; name: Buffer; mode: number; oid: Buffer }> = [];
  let i = from;
  while (i < to) {
    const e = entries[i]!;
    const slash = e.path.indexOf(SLASH, depth);
    // A sparse index stages a whole folder as one entry ("dir/", mode 040000, a tree id).
    if (slash < 0 || slash === e.path.length - 1) {
      const name = e.path.subarray(depth, slash < 0 ? e.path.length : slash);
      const isTree = (e.mode & 0o170000) === TREE_MODE;
      items.push({ key: isTree ? Buffer.concat([name, SLASH_BYTE]) : name, name, mode: e.mode, oid: e.oid });
      i++;
      continue;
    }
    // The folder `name`: every following entry whose path starts with "<name>/".
    const prefix = e.path.subarray(0, slash + 1);
    let j = i + 1;
    while (j < to && entries[j]!.path.length > slash && entries[j]!.path.subarray(0, slash + 1).equals(prefix)) j++;
    const name = e.path.subarray(depth, slash);
    items.push({ key: Buffer.concat([name, SLASH_BYTE]), name, mode: TREE_MODE, oid: treeOfEntries(entries, i, j, slash + 1, hashLen) });
    i = j;
  }
  items.sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  for (const it of items) parts.push(Buffer.from(`${it.mode.toString(8)} `, 'latin1'), it.name, NUL, it.oid);
  const body = Buffer.concat(parts);
  return createHash(hashLen === 20 ? 'sha1' : 'sha256')
    .update(`tree ${body.length}\0`)
    .update(body)
    .digest();
}

const SLASH_BYTE = Buffer.from('/');

/**
 * The tree the index's cache-tree ("TREE") extension names for the whole snapshot: what
 * `git commit` records when the extension is valid (it does not recompute a valid one).
 * Undefined when there is no valid root entry or the index cannot be read this way.
 */
export function cacheTreeOf(indexFile: string): string | undefined {
  const index = readIndex(indexFile);
  if (!index) return undefined;
  const { buf, version } = index;
  for (const hashLen of [20, 32]) {
    const w = walk(buf, version, hashLen);
    if (w === null) continue;
    return w.split ? undefined : w.tree;
  }
  return undefined;
}

/** The index file's bytes and format version (2–4), or undefined when it is missing or not an index this reader knows. */
function readIndex(indexFile: string): { buf: Buffer; version: number } | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(indexFile);
  } catch {
    return undefined;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  return version >= 2 && version <= 4 ? { buf, version } : undefined;
}

/** Where an entry's fields sit: `at` its first byte (ctime), `path` its name, `flags` its flags word. */
type EntryVisit = (at: number, path: Buffer, flags: number, extended: number) => void;

/**
 * Walks the entries and the extensions. Returns the root tree of the TREE extension
 * (undefined: none valid), whether the index is split (a `link` extension: the entries are
 * only part of the snapshot), or null when the walk does not fit this hash length.
 */
function walk(buf: Buffer, version: number, hashLen: number, visit?: EntryVisit): { tree: string | undefined; split: boolean } | null {
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashLen;
  let at = 12;
  // index v4 names an entry by what it keeps of the previous one's path
  let previous = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const flagsAt = at + 40 + hashLen;
    if (flagsAt + 2 > end) return null;
    const flags = buf.readUInt16BE(flagsAt);
    let nameAt = flagsAt + 2;
    let extended = 0;
    if (version >= 3 && flags & 0x4000) {
      if (nameAt + 2 > end) return null;
      extended = buf.readUInt16BE(nameAt);
      nameAt += 2;
    }
    const entryAt = at;
    let path: Buffer;
    if (version === 4) {
      // varint (bytes of the previous path to drop), then the NUL-terminated rest
      let p = nameAt;
      let drop = buf[p]! & 0x7f;
      while (p < end && buf[p]! & 0x80) {
        p++;
        drop = ((drop + 1) << 7) | (buf[p]! & 0x7f);
      }
      const nul = buf.indexOf(0, p + 1);
      if (nul < 0 || nul >= end || drop > previous.length) return null;
      path = previous = Buffer.concat([previous.subarray(0, previous.length - drop), buf.subarray(p + 1, nul)]);
      at = nul + 1;
    } else {
      const nameLen = flags & 0xfff;
      const nul = nameLen < 0xfff ? nameAt + nameLen : buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= end || buf[nul] !== 0) return null;
      path = buf.subarray(nameAt, nul);
      // entries are NUL-padded to a multiple of 8 bytes
      at += (nul - at + 8) & ~7;
    }
    visit?.(entryAt, path, flags, extended);
  }
  let tree: string | undefined;
  let split = false;
  while (at + 8 <= end) {
    const sig = buf.toString('latin1', at, at + 4);
    const size = buf.readUInt32BE(at + 4);
    const data = at + 8;
    if (data + size > end) return null;
    if (sig === 'link') split = true; // split index: ask git
    if (sig === 'TREE' && size > 0 && buf[data] === 0) {
      // root entry: "" NUL "<entries> <subtrees>\n" <hash> (entries -1: invalid, no hash)
      const nl = buf.indexOf(10, data + 1);
      if (nl < 0 || nl >= data + size) return null;
      const entries = Number(buf.toString('latin1', data + 1, nl).split(' ')[0]);
      if (Number.isInteger(entries) && entries >= 0 && nl + 1 + hashLen <= data + size) tree = buf.toString('hex', nl + 1, nl + 1 + hashLen);
    }
    at = data + size;
  }
  // Only a walk that ends exactly at the checksum read the format right.
  if (at !== end) return null;
  return { tree, split };
}

/** What an index stages, as `git diff --cached` reads it: a digest of every entry's mode, object, stage and path. */
export type StagedEntries = {
  /** Same digest, same staged snapshot (whatever the stat data, cache tree or checksum say). */
  digest: string;
  /** Paths of the `.gitattributes` files the index holds: attributes decide how git diffs a path. */
  attributes: string[];
};

/** Entry flags that change what is staged: the stage (a conflict) and, in the extended flags, intent-to-add. */
const STAGE_MASK = 0x3000;
const INTENT_TO_ADD = 0x2000;
const ATTRIBUTES_FILE = Buffer.from('.gitattributes');

/**
 * The staged snapshot's identity, read without git. `git commit` rewrites the index before
 * its pre-commit hook runs (fresh stat data, the cache tree: another checksum), and `commit
 * -a` or `commit <paths>` hand the hook another file, so what counts is the entries, not the
 * file. Undefined when the file cannot be read this way (missing, a split index, an unknown
 * version or layout): then nothing is known about it.
 */
export function stagedEntriesOf(indexFile: string): StagedEntries | undefined {
  const index = readIndex(indexFile);
  if (!index) return undefined;
  const { buf, version } = index;
  for (const hashLen of [20, 32]) {
    const hash = createHash('sha256');
    const attributes: string[] = [];
    const word = Buffer.alloc(4);
    const w = walk(buf, version, hashLen, (at, path, flags, extended) => {
      word.writeUInt16BE(flags & STAGE_MASK, 0);
      word.writeUInt16BE(extended & INTENT_TO_ADD, 2);
      // mode (4 bytes at 24), the object id, the flags that matter, the path
      hash.update(buf.subarray(at + 24, at + 28));
      hash.update(buf.subarray(at + 40, at + 40 + hashLen));
      hash.update(word);
      hash.update(path);
      hash.update(NUL);
      if (
        path.length >= ATTRIBUTES_FILE.length &&
        path.subarray(path.length - ATTRIBUTES_FILE.length).equals(ATTRIBUTES_FILE) &&
        (path.length === ATTRIBUTES_FILE.length || path[path.length - ATTRIBUTES_FILE.length - 1] === 0x2f)
      ) {
        attributes.push(path.toString('utf8'));
      }
    });
    if (w === null) continue;
    if (w.split) return undefined;
    return { digest: `${version}:${hashLen}:${buf.readUInt32BE(8)}:${hash.digest('hex')}`, attributes };
  }
  return undefined;
}

const NUL = Buffer.from([0]);
