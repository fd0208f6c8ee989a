/**
 * The index file, read without starting git: what it stages (a digest of its entries) and the
 * tree of the staged snapshot (computed from its entries). The index format:
 * Documentation/gitformat-index.txt.
 *
 * Cost grows with the change, not with the repository: a read is kept per file while the
 * file's stamp stays the same (a racy stamp: while its bytes do, see `RACY_MS`); a file that
 * changed is compared with the bytes read before, and only the entries whose bytes differ are
 * read again (what each stages — mode, object id, stage and intent-to-add flags, path — goes into
 * one buffer of records; the others' records are copied over); the tree is built only for the
 * folders whose records differ from the last tree built, and the digest is that tree's id. The
 * file's buffers are used again from read to read, and written only where their bytes differ.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { stampOf } from '../storage/file-stamp.js';

/** What an index stages, as `git diff --cached` reads it: a digest of every entry's mode, object, stage and path. */
export type StagedEntries = {
  /** Same digest, same staged snapshot (whatever the stat data, cache tree or checksum say). */
  digest: string;
  /** Paths of the `.gitattributes` files the index holds: attributes decide how git diffs a path. */
  attributes: string[];
  /** The staged snapshot's tree, as `stagedTreeOf` gives it, from the same read (undefined with a conflict). */
  tree?: string;
  /** The tree the cache-tree extension names, as `cacheTreeOf` gives it, from the same read. */
  cacheTree?: string;
};

/**
 * The staged snapshot's identity, read without git. `git commit` rewrites the index before
 * its pre-commit hook runs (fresh stat data, the cache tree: another checksum), and `commit
 * -a` or `commit <paths>` hand the hook another file, so what counts is the entries, not the
 * file. Undefined when the file cannot be read this way (missing, a split index, an unknown
 * version or layout): then nothing is known about it. Its trees come from the same read: a
 * caller that needs the identity and a tree judges one snapshot, and reads the file once.
 */
export function stagedEntriesOf(indexFile: string): StagedEntries | undefined {
  const read = readStaged(indexFile);
  if (!read || read.split) return undefined;
  const digest = digestOf(read);
  return { digest, attributes: read.attributes, ...(read.conflict ? {} : { tree: read.tree }), ...(read.cacheTree ? { cacheTree: read.cacheTree } : {}) };
}

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
  const read = readStaged(indexFile);
  if (!read || read.split || read.conflict) return undefined;
  read.tree ??= treeOf(read);
  return read.tree;
}

/**
 * The tree the index's cache-tree ("TREE") extension names for the whole snapshot: what
 * `git commit` records when the extension is valid (it does not recompute a valid one).
 * Undefined when there is no valid root entry or the index cannot be read this way.
 */
export function cacheTreeOf(indexFile: string): string | undefined {
  const read = readStaged(indexFile);
  return read && !read.split ? read.cacheTree : undefined;
}

/**
 * One read of an index file. `records` holds, per entry in the index's order, exactly the
 * bytes the digest is over: mode (4), object id, a word of the flags that change what is staged
 * (stage, intent-to-add), the path and a NUL; `at[i]` is where entry i's record starts
 * (`at[count]`: the end). `raw` is the file's bytes and `entryAt[i]` where entry i starts in
 * them (`entryAt[count]`: where the extensions start): the next read of the file is compared
 * with them, and only the entries whose bytes differ are read again.
 */
type StagedRead = {
  stamp: string;
  /** When the read was made (ms, the clock of the file's times). */
  readAt: number;
  raw: Buffer;
  version: number;
  hashLen: number;
  records: Buffer;
  at: Uint32Array;
  entryAt: Uint32Array;
  /** A number of its own; `after`: the read this one was walked against (its entries copied where the bytes were the same). */
  serial: number;
  after?: number;
  /** Entries (by index) read again because their bytes differ from the read `after`, and stage something else than the entry they replace. */
  changed?: number[];
  /** Entries (by index) that are `.gitattributes` files, staged with a conflict, or intent-to-add: a few, whatever the index's size. */
  marked: { attributes: number[]; conflicts: number[]; intents: number[] };
  attributes: string[];
  cacheTree: string | undefined;
  split: boolean;
  conflict: boolean;
  digest?: string;
  tree?: string;
};

/**
 * A read is kept while the file's stamp (inode, size, modification and change times) is the
 * one it was read at — and only once that stamp is older than this: two writes within one
 * tick of the file system's clock can leave the same stamp (git's "racy" entries), so a file
 * changed this recently is read again, and its bytes compared with the ones read before.
 */
const RACY_MS = 20;

/** Reads kept, by file: the default index and the one a `commit <paths>` or `GIT_INDEX_FILE` names. */
const reads = new Map<string, StagedRead>();
const READS_KEPT = 2;

function readStaged(indexFile: string): StagedRead | undefined {
  const now = stampOf(indexFile);
  if (!now) return undefined;
  const { stamp } = now;
  const kept = reads.get(indexFile);
  if (kept && kept.stamp === stamp && kept.readAt - now.changedMs > RACY_MS) return kept;
  const readAt = Date.now();
  const buf = readBytes(indexFile);
  if (!buf) return undefined;
  // The same bytes are the same read (the judgement ahead asks right after git's write, and once more when it is done).
  if (kept?.raw.equals(buf)) {
    give(buf, 'raw');
    kept.stamp = stamp;
    kept.readAt = readAt;
    return kept;
  }
  const read = parse(buf, stamp, readAt, kept);
  reads.delete(indexFile);
  if (kept) forgetRead(kept);
  if (read) {
    reads.set(indexFile, read);
    if (reads.size > READS_KEPT) {
      const [oldest] = reads;
      reads.delete(oldest![0]);
      forgetRead(oldest![1]);
    }
  } else give(buf, 'raw');
  return read;
}

// ---- buffers used again, written where their bytes differ ----
// An index of 100,000 files is 8 MB, its records 5 MB: a fresh buffer per read is work for the
// garbage collector on every index write. A read's buffers go back here once nothing holds them,
// each to the pool of its part (the file's bytes, the records, the two offset tables), so that the
// next read of that part takes a buffer that holds the same part of a read two writes before —
// mostly the same bytes at the same places. Into it only the pages whose bytes differ are
// written: the daemon starts git processes, each start (a fork) marks every page of the daemon
// copy-on-write, and the first write to each page after one costs a page fault — on a buffer of
// 8 MB, thousands of them per read. Reading a page costs none.

type Part = 'raw' | 'records' | 'at' | 'entryAt';
const spares: Record<Part, Buffer[]> = { raw: [], records: [], at: [], entryAt: [] };
/** Per part: the buffers of two reads (the default index and one other file, READS_KEPT). */
const SPARES_KEPT = 2;

/** A buffer of at least `size` bytes for `part` (its first `size` as a view), from that part's spares when one is large enough. */
function take(size: number, part: Part): Buffer {
  const pool = spares[part];
  let best = -1;
  for (let i = 0; i < pool.length; i++) if (pool[i]!.length >= size && (best < 0 || pool[i]!.length < pool[best]!.length)) best = i;
  if (best >= 0) return pool.splice(best, 1)[0]!;
  return Buffer.allocUnsafeSlow(Math.max(4096, Math.ceil(size * 1.25)));
}

/** `size` words (zero or not), in a spare buffer of `part`. */
function words(size: number, part: 'at' | 'entryAt'): Uint32Array {
  return new Uint32Array(take(size * 4, part).buffer, 0, size);
}

/** Gives back a buffer of `part` from `take` (a view of one: its whole backing store) unless a kept read or the last tree still holds it. */
function give(buf: Buffer | Uint32Array, part: Part): void {
  const whole = Buffer.from(buf.buffer, 0, buf.buffer.byteLength);
  if (whole.length < 4096 || lastTree?.records.buffer === buf.buffer) return;
  for (const r of reads.values()) for (const held of [r.raw, r.records, r.at, r.entryAt]) if (held.buffer === buf.buffer) return;
  if (Object.values(spares).some((pool) => pool.some((s) => s.buffer === buf.buffer))) return;
  const pool = spares[part];
  pool.push(whole);
  if (pool.length > SPARES_KEPT) pool.sort((a, b) => b.length - a.length).pop();
}

function forgetRead(read: StagedRead): void {
  give(read.raw, 'raw');
  give(read.records, 'records');
  give(read.at, 'at');
  give(read.entryAt, 'entryAt');
}

/** The chunk compared, then written only where it differs: a page. */
const PAGE = 4096;

/** `src[srcStart, srcEnd)` copied to `dst` at `dstStart`, writing only the pages of `dst` whose bytes differ. */
function copyChanged(src: Buffer, srcStart: number, srcEnd: number, dst: Buffer, dstStart: number): void {
  // The whole span first: mostly it holds what it held, and one compare costs less than a call per page.
  if (src.compare(dst, dstStart, dstStart + srcEnd - srcStart, srcStart, srcEnd) === 0) return;
  let s = srcStart;
  let d = dstStart;
  while (s < srcEnd) {
    const n = Math.min(srcEnd - s, PAGE - (d % PAGE));
    if (src.compare(dst, d, d + n, s, s + n) !== 0) src.copy(dst, d, s, s + n);
    s += n;
    d += n;
  }
}

/** Where a file is read, a chunk at a time, before it is compared with what the buffer holds. */
const CHUNK = 256 * 1024;
let chunk: Buffer | undefined;

/** The file's bytes, in a spare buffer of the file's part (written where it held other bytes). */
function readBytes(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = take(size, 'raw');
    chunk ??= Buffer.allocUnsafeSlow(CHUNK);
    let n = 0;
    while (n < size) {
      const got = readSync(fd, chunk, 0, Math.min(CHUNK, size - n), n);
      if (got === 0) break;
      copyChanged(chunk, 0, got, buf, n);
      n += got;
    }
    return buf.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

let serials = 0;

function parse(buf: Buffer, stamp: string, readAt: number, before: StagedRead | undefined): StagedRead | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  // Only entries of the same layout can be taken over from the read before (in v4 an entry's path depends on the one before it).
  const from = before && before.version === version && version !== 4 ? before : undefined;
  for (const hashLen of from ? [from.hashLen] : [20, 32]) {
    const read = walk(buf, version, hashLen, from);
    if (read === null) continue;
    return { ...read, raw: buf, stamp, readAt, version, hashLen, serial: ++serials, after: from?.serial };
  }
  return from ? parse(buf, stamp, readAt, undefined) : undefined;
}

/** Entry flags that change what is staged: the stage (a conflict) and, in the extended flags, intent-to-add. */
const STAGE_MASK = 0x3000;
const INTENT_TO_ADD = 0x2000;
const ATTRIBUTES_FILE = '.gitattributes';
const ATTRIBUTES_LEN = ATTRIBUTES_FILE.length;
const SLASH = 0x2f;

type Walked = Pick<StagedRead, 'records' | 'at' | 'entryAt' | 'marked' | 'changed' | 'attributes' | 'cacheTree' | 'split' | 'conflict'>;

/** How many bytes from `a[aAt]` and `b[bAt]` on are the same (at most up to `aEnd` and `bEnd`): memory compares, halving the span that differs. */
function sameBytes(a: Buffer, aAt: number, aEnd: number, b: Buffer, bAt: number, bEnd: number): number {
  const most = Math.min(aEnd - aAt, bEnd - bAt);
  let lo = 0;
  let span = Math.min(most, 4096);
  // whole chunks first, growing, then the differing chunk halved
  while (lo < most) {
    span = Math.min(span, most - lo);
    if (a.compare(b, bAt + lo, bAt + lo + span, aAt + lo, aAt + lo + span) !== 0) break;
    lo += span;
    span *= 2;
  }
  if (lo >= most) return most;
  let hi = lo + span; // the first difference is in [lo, hi)
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (a.compare(b, bAt + lo, bAt + mid, aAt + lo, aAt + mid) === 0) lo = mid;
    else hi = mid;
  }
  return a[aAt + lo] === b[bAt + lo] ? lo + 1 : lo;
}

/**
 * Walks the entries, copying each one's record, then the extensions: the root tree of the
 * TREE extension (undefined: none valid), whether the index is split (a `link` extension: the
 * entries are only part of the snapshot). With the read before (`before`, same version and
 * hash length), a run of entries whose bytes are the same as a run there is not read again:
 * its records are copied — so a write that changed a few entries costs a compare of the file
 * and the reading of those entries. Null when the walk does not fit this hash length.
 */
function walk(buf: Buffer, version: number, hashLen: number, before: StagedRead | undefined): Walked | null {
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashLen;
  if (count > end / 62) return null;
  // A record is never longer than its entry (62 bytes and more, and the path) but in v4, whose paths are compressed.
  let records = take(buf.length, 'records');
  const at = words(count + 1, 'at');
  const entryAt = words(count + 1, 'entryAt');
  const marked: StagedRead['marked'] = { attributes: [], conflicts: [], intents: [] };
  let out = 0;
  let pos = 12;
  // index v4 names an entry by what it keeps of the previous one's path
  let previous = Buffer.alloc(0);
  const grow = (need: number) => {
    if (out + need <= records.length) return;
    const grown = take(2 * records.length + need, 'records');
    records.copy(grown, 0, 0, out);
    give(records, 'records');
    records = grown;
  };
  const fail = () => {
    give(records, 'records');
    give(at, 'at');
    give(entryAt, 'entryAt');
    return null;
  };
  // The read before: its entry k is the next one that may come again.
  const old = before;
  const oldCount = old ? old.at.length - 1 : 0;
  const changed: number[] = [];
  let k = 0;
  for (let i = 0; i < count; ) {
    if (old && k < oldCount) {
      const o = old.entryAt[k]!;
      const same = sameBytes(buf, pos, end, old.raw, o, old.entryAt[oldCount]!);
      // the old entries wholly inside the same bytes: k .. m-1 (and no more than the header counts)
      let lo = k;
      let hi = Math.min(oldCount, k + (count - i));
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (old.entryAt[mid]! <= o + same) lo = mid;
        else hi = mid - 1;
      }
      const m = lo;
      if (m > k) {
        const rs = old.at[k]!;
        const re = old.at[m]!;
        grow(re - rs);
        copyChanged(old.records, rs, re, records, out);
        // (written only where they differ: see copyChanged)
        for (let j = k; j < m; j++) {
          const a = out + old.at[j]! - rs;
          const e = pos + old.entryAt[j]! - o;
          if (at[i + j - k] !== a) at[i + j - k] = a;
          if (entryAt[i + j - k] !== e) entryAt[i + j - k] = e;
        }
        for (const list of ['attributes', 'conflicts', 'intents'] as const) for (const j of old.marked[list]) if (j >= k && j < m) marked[list].push(i + j - k);
        out += re - rs;
        pos += old.entryAt[m]! - o;
        i += m - k;
        k = m;
        continue;
      }
    }
    const flagsAt = pos + 40 + hashLen;
    if (flagsAt + 2 > end) return fail();
    const flags = buf.readUInt16BE(flagsAt);
    let nameAt = flagsAt + 2;
    let extended = 0;
    if (version >= 3 && flags & 0x4000) {
      if (nameAt + 2 > end) return fail();
      extended = buf.readUInt16BE(nameAt);
      nameAt += 2;
    }
    const entryStart = pos;
    // The path: bytes [pathAt, pathEnd) of `from` (the file, or the v4 path rebuilt).
    let from = buf;
    let pathAt: number;
    let pathEnd: number;
    if (version === 4) {
      // varint (bytes of the previous path to drop), then the NUL-terminated rest
      let p = nameAt;
      let drop = buf[p]! & 0x7f;
      while (p < end && buf[p]! & 0x80) {
        p++;
        drop = ((drop + 1) << 7) | (buf[p]! & 0x7f);
      }
      const nul = buf.indexOf(0, p + 1);
      if (nul < 0 || nul >= end || drop > previous.length) return fail();
      from = previous = Buffer.concat([previous.subarray(0, previous.length - drop), buf.subarray(p + 1, nul)]);
      pathAt = 0;
      pathEnd = previous.length;
      pos = nul + 1;
    } else {
      const nameLen = flags & 0xfff;
      const nul = nameLen < 0xfff ? nameAt + nameLen : buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= end || buf[nul] !== 0) return fail();
      pathAt = nameAt;
      pathEnd = nul;
      // entries are NUL-padded to a multiple of 8 bytes
      pos += (nul - pos + 8) & ~7;
    }
    const pathLen = pathEnd - pathAt;
    grow(9 + hashLen + pathLen);
    at[i] = out;
    entryAt[i] = entryStart;
    // mode (4 bytes at 24), the object id, the flags that matter, the path and a NUL — byte by
    // byte: a copy call per field costs more than the field.
    for (let b = entryStart + 24; b < entryStart + 28; b++) records[out++] = buf[b]!;
    for (let b = entryStart + 40, e = entryStart + 40 + hashLen; b < e; b++) records[out++] = buf[b]!;
    const stage = flags & STAGE_MASK;
    const intent = extended & INTENT_TO_ADD;
    records[out++] = stage >> 8;
    records[out++] = 0;
    records[out++] = intent >> 8;
    records[out++] = 0;
    for (let b = pathAt; b < pathEnd; b++) records[out++] = from[b]!;
    records[out++] = 0;
    if (stage) marked.conflicts.push(i);
    if (intent) marked.intents.push(i);
    if (
      pathLen >= ATTRIBUTES_LEN &&
      from[pathEnd - 1] === 0x73 &&
      from.toString('latin1', pathEnd - ATTRIBUTES_LEN, pathEnd) === ATTRIBUTES_FILE &&
      (pathLen === ATTRIBUTES_LEN || from[pathEnd - ATTRIBUTES_LEN - 1] === SLASH)
    ) {
      marked.attributes.push(i);
    }
    // The read before goes on after the entries that sort up to this one (git's order: path, then stage).
    // An entry whose record is the one it replaces (its stat data changed, not what it stages) changes nothing.
    if (old) {
      const recPath = at[i]! + 8 + hashLen;
      let same = false;
      while (k < oldCount) {
        const ops = old.at[k]! + 8 + hashLen;
        const ope = old.at[k + 1]! - 1;
        const c = old.records.compare(records, recPath, out - 1, ops, ope);
        if (c > 0 || (c === 0 && old.records[old.at[k]! + 4 + hashLen]! > stage >> 8)) break;
        if (c === 0) same = old.records.compare(records, at[i]!, out, old.at[k]!, old.at[k + 1]!) === 0;
        k++;
      }
      if (!same) changed.push(i);
    }
    i++;
  }
  at[count] = out;
  entryAt[count] = pos;
  let cacheTree: string | undefined;
  let split = false;
  while (pos + 8 <= end) {
    const sig = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    const data = pos + 8;
    if (data + size > end) return fail();
    if (sig === 'link') split = true; // split index: ask git
    if (sig === 'TREE' && size > 0 && buf[data] === 0) {
      // root entry: "" NUL "<entries> <subtrees>\n" <hash> (entries -1: invalid, no hash)
      const nl = buf.indexOf(10, data + 1);
      if (nl < 0 || nl >= data + size) return fail();
      const entries = Number(buf.toString('latin1', data + 1, nl).split(' ')[0]);
      if (Number.isInteger(entries) && entries >= 0 && nl + 1 + hashLen <= data + size) cacheTree = buf.toString('hex', nl + 1, nl + 1 + hashLen);
    }
    pos = data + size;
  }
  // Only a walk that ends exactly at the checksum read the format right.
  if (pos !== end) return fail();
  const attributes = marked.attributes.map((i) => records.toString('utf8', at[i]! + 8 + hashLen, at[i + 1]! - 1));
  return { records, at, entryAt, marked, changed: old ? changed : undefined, attributes, cacheTree, split, conflict: marked.conflicts.length > 0 };
}

/**
 * The digest of what the index stages. Without a conflict it is the staged tree (built for
 * the folders that changed) and the intent-to-add entries' records, which the tree leaves out:
 * the same entries, the same digest, at the cost of the change. With a conflict (no tree), a
 * hash of every record.
 */
function digestOf(read: StagedRead): string {
  if (read.digest) return read.digest;
  const count = read.at.length - 1;
  const hash = createHash('sha256');
  if (read.conflict) hash.update('records\0').update(read.records.subarray(0, read.at[count]));
  else {
    read.tree ??= treeOf(read);
    hash.update(`tree ${read.tree}\0`);
    for (const i of read.marked.intents) hash.update(read.records.subarray(read.at[i], read.at[i + 1]));
  }
  read.digest = `${read.version}:${read.hashLen}:${count}:${hash.digest('hex')}`;
  return read.digest;
}

// ---- the tree, built for the folders that changed ----

const TREE_MODE = 0o40000;
const NUL = Buffer.from([0]);
const SLASH_BYTE = Buffer.from('/');

/**
 * The folders of a built tree, in the records' order (by start, the enclosing folder first) —
 * which is their paths' order too (latin1, each with its slash: a folder sorts before what it
 * holds, and two that do not nest sort as their first entries do) — as columns: a folder's path
 * ("" for the root), where its records start and end, its tree id. Columns, not an object per
 * folder: a build keeps thousands of folders until the next one, and objects that live that long
 * are what the collector copies and then marks.
 */
type Folders = { names: string[]; from: number[]; to: number[]; oids: Buffer[] };

/**
 * The last tree built: its folders and that read's records. A folder whose records are byte
 * for byte the same now has the same tree (the records hold every entry's mode, object, flags
 * and full path), and so does every folder inside it: they are carried over at their new place.
 */
type BuiltTree = Folders & { records: Buffer; serial: number };
let lastTree: BuiltTree | undefined;

function treeOf(read: StagedRead): string {
  const found: Folders = { names: [], from: [], to: [], oids: [] };
  const count = read.at.length - 1;
  const oid = folderTree(read, 0, count, 0, found, lastTree);
  const before = lastTree;
  lastTree = { ...found, records: read.records, serial: read.serial };
  if (before && before.records !== read.records) give(before.records, 'records');
  return oid.toString('hex');
}

/** Where the folder named `name` is in the last tree's columns, or -1: a binary search of the paths. */
function folderIndex(last: BuiltTree, name: string): number {
  const { names } = last;
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo < names.length && names[lo] === name ? lo : -1;
}

/** Folder `f` of the last tree and the folders inside it (the ones after it that start before it ends), moved by `delta` bytes. */
function carryOver(last: BuiltTree, f: number, delta: number, into: Folders): void {
  const end = last.to[f]!;
  for (let i = f; i < last.names.length && last.from[i]! < end; i++) {
    if (last.to[i]! > end) continue;
    into.names.push(last.names[i]!);
    into.from.push(last.from[i]! + delta);
    into.to.push(last.to[i]! + delta);
    into.oids.push(last.oids[i]!);
  }
}

/**
 * Whether entries [from, to), whose records are as long as folder `f`'s of the last tree
 * built, hold what it held. When that tree was built from the read this one was walked
 * against, the walk said which entries stage something new: none of them here, the others were
 * copied from that read in its order — a part of the folder as long as the whole is the whole.
 * Otherwise the records are compared.
 */
function sameAsBuilt(read: StagedRead, last: BuiltTree, from: number, to: number, f: number): boolean {
  const { changed } = read;
  if (!changed || read.after !== last.serial) return last.records.compare(read.records, read.at[from], read.at[to], last.from[f], last.to[f]) === 0;
  return !anyIn(changed, from, to - 1);
}

/** Whether the sorted list holds a number in [lo, hi]. */
function anyIn(sorted: number[], lo: number, hi: number): boolean {
  let a = 0;
  let b = sorted.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (sorted[mid]! < lo) a = mid + 1;
    else b = mid;
  }
  return a < sorted.length && sorted[a]! <= hi;
}

/** Where entry i's path starts in the records. */
const pathStart = (read: StagedRead, i: number) => read.at[i]! + 8 + read.hashLen;
/** Where entry i's path ends (its NUL). */
const pathEnd = (read: StagedRead, i: number) => read.at[i + 1]! - 1;

/**
 * The id of the tree git writes for entries [from, to) — all under one folder whose path ends
 * at byte `depth` of theirs, in the index's order (sorted by path, so a folder's entries are
 * consecutive). A folder sorts among its siblings as its name and a slash (git's tree order).
 */
function folderTree(read: StagedRead, from: number, to: number, depth: number, found: Folders, last: BuiltTree | undefined): Buffer {
  const { records, at, hashLen } = read;
  const start = at[from]!;
  const stop = at[to]!;
  const name = from < to ? records.toString('latin1', pathStart(read, from), pathStart(read, from) + depth) : '';
  const f = last ? folderIndex(last, name) : -1;
  if (last && f >= 0 && last.to[f]! - last.from[f]! === stop - start && sameAsBuilt(read, last, from, to, f)) {
    carryOver(last, f, start - last.from[f]!, found);
    return last.oids[f]!;
  }
  // A folder of some size is kept (a small one costs less to build again than to keep): its
  // place taken now, before the folders inside it, so that the columns stay in the records' order.
  const slot = to - from >= KEPT_FOLDER_ENTRIES ? found.names.push(name) - 1 : -1;
  if (slot >= 0) {
    found.from.push(start);
    found.to.push(stop);
    found.oids.push(EMPTY);
  }
  const items: Array<{ key: Buffer; name: Buffer; mode: number; oid: Buffer }> = [];
  let i = from;
  while (i < to) {
    const ps = pathStart(read, i);
    const pe = pathEnd(read, i);
    let slash = -1;
    for (let b = ps + depth; b < pe; b++)
      if (records[b] === SLASH) {
        slash = b;
        break;
      }
    const mode = records.readUInt32BE(at[i]!);
    // An intent-to-add entry is not in the tree git writes.
    const intent = (records.readUInt16BE(at[i]! + 6 + hashLen) & INTENT_TO_ADD) !== 0;
    // A sparse index stages a whole folder as one entry ("dir/", mode 040000, a tree id).
    if (slash < 0 || slash === pe - 1) {
      if (!intent) {
        const itemName = records.subarray(ps + depth, slash < 0 ? pe : slash);
        const isTree = (mode & 0o170000) === TREE_MODE;
        items.push({
          key: isTree ? Buffer.concat([itemName, SLASH_BYTE]) : itemName,
          name: itemName,
          mode,
          oid: records.subarray(at[i]! + 4, at[i]! + 4 + hashLen),
        });
      }
      i++;
      continue;
    }
    // The folder: every following entry whose path starts with the same "<name>/" (consecutive: binary search for the end).
    const prefixLen = slash + 1 - ps;
    let lo = i + 1;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ms = pathStart(read, mid);
      if (pathEnd(read, mid) - ms >= prefixLen && records.compare(records, ps, ps + prefixLen, ms, ms + prefixLen) === 0) lo = mid + 1;
      else hi = mid;
    }
    const itemName = records.subarray(ps + depth, slash);
    const sub = folderTree(read, i, lo, prefixLen, found, last);
    // A folder of intent-to-add entries only is no tree at all.
    if (sub !== EMPTY) items.push({ key: Buffer.concat([itemName, SLASH_BYTE]), name: itemName, mode: TREE_MODE, oid: sub });
    i = lo;
  }
  if (items.length === 0 && depth > 0) return EMPTY;
  items.sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  for (const it of items) parts.push(Buffer.from(`${it.mode.toString(8)} `, 'latin1'), it.name, NUL, it.oid);
  const body = Buffer.concat(parts);
  const oid = createHash(hashLen === 20 ? 'sha1' : 'sha256')
    .update(`tree ${body.length}\0`)
    .update(body)
    .digest();
  if (slot >= 0) found.oids[slot] = oid;
  return oid;
}

/** Folders of fewer entries than this are built again rather than kept (each kept one is an object and a map entry per build). */
const KEPT_FOLDER_ENTRIES = 8;

/** A folder with nothing to write (only intent-to-add entries under it). */
const EMPTY = Buffer.alloc(0);
