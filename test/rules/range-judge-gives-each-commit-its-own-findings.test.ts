/**
 * `check --commits` reads a range at once: the commits' patches from one git process and the
 * merges' combined diffs from another, read side by side, then the files those patches show as
 * binary, from their blobs, with one `git cat-file` for each of them. Each finding still belongs
 * to the commit, file and line that brought it: binary files with keys in several commits (one
 * of them renamed and grown, where only the new key is the rename's), a merge whose hand-made
 * resolution of a binary file adds a key (the merge's own, in the combined diff's part), a
 * commit whose added lines look like the diff's own headers (`diff --git`, `+++ b/…`, `@@`), and
 * a key in the same commit after them. Real repository, the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const KEY2 = 'AKIA' + 'Z7TRWQ2M4K8PXH3N';
const KEY3 = 'AKIA' + 'M2XH8KQ4Z7RTW3PN';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;
/** Bytes git shows as binary (NULs), with text lines in them: a key on a line of its own is at a line number. */
const binary = (...lines: string[]) => Buffer.concat([Buffer.from([0, 1, 2, 0, 10]), Buffer.from(lines.map((l) => `${l}\n`).join(''))]);

describe('a range read at once gives each commit its own findings', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;
  const c: Record<string, string> = {};

  const commit = (files: Record<string, string | Buffer>, message: string) => {
    writeFiles(repo, files);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', message);
    return gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  };

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'README.md': '# project\n' });
    base = commit({ 'data.bin': binary('v1') }, 'a binary file, no key');
    c.binary = commit({ 'a.bin': binary('one', KEY, 'two') }, 'a binary file with a key on its line 3');
    c.headers = commit(
      { 'notes/patch.txt': ['diff --git a/x b/x', '+++ b/elsewhere.txt', '@@ -1 +1,40 @@', `--- ${KEY2}`, 'diff --cc y', KEY3, ''].join('\n') },
      'a patch as text, its lines looking like the diff around them',
    );
    gitIn(t, repo, 'mv', 'a.bin', 'b.bin');
    c.rename = commit({ 'b.bin': binary('one', KEY, 'two', 'three', KEY2) }, 'renamed, and a second key');
    // A side branch and main both change data.bin; the merge's resolution is neither: a key of its own.
    gitIn(t, repo, 'checkout', '-q', '-b', 'side', c.rename);
    c.side = commit({ 'data.bin': binary('v2 side') }, 'side changes data.bin');
    gitIn(t, repo, 'checkout', '-q', 'main');
    c.main = commit({ 'data.bin': binary('v2 main') }, 'main changes data.bin');
    gitIn(t, repo, 'merge', '-q', '--no-edit', '-X', 'ours', 'side');
    writeFiles(repo, { 'data.bin': binary('v3 merged', KEY3) });
    gitIn(t, repo, 'add', 'data.bin');
    gitIn(t, repo, 'commit', '-q', '--amend', '--no-edit');
    c.merge = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    c.after = commit({ 'c.bin': binary(KEY2) }, 'after the merge, another binary file with a key');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('every finding names the commit, file and line that brought it, and no other', async () => {
    const combined = gitIn(t, repo, 'diff-tree', '--cc', '--name-only', c.merge).trim().split('\n').slice(1);
    expect(combined, 'the merge does not change data.bin against both parents (the test would prove nothing)').toEqual(['data.bin']);
    const r = await t.cli(['check', '--commits', `${base}..HEAD`, '--json'], { cwd: repo });
    expect(r.code, `the range passed:\n${r.stdout}${r.stderr}`).toBe(1);
    const found = (r.json().violations as Array<{ commit: string; file: string; line: number }>)
      .map((v) => `${Object.keys(c).find((k) => c[k] === v.commit) ?? v.commit} ${v.file}:${v.line}`)
      .sort();
    expect(found, 'the findings are not each commit’s own').toEqual(
      ['binary a.bin:3', 'headers notes/patch.txt:4', 'headers notes/patch.txt:6', 'rename b.bin:6', 'merge data.bin:3', 'after c.bin:2'].sort(),
    );
    expect(r.json().warnings, 'something was left unread').toEqual([]);
  });
});
