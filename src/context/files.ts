/**
 * Reading one context file safely: bounded in time and size, never blocking on a FIFO or
 * a hung network mount, scanned for prompt injection, truncated head/tail past a cap.
 */
import { readFile, stat } from 'node:fs/promises';
import { sha256 } from '../text/hash.js';
import { blockedNotice, scanText, type ThreatHit } from '../security/scan.js';

/** A context file that has not been read within this time is skipped (network mounts, FUSE). */
export const CONTEXT_READ_TIMEOUT_MS = 2_000;
/** Files larger than this are not read at all: no authority file is legitimately this big. */
export const MAX_CONTEXT_FILE_BYTES = 8 * 1024 * 1024;
/** Share of the cap kept from the start and from the end of a truncated file (the rest is the marker's room). */
export const TRUNCATE_HEAD_SHARE = 0.7;
export const TRUNCATE_TAIL_SHARE = 0.2;

export type ReadOutcome = { kind: 'missing' } | { kind: 'text'; text: string } | { kind: 'skipped'; reason: string };

/** Reads a regular file as UTF-8; anything else (missing, directory, FIFO, too big, too slow) is reported, not thrown. */
export async function readContextFile(path: string, timeoutMs = CONTEXT_READ_TIMEOUT_MS): Promise<ReadOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'skipped', reason: `not read within ${timeoutMs} ms` }), timeoutMs);
  });
  const abort = new AbortController();
  const read = (async (): Promise<ReadOutcome> => {
    let st;
    try {
      st = await stat(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      return { kind: 'skipped', reason: `cannot be read (${code ?? String(err)})` };
    }
    if (st.isDirectory()) return { kind: 'missing' };
    // Opening a FIFO or device would block a thread until someone writes to it.
    if (!st.isFile()) return { kind: 'skipped', reason: 'is not a regular file' };
    if (st.size > MAX_CONTEXT_FILE_BYTES) return { kind: 'skipped', reason: `is ${st.size} bytes, over the ${MAX_CONTEXT_FILE_BYTES}-byte limit` };
    try {
      return { kind: 'text', text: await readFile(path, { encoding: 'utf8', signal: abort.signal }) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'missing' };
      return { kind: 'skipped', reason: `cannot be read (${code ?? String(err)})` };
    }
  })();
  try {
    const outcome = await Promise.race([read, timeout]);
    if (outcome.kind === 'skipped' && outcome.reason.startsWith('not read within')) abort.abort();
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/** Removes a leading YAML front matter block (`---` … `---`), which is metadata for tools, not rules for the model. */
export function stripFrontMatter(text: string): string {
  const m = /^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n(---|\.\.\.)[ \t]*(\r?\n|$)/.exec(text);
  return m ? text.slice(m[0].length).replace(/^\s*\n/, '') : text;
}

/** Index adjusted so a cut never splits a UTF-16 surrogate pair. */
function safeCut(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

export type Truncation = { text: string; truncated: boolean; originalChars: number };

/**
 * Keeps the first 70% and the last 20% of `maxChars` when `text` is longer, with a marker
 * between them that says what was cut and how to read the whole file.
 */
export function truncateHeadTail(text: string, maxChars: number, label: string): Truncation {
  if (text.length <= maxChars) return { text, truncated: false, originalChars: text.length };
  const head = safeCut(text, Math.floor(maxChars * TRUNCATE_HEAD_SHARE));
  const tailStart = safeCut(text, text.length - Math.floor(maxChars * TRUNCATE_TAIL_SHARE));
  const omitted = tailStart - head;
  const marker =
    `\n\n[…truncated ${label}: ${omitted} of ${text.length} characters omitted (kept the first ${head} and the last ${text.length - tailStart}). ` +
    `Read the whole file with read_file {"path": ${JSON.stringify(label)}} before relying on the omitted part.]\n\n`;
  return { text: text.slice(0, head) + marker + text.slice(tailStart), truncated: true, originalChars: text.length };
}

export type LoadedFile = {
  /** Path relative to the directory the context is built for (the label the model sees). */
  label: string;
  path: string;
  /** What goes into the prompt: the content, a truncated copy, or the one-line BLOCKED notice. */
  text: string;
  sha256: string;
  truncated: boolean;
  blocked: ThreatHit[];
  /** Hits in a user-authored file that did not stop it loading (named in a warning). */
  cautions: ThreatHit[];
};

/**
 * Who wrote a context file. `project`: the repository's files (AGENTS.md, CLAUDE.md, …), which
 * arrive with a clone, a pull or a dependency; a hit blocks them. `user`: files under
 * $HERMES_HOME that the user writes for themselves (SOUL.md); a hit in text they can read is a
 * caution (they may be quoting the attack to warn against it), as in Hermes Agent (#112570).
 */
export type ContextAuthor = 'project' | 'user';

/** Hits a user-authored file still blocks on: text its author cannot see in an editor. */
const CONCEALED: ReadonlySet<ThreatHit['category']> = new Set(['invisible-unicode', 'hidden-markup']);

/** Scans the whole content first (truncation must not hide an injection), then truncates what is kept. */
export function prepareContextText(raw: string, label: string, path: string, maxChars: number, author: ContextAuthor = 'project'): LoadedFile {
  const hits = scanText(raw, 'context');
  const blocked = author === 'user' ? hits.filter((h) => CONCEALED.has(h.category)) : hits;
  if (blocked.length > 0) {
    return { label, path, text: blockedNotice(label, blocked), sha256: sha256(raw), truncated: false, blocked, cautions: [] };
  }
  const t = truncateHeadTail(raw.replace(/^\uFEFF/, '').trim(), maxChars, label);
  return { label, path, text: t.text, sha256: sha256(raw), truncated: t.truncated, blocked: [], cautions: hits };
}
