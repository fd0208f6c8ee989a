/**
 * What git keeps in plain files, read without starting git: HEAD, loose and packed refs, and
 * loose commit objects. A git process costs the daemon 3–5 ms of its main thread (the fork
 * of a large process), and the daemon asked ~10 after every commit for facts that sit in a
 * few small files.
 *
 * Every function answers as git would, or `undefined` when it cannot be sure (a reftable
 * repository, an object that is packed or borrowed from an alternate, a commit in another
 * encoding, anything unreadable or unexpected): the caller then asks git, as it always did.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** Refs that live in a linked work tree's own git dir, not in the common dir. */
const PER_WORKTREE = /^refs\/(?:bisect|worktree|rewritten)\//;
/** Symbolic refs followed before giving up (git's own limit is 5). */
const MAX_SYMREF_DEPTH = 5;

export type GitDirs = { gitDir: string; commonDir: string };

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

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

/** The object id a ref name points at, following symbolic refs; null when the ref does not exist. */
function resolve(dirs: GitDirs, name: string, packed: Map<string, string> | undefined): string | null | undefined {
  let ref = name;
  for (let depth = 0; depth <= MAX_SYMREF_DEPTH; depth++) {
    const loose = looseRef(dirs, ref);
    if (loose === undefined) return undefined;
    if (loose === null) {
      if (ref === 'HEAD' || packed === undefined) return undefined;
      return packed.get(ref) ?? null;
    }
    if ('id' in loose) return loose.id;
    ref = loose.symref;
    if (!ref.startsWith('refs/')) return undefined;
  }
  return undefined;
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
  if (!head.symref.startsWith('refs/heads/')) return undefined;
  const commit = resolve(dirs, head.symref, packedRefs(dirs.commonDir));
  return commit === undefined ? undefined : { commit, branch: head.symref };
}

/**
 * The object ids of every ref under `prefixes` (e.g. `refs/heads/`), as `git for-each-ref
 * --format=%(objectname)` lists them (deduplicated; order is not kept). Without prefixes,
 * every ref; then only in the main work tree, since a linked one also has refs of its own.
 */
export function refTips(dirs: GitDirs, prefixes: readonly string[] = ['refs/']): string[] | undefined {
  if (!filesBackend(dirs)) return undefined;
  if (dirs.gitDir !== dirs.commonDir && prefixes.some((p) => !/^refs\/(?:heads|tags|remotes)\//.test(p))) return undefined;
  const packed = packedRefs(dirs.commonDir);
  if (!packed) return undefined;
  const names = new Set<string>();
  for (const name of packed.keys()) if (prefixes.some((p) => name.startsWith(p))) names.add(name);
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
        if (!e.name.endsWith('.lock')) names.add(name);
      } else {
        return false;
      }
    }
    return true;
  };
  for (const prefix of new Set(prefixes.map((p) => p.replace(/\/$/, '')))) if (!walk(prefix)) return undefined;
  const ids = new Set<string>();
  for (const name of names) {
    const id = resolve(dirs, name, packed);
    if (id === undefined) return undefined;
    // A symbolic ref to nothing, or a ref removed meanwhile: git lists neither.
    if (id !== null) ids.add(id);
  }
  return [...ids];
}

export type CommitObject = {
  tree: string;
  parents: string[];
  /** git's %s: the first paragraph of the message, its lines joined by spaces. */
  subject: string;
  /** git's %b: the message after the first paragraph. */
  body: string;
};

/** A loose commit object, parsed; undefined when it is not loose here or not a plain UTF-8 commit. */
export function readCommitObject(dirs: GitDirs, id: string): CommitObject | undefined {
  if (!OBJECT_ID.test(id)) return undefined;
  let raw: Buffer;
  try {
    raw = inflateSync(readFileSync(join(dirs.commonDir, 'objects', id.slice(0, 2), id.slice(2))));
  } catch {
    return undefined;
  }
  const nul = raw.indexOf(0);
  const header = raw.subarray(0, nul).toString('latin1');
  if (nul < 0 || header !== `commit ${raw.length - nul - 1}`) return undefined;
  const text = raw.subarray(nul + 1).toString('utf8');
  const end = text.indexOf('\n\n');
  const headers = (end < 0 ? text : text.slice(0, end)).split('\n');
  const message = end < 0 ? '' : text.slice(end + 2);
  let tree = '';
  const parents: string[] = [];
  for (const line of headers) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    // A message in another encoding is re-encoded by git log: git's to read.
    else if (line.startsWith('encoding ') && !/^encoding utf-?8$/i.test(line)) return undefined;
  }
  if (!OBJECT_ID.test(tree) || !parents.every((p) => OBJECT_ID.test(p))) return undefined;
  return { tree, parents, ...subjectAndBody(message) };
}

/** git's pretty-format split of a message: the first paragraph (each line without its trailing blanks, joined by a space) and the rest. */
function subjectAndBody(message: string): { subject: string; body: string } {
  const lines = message.split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const subject: string[] = [];
  for (; i < lines.length && lines[i]!.trim() !== ''; i++) subject.push(lines[i]!.trimEnd());
  while (i < lines.length && lines[i]!.trim() === '') i++;
  return { subject: subject.join(' '), body: lines.slice(i).join('\n') };
}
