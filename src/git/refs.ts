/**
 * Refs read without starting git: HEAD, loose and packed refs. A git process costs the daemon
 * its main thread for the fork of a large process, and it asked git after every commit
 * for facts that sit in a few small files.
 *
 * Every function answers as git would, or `undefined` when it cannot be sure (a reftable
 * repository, a ref file that holds no id, anything unreadable or unexpected): the caller then
 * asks git, as it always did. Like git, loose refs are read before packed-refs: `git pack-refs`
 * (which `git commit`'s auto-maintenance runs) writes packed-refs first and deletes the loose
 * files after, so a ref read loose-then-packed is found in one or the other, while packed-then-
 * loose can miss a ref packed in between.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A SHA-1 or SHA-256 object id. */
export const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** Refs that live in a linked work tree's own git dir, not in the common dir. */
const PER_WORKTREE = /^refs\/(?:bisect|worktree|rewritten)\//;
/** Symbolic refs followed before giving up (git's own limit is 5). */
const MAX_SYMREF_DEPTH = 5;

export type GitDirs = { gitDir: string; commonDir: string };

/** Whether refs are kept as files here (not in a reftable). */
function filesBackend(dirs: GitDirs): boolean {
  return !existsSync(join(dirs.commonDir, 'reftable'));
}

/** packed-refs as name → object id (peeled lines skipped); empty when there is none, undefined when unreadable. */
function packedRefs(commonDir: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? out : undefined;
  }
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const id = line.slice(0, space);
    if (space < 0 || !OBJECT_ID.test(id)) return undefined;
    out.set(line.slice(space + 1), id);
  }
  return out;
}

type RefValue = { id: string } | { symref: string };

/** A loose ref file's value; null when there is no such file; undefined when it is not a ref git would read. */
function looseRef(dirs: GitDirs, name: string): RefValue | null | undefined {
  const dir = name === 'HEAD' || PER_WORKTREE.test(name) ? dirs.gitDir : dirs.commonDir;
  let text: string;
  try {
    text = readFileSync(join(dir, name), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
  const value = text.trim();
  if (value.startsWith('ref: ')) return { symref: value.slice(5).trim() };
  return OBJECT_ID.test(value) ? { id: value } : undefined;
}

/**
 * The object id a ref name points at, following symbolic refs; null when the ref does not exist.
 * `loose` gives a ref's loose value (read now, or read before); `packed` is read only after the
 * loose value said there is none, and once.
 */
function resolve(name: string, loose: (ref: string) => RefValue | null | undefined, packed: () => Map<string, string> | undefined): string | null | undefined {
  let ref = name;
  for (let depth = 0; depth <= MAX_SYMREF_DEPTH; depth++) {
    const value = loose(ref);
    if (value === undefined) return undefined;
    if (value === null) {
      const p = ref === 'HEAD' ? undefined : packed();
      if (p === undefined) return undefined;
      return p.get(ref) ?? null;
    }
    if ('id' in value) return value.id;
    ref = value.symref;
    if (!ref.startsWith('refs/')) return undefined;
  }
  return undefined;
}

/** packed-refs read at most once, on first use. */
function packedOnce(commonDir: string): () => Map<string, string> | undefined {
  let read = false;
  let packed: Map<string, string> | undefined;
  return () => {
    if (!read) {
      packed = packedRefs(commonDir);
      read = true;
    }
    return packed;
  };
}

export type Head = {
  /** The commit HEAD points at; null on an unborn branch. */
  commit: string | null;
  /** The branch (refs/heads/…) HEAD names; null when HEAD is detached. */
  branch: string | null;
};

/** Where HEAD is: `git rev-parse -q --verify HEAD` and `git symbolic-ref -q HEAD` in one read. */
export function readHead(dirs: GitDirs): Head | undefined {
  if (!filesBackend(dirs)) return undefined;
  const head = looseRef(dirs, 'HEAD');
  if (!head) return undefined;
  if ('id' in head) return { commit: head.id, branch: null };
  // reftable's HEAD points at refs/heads/.invalid; its refs are not files.
  if (!head.symref.startsWith('refs/heads/') || head.symref === 'refs/heads/.invalid') return undefined;
  const commit = resolve(head.symref, (ref) => looseRef(dirs, ref), packedOnce(dirs.commonDir));
  return commit === undefined ? undefined : { commit, branch: head.symref };
}

/**
 * The object ids of every ref under `prefixes` (e.g. `refs/heads/`), as `git for-each-ref
 * --format=%(objectname)` lists them (deduplicated; order is not kept). Without prefixes,
 * every ref; then only in the main work tree, since a linked one also has refs of its own.
 */
export function refTips(dirs: GitDirs, prefixes: readonly string[] = ['refs/']): string[] | undefined {
  const refs = refMap(dirs, prefixes);
  return refs && [...new Set(refs.values())];
}

/**
 * Every ref under `prefixes` by name, with the object id it names, as `git for-each-ref
 * --format='%(objectname) %(refname)'` lists them; undefined where refTips would be.
 */
export function refMap(dirs: GitDirs, prefixes: readonly string[] = ['refs/']): Map<string, string> | undefined {
  if (!filesBackend(dirs)) return undefined;
  if (dirs.gitDir !== dirs.commonDir && prefixes.some((p) => !/^refs\/(?:heads|tags|remotes)\//.test(p))) return undefined;
  // Loose refs first, each read as it is found; packed-refs after (see the top of this file).
  const loose = new Map<string, RefValue | null | undefined>();
  const walk = (rel: string): boolean => {
    let entries;
    try {
      entries = readdirSync(join(dirs.commonDir, rel), { withFileTypes: true });
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT';
    }
    for (const e of entries) {
      const name = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!walk(name)) return false;
      } else if (e.isFile()) {
        // A ref being written (<name>.lock) is not a ref yet.
        if (!e.name.endsWith('.lock')) loose.set(name, looseRef(dirs, name));
      } else {
        return false;
      }
    }
    return true;
  };
  const walked = [...new Set(prefixes.map((p) => p.replace(/\/$/, '')))];
  for (const prefix of walked) if (!walk(prefix)) return undefined;
  // A name under the folders walked that the walk did not find has no loose file: it is read
  // from packed-refs, not looked for again (a failed open costs an error object each).
  const wasWalked = (ref: string) => walked.some((w) => ref.startsWith(`${w}/`));
  const packed = packedRefs(dirs.commonDir);
  if (!packed) return undefined;
  const names = new Set(loose.keys());
  for (const name of packed.keys()) if (prefixes.some((p) => name.startsWith(p))) names.add(name);
  const ids = new Map<string, string>();
  for (const name of names) {
    const id = resolve(
      name,
      (ref) => (loose.has(ref) ? loose.get(ref) : wasWalked(ref) ? null : looseRef(dirs, ref)),
      () => packed,
    );
    if (id === undefined) return undefined;
    // A symbolic ref to nothing, or a ref removed meanwhile (packed and loose): git lists neither.
    if (id !== null) ids.set(name, id);
  }
  return ids;
}

/** The commit HEAD names, `unborn <ref>` on a branch without commits, undefined when it cannot be read this way. */
export function headCommitOf(gitDir: string, commonDir: string): string | undefined {
  const head = readHead({ gitDir, commonDir });
  if (!head) return undefined;
  return head.commit ?? `unborn ${head.branch}`;
}
