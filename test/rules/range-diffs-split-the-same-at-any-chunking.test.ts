/**
 * The stream of `git diff-tree --stdin` (many commits' raw listings and patches, one after the
 * other, merges combined) is split into the same diffs however the pipe cuts it: byte by byte,
 * at every small size, at random sizes. Real git output of a real repository with a rename, a
 * binary file, an empty commit, a file named like a commit id, a root commit and a merge.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffTreeSplitter } from '../../src/git/diff-parse.js';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

type Split = Array<{ raw: string; patch: string }>;

function split(stream: Buffer, ids: string[], sizes: () => number): Split {
  const out: Split = ids.map(() => ({ raw: '', patch: '' }));
  const s = diffTreeSplitter(ids, {
    patch: (i, chunk) => (out[i]!.patch += chunk.toString('latin1')),
    end: (i, raw) => (out[i]!.raw = raw.toString('latin1')),
  });
  for (let at = 0; at < stream.length; ) {
    const n = Math.max(1, sizes());
    s.push(stream.subarray(at, at + n));
    at += n;
  }
  s.end();
  return out;
}

describe('diff-tree --stdin output split into its diffs', () => {
  let t: TestEnv;
  let repo: string;
  const streams: Array<{ name: string; stream: Buffer; ids: string[] }> = [];

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ 'a.txt': 'one\ntwo\n' });
    const commit = (files: Record<string, string | Buffer>, msg: string, ...flags: string[]) => {
      writeFiles(repo, files);
      gitIn(t, repo, 'add', '-A');
      gitIn(t, repo, 'commit', '-qm', msg, ...flags);
    };
    commit({ 'a.txt': 'one\ntwo\nthree\n', 'dir/b.txt': 'b\n' }, 'grow');
    gitIn(t, repo, 'mv', 'a.txt', 'renamed.txt');
    commit({}, 'rename');
    commit({}, 'empty', '--allow-empty');
    const head = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commit({ [head]: `named like a commit id\n`, 'bin.dat': Buffer.from([0, 1, 2, 3, 10, 0]) }, 'odd names');
    gitIn(t, repo, 'checkout', '-q', '-b', 'side', 'HEAD~2');
    commit({ 'side.txt': 's\n', 'dir/b.txt': 'b side\n' }, 'side');
    gitIn(t, repo, 'checkout', '-q', 'main');
    gitIn(t, repo, 'merge', '-q', '--no-commit', 'side');
    commit({ 'dir/b.txt': 'b merged by hand\n' }, 'merge');
    const list = gitIn(t, repo, 'rev-list', '--reverse', '--topo-order', '--parents', 'HEAD')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const plain = list.filter((c) => c.length <= 2);
    const merges = list.filter((c) => c.length > 2);
    const run = (args: string[], input: string) =>
      execFileSync('git', ['diff-tree', '--stdin', '--always', '--root', '-r', '--raw', '-z', '--no-abbrev', '-M', ...args], { cwd: repo, input });
    streams.push({
      name: 'commits and a root, with patches',
      stream: run(['-p', '-U0'], plain.map((c) => c.join(' ')).join('\n') + '\n'),
      ids: plain.map((c) => c[0]!),
    });
    streams.push({ name: 'raw listings only', stream: run([], plain.map((c) => c.join(' ')).join('\n') + '\n'), ids: plain.map((c) => c[0]!) });
    streams.push({ name: 'a merge, combined', stream: run(['--cc', '-p', '-U1'], merges.map((c) => c[0]).join('\n') + '\n'), ids: merges.map((c) => c[0]!) });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('every chunking gives the diffs the whole stream gives', () => {
    for (const { name, stream, ids } of streams) {
      const whole = split(stream, ids, () => stream.length);
      expect(whole.length, name).toBe(ids.length);
      expect(
        whole.every((d) => d.raw.startsWith(':') || d.raw === ''),
        name,
      ).toBe(true);
      for (let size = 1; size <= 64; size++)
        expect(
          split(stream, ids, () => size),
          `${name}, chunks of ${size}`,
        ).toEqual(whole);
      let seed = 7;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), 1 + (seed % 300));
      for (let round = 0; round < 20; round++) expect(split(stream, ids, random), `${name}, random chunks`).toEqual(whole);
    }
  });

  it('each diff gets its own listing and patch', () => {
    const { stream, ids } = streams[0]!;
    const diffs = split(stream, ids, () => 5);
    const rename = diffs.find((d) => d.raw.includes('R100'))!;
    expect(rename.raw).toContain('a.txt\0renamed.txt\0');
    expect(diffs.filter((d) => d.raw === '' && d.patch === '')).toHaveLength(1); // the empty commit
    const odd = diffs.find((d) => d.raw.includes('bin.dat'))!;
    expect(odd.patch).toContain('named like a commit id');
    expect(diffs[0]!.patch).toContain('+one'); // the root commit, against the empty tree
    const [merge] = split(streams[2]!.stream, streams[2]!.ids, () => 3);
    expect(merge!.raw.startsWith('::')).toBe(true);
    expect(merge!.patch).toContain('++b merged by hand');
  });
});
