/**
 * Loose objects read without starting git: a commit's tree, parents and message. Undefined
 * when the object is not loose here (packed, or in an alternate) or not a plain UTF-8 commit:
 * the caller then asks git.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { OBJECT_ID, type GitDirs } from './refs.js';

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
