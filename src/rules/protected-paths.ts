/**
 * The one answer to "which path is this, and does a `protect` rule cover it?", shared by every
 * entry point that asks: hermesd's file tools, other agents' hooks (their file tools and the
 * files a shell command names), the sandbox plan, the staged check, `check --commits` and the
 * server's pre-receive hook. Two entry points that resolved or matched a path each in their
 * own way could disagree about the same file spelled two ways; here there is one way.
 *
 * - A path is resolved the way open(2) resolves it: component by component, each symbolic
 *   link followed where it stands (so `s/../x` with `s → gen/sub` is `gen/x`, not `x`), a
 *   dangling link followed to the name it would create, and only the part that does not
 *   exist taken as written.
 * - A protect glob is compared with the path folded for case and Unicode form (NFC), on every
 *   file system: `GEN/x` and the NFD spelling of a protected name are the protected file on
 *   APFS and NTFS, and a rule that protects them there protects them everywhere. Only ever
 *   stricter: `exclude` globs are compared as written.
 */
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { GLOB_OPTIONS } from '../config/schema.js';

/** How many symbolic links one resolution follows before it gives up (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;

/** Repository-relative, forward slashes, Unicode NFC, no leading `./`, no doubled or trailing `/`. */
export function normalizeRelPath(p: string): string {
  let s = p.replace(/\\/g, '/').normalize('NFC');
  while (s.startsWith('./')) s = s.slice(2);
  return s.replace(/\/{2,}/g, '/').replace(/(.)\/+$/, '$1');
}

/** A path as open(2) would reach it: every existing component resolved through its links, the missing rest as written. */
export type ResolvedPath = {
  /** Absolute, with every symbolic link along the existing part followed. */
  path: string;
  /** Whether the whole path exists (the last component included, a link's target included). */
  exists: boolean;
  /** The final file's lstat when it exists. */
  stat?: Stats;
};

/**
 * Resolves `path` (absolute, or relative to `cwd`) as the kernel does when a program opens it:
 * `..` after a symbolic link goes up from where the link leads, not from where it stands. A
 * loop of links resolves to the path as written, not existing (open would fail with ELOOP).
 */
export function resolvePhysical(path: string, cwd: string = process.cwd()): ResolvedPath {
  const start = isAbsolute(path) ? path : `${cwd}/${path}`;
  // Components still to walk, the next one last.
  const pending = start.split(/[\\/]/).filter(Boolean).reverse();
  let cur = '/';
  let exists = true;
  let hops = 0;
  let stat: Stats | undefined;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === '.') continue;
    if (part === '..') {
      cur = dirname(cur);
      continue;
    }
    const next = cur === '/' ? `/${part}` : `${cur}/${part}`;
    if (!exists) {
      cur = next;
      continue;
    }
    try {
      stat = lstatSync(next);
    } catch {
      exists = false;
      stat = undefined;
      cur = next;
      continue;
    }
    if (stat.isSymbolicLink()) {
      if (++hops > MAX_SYMLINK_HOPS) return { path: resolve(start), exists: false };
      const target = readlinkSync(next);
      if (isAbsolute(target)) cur = '/';
      const parts = target.split('/').filter(Boolean);
      for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i]!);
      stat = undefined;
      continue;
    }
    cur = next;
  }
  return exists ? { path: cur, exists, ...(stat ? { stat } : {}) } : { path: cur, exists };
}

/** The repository-relative form of an absolute path (forward slashes; '' for the root), or undefined outside `root`. */
export function relativeTo(root: string, abs: string): string | undefined {
  const r = relative(root, abs);
  if (r === '') return '';
  return r.startsWith('..') || isAbsolute(r) ? undefined : r.split(sep).join('/');
}

/** A rule as far as `protect` is concerned. */
export type ProtectRuleSource = { id: string; message: string; protect?: string[]; exclude?: string[]; generator?: string };

/** One compiled protect rule: whether it covers a repository-relative path. */
export type CompiledProtect<R extends ProtectRuleSource = ProtectRuleSource> = {
  rule: R;
  globs: string[];
  exclude?: string[];
  generator?: string;
  /** The glob matches (case and Unicode form folded); excludes not considered. */
  isMatch(rel: string): boolean;
  /** An `exclude` glob matches (as written). */
  isExcluded(rel: string): boolean;
  /** Matched and not excluded. */
  covers(rel: string): boolean;
};

/** Protect globs: folded for case on every file system (see above). */
const PROTECT_OPTIONS = { ...GLOB_OPTIONS, nocase: true } as const;

/** Compiles one rule's protect and exclude globs. */
export function compileProtect<R extends ProtectRuleSource>(rule: R): CompiledProtect<R> | undefined {
  if (!rule.protect || rule.protect.length === 0) return undefined;
  const match = picomatch(
    rule.protect.map((g) => g.normalize('NFC')),
    PROTECT_OPTIONS,
  );
  const exclude = rule.exclude && rule.exclude.length > 0 ? picomatch(rule.exclude, GLOB_OPTIONS) : undefined;
  const isMatch = (rel: string) => match(normalizeRelPath(rel));
  const isExcluded = (rel: string) => (exclude ? exclude(normalizeRelPath(rel)) : false);
  return {
    rule,
    globs: rule.protect,
    ...(rule.exclude ? { exclude: rule.exclude } : {}),
    ...(rule.generator ? { generator: rule.generator } : {}),
    isMatch,
    isExcluded,
    covers: (rel) => isMatch(rel) && !isExcluded(rel),
  };
}

/** The static directory prefix of a glob ('' when it can match anywhere). */
export function globBase(glob: string): string {
  return picomatch.scan(glob).base;
}

const fold = (name: string) => name.normalize('NFC').toLowerCase();

/**
 * Every spelling of the directory `base` (repository-relative) that exists under `root` and that
 * a folded protect glob covers: `gen` and, on a file system that tells them apart, `GEN` and the
 * NFD spelling too — and a name holding a backslash that spells the base, or a file below it
 * (`gen\a.ts` at the root is `gen/a.ts` where `\` separates). One readdir per component of the base.
 */
export function spellingsOf(root: string, base: string, readdir: (abs: string) => string[]): string[] {
  const parts = normalizeRelPath(base).split('/').filter(Boolean);
  const out: string[] = [];
  const visit = (dir: string, i: number) => {
    if (i >= parts.length) {
      out.push(dir);
      return;
    }
    let names: string[];
    try {
      names = readdir(dir ? `${root}/${dir}` : root);
    } catch {
      return;
    }
    for (const name of names) {
      const comps = name.includes('\\') ? normalizeRelPath(name).split('/').filter(Boolean) : [name];
      const n = Math.min(comps.length, parts.length - i);
      if (n === 0 || !comps.slice(0, n).every((c, k) => fold(c) === fold(parts[i + k]!))) continue;
      const rel = dir ? `${dir}/${name}` : name;
      if (comps.length >= parts.length - i) out.push(rel);
      else visit(rel, i + comps.length);
    }
  };
  visit('', 0);
  return out;
}
