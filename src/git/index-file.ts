/**
 * The index file, read without starting git: the tree it records for the staged snapshot.
 * The index format: Documentation/gitformat-index.txt.
 */
import { readFileSync } from 'node:fs';

/**
 * The tree of the staged snapshot, read from the index file's cache-tree ("TREE")
 * extension, without starting git: `git commit` brings the cache tree up to date and
 * writes it before the pre-commit hook runs, so this is what `git write-tree` would answer
 * (and what the commit will record). Undefined when the index holds no valid root entry
 * (an index that `git commit <paths>` built, a split index, anything unexpected): then ask
 * git. The index format: Documentation/gitformat-index.txt.
 */
export function indexTreeOf(indexFile: string): string | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(indexFile);
  } catch {
    return undefined;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  // SHA-1 or SHA-256 repository: only the right one walks to the checksum at the end.
  for (const hashLen of [20, 32]) {
    const tree = treeExtension(buf, version, hashLen);
    if (tree !== null) return tree;
  }
  return undefined;
}

/** The root tree from the TREE extension; undefined: no valid root; null: the walk did not fit this hash length. */
function treeExtension(buf: Buffer, version: number, hashLen: number): string | undefined | null {
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashLen;
  let at = 12;
  for (let i = 0; i < count; i++) {
    const flagsAt = at + 40 + hashLen;
    if (flagsAt + 2 > end) return null;
    const flags = buf.readUInt16BE(flagsAt);
    let nameAt = flagsAt + 2;
    if (version >= 3 && flags & 0x4000) nameAt += 2;
    if (version === 4) {
      // varint (bytes of the previous path to drop), then the NUL-terminated rest
      let p = nameAt;
      while (p < end && buf[p]! & 0x80) p++;
      const nul = buf.indexOf(0, p + 1);
      if (nul < 0 || nul >= end) return null;
      at = nul + 1;
    } else {
      const nameLen = flags & 0xfff;
      const nul = nameLen < 0xfff ? nameAt + nameLen : buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= end || buf[nul] !== 0) return null;
      // entries are NUL-padded to a multiple of 8 bytes
      at += (nul - at + 8) & ~7;
    }
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
  return split ? undefined : tree;
}
