import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineSplitter } from '../../src/git/parse.js';
import { PLAIN_DIFF, GIT_CONFIG_OVERRIDES } from '../../src/git/run.js';
import { parseRawZ, patchParser, rawPatchSplitter, unquoteGitPath } from '../../src/git/diff-parse.js';
import { git, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

type Added = string;

function parseInChunks(out: Buffer, size: number): { raw: ReturnType<typeof parseRawZ>; added: Added[] } {
  const added: Added[] = [];
  const split = lineSplitter(patchParser({ file: () => true, added: (p, line, text) => added.push(`${p}:${line}:${text}`) }));
  const stream = rawPatchSplitter((c) => split.push(c));
  for (let i = 0; i < out.length; i += size) stream.push(out.subarray(i, i + size));
  split.end();
  return { raw: parseRawZ(stream.raw()), added };
}

describe('the raw+patch stream parses the same whatever the chunking', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('gives identical changes and added lines for 1-byte, 7-byte and whole-buffer chunks', () => {
    const repo = t.repo({ 'a.txt': 'one\ntwo\nthree\n', 'moved.txt': 'x\n'.repeat(30), 'gone.txt': 'bye\n' });
    mkdir(repo, 'dir');
    writeFiles(repo, { 'a.txt': 'one\nTWO\nthree\nfour\n', 'new file.txt': 'héllo\n+plus line\n', 'tab\tname.txt': 'q\n' });
    git(repo, 'mv', 'moved.txt', 'dir/moved.txt');
    git(repo, 'rm', '-q', 'gone.txt');
    git(repo, 'add', '-A');
    const out = execFileSync('git', [...GIT_CONFIG_OVERRIDES, 'diff', '--cached', '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF, '-U0'], { cwd: repo });
    const whole = parseInChunks(out, out.length);
    expect(whole.raw.map((c) => `${c.status}:${c.oldPath ?? ''}>${c.path}`).sort()).toEqual([
      'A:>new file.txt',
      'A:>tab\tname.txt',
      'D:>gone.txt',
      'M:>a.txt',
      'R:moved.txt>dir/moved.txt',
    ]);
    expect(whole.added).toEqual(['a.txt:2:TWO', 'a.txt:4:four', 'new file.txt:1:héllo', 'new file.txt:2:+plus line', 'tab\tname.txt:1:q']);
    for (const size of [1, 2, 7, 64]) expect(parseInChunks(out, size)).toEqual(whole);
  });

  it('unquotes C-style quoted paths, including octal UTF-8 bytes', () => {
    expect(unquoteGitPath('"b/a\\tb\\"c\\\\d"')).toBe('b/a\tb"c\\d');
    expect(unquoteGitPath('"na\\303\\257ve"')).toBe('naïve');
    expect(unquoteGitPath('plain/path')).toBe('plain/path');
  });

  it('cuts an over-long line instead of buffering it whole', () => {
    const lines: Array<[number, boolean]> = [];
    const split = lineSplitter((l, cut) => lines.push([l.length, cut]), 10);
    split.push(Buffer.from('short\n' + 'x'.repeat(25)));
    split.push(Buffer.from('y'.repeat(25) + '\nafter\n'));
    split.end();
    expect(lines).toEqual([
      [5, false],
      [10, true],
      [5, false],
    ]);
  });
});

function mkdir(root: string, rel: string) {
  execFileSync('mkdir', ['-p', `${root}/${rel}`]);
}
