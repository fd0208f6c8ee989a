/**
 * The few git invocations the hooks need, run synchronously with an explicit index file.
 * During pre-commit git hands the hook the index being committed (GIT_INDEX_FILE): for
 * `git commit -a` or `git commit <paths>` it is a lock file, not .git/index, so every call
 * that reads or writes "the staged snapshot" must name it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gitEnv } from './run.js';

export type GitOptions = { cwd: string; indexFile?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv };

/** Largest output a git call may produce here (a binary diff of a big fix). */
const GIT_MAX_BUFFER_BYTES = 512 * 1024 * 1024;

/** A hook's environment may carry GIT_DIR, GIT_INDEX_FILE… from the outer git; we pass what we mean explicitly. */
function envFor(opts: GitOptions): NodeJS.ProcessEnv {
  return gitEnv({ indexFile: opts.indexFile }, opts.env ?? process.env);
}

export function git(args: string[], opts: GitOptions): string {
  return gitBuffer(args, opts).toString('utf8');
}

export function gitBuffer(args: string[], opts: GitOptions): Buffer {
  return execFileSync('git', args, {
    cwd: opts.cwd,
    env: envFor(opts),
    input: opts.input,
    maxBuffer: GIT_MAX_BUFFER_BYTES,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs git and returns status and output instead of throwing. */
export function gitTry(args: string[], opts: GitOptions): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, { cwd: opts.cwd, env: envFor(opts), input: opts.input, maxBuffer: GIT_MAX_BUFFER_BYTES, encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Splits NUL-separated git output (`-z`), dropping the empty tail. */
export function splitZ(out: string): string[] {
  const parts = out.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

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
