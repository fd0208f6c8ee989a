/**
 * `stagedTreeOf` (src/git/index-file.ts) builds the staged snapshot's tree only for the folders
 * whose entries changed since the last tree it built, and keeps a read of an index file while
 * its stamp stays the same. Whatever was kept, the tree must be the one `git write-tree` writes
 * from the same entries, after every kind of change (content, a new file deep down, a removal
 * that empties a folder, a rename across folders, a mode, intent-to-add, a folder named like a
 * file's prefix), in the default index and in another index file taking turns, and after two
 * writes of the index in quick succession.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheTreeOf, stagedEntriesOf, stagedTreeOf } from '../../src/git/index-file.js';
import { makeEnv, writeFiles } from '../helpers/env.js';

const t = makeEnv();
const { env } = t;

afterAll(() => t.cleanup());

describe.each(['sha1', 'sha256'] as const)('the staged tree, built for what changed (%s)', (format) => {
  const dir = join(t.home, '..', format);
  mkdirSync(dir);
  const git = (args: string[], extra: NodeJS.ProcessEnv = {}) => execFileSync('git', args, { cwd: dir, env: { ...env, ...extra }, encoding: 'utf8' }).trim();
  git(['init', '-q', `--object-format=${format}`]);
  const files: Record<string, string> = {};
  for (let d = 0; d < 8; d++) for (let f = 0; f < 6; f++) files[`src/d${d}/sub${f % 2}/f${f}.ts`] = `export const x${d}${f} = ${d * f};\n`;
  files['a.txt'] = 'a\n';
  files['a-b/c.txt'] = 'c\n';
  files['a/b.txt'] = 'b\n';
  writeFiles(dir, files);
  git(['add', '-A']);
  git(['commit', '-qm', 'one']);
  const index = join(dir, '.git', 'index');
  const other = join(dir, '.git', 'other-index');

  /** What git writes from the entries of `file` (intent-to-add entries left out, as `git commit` leaves them). */
  const gitTree = (file: string) => git(['write-tree'], { GIT_INDEX_FILE: file });
  const expectSame = (file: string, after: string) => {
    const name = file === index ? 'the index' : 'another index file';
    // All read before git writes the tree (write-tree also writes the index's cache tree).
    const entries = stagedEntriesOf(file);
    const cache = cacheTreeOf(file);
    const tree = stagedTreeOf(file);
    const written = gitTree(file);
    expect(tree, `the staged tree of ${name} after ${after}`).toBe(written);
    expect(entries?.tree, `the staged tree that comes with the entries' digest of ${name} after ${after}`).toBe(written);
    expect(entries?.cacheTree, `the cache tree that comes with the entries' digest of ${name} after ${after}`).toBe(cache);
  };

  it('after each change, in two index files taking turns, is the tree git writes', () => {
    expectSame(index, 'the first commit');
    const steps: Array<[string, () => void]> = [
      ['a content change deep down', () => (writeFiles(dir, { 'src/d3/sub1/f3.ts': 'changed\n' }), git(['add', '-A']))],
      ['a new file in a new folder', () => (writeFiles(dir, { 'src/d3/sub2/new.ts': 'new\n' }), git(['add', '-A']))],
      ['a removal that empties a folder', () => git(['rm', '-q', '--cached', '-r', 'src/d5/sub0'])],
      ['a rename across folders', () => git(['mv', 'src/d1/sub1/f1.ts', 'src/d7/f1-moved.ts'])],
      ['a mode change', () => git(['update-index', '--chmod=+x', 'src/d2/sub0/f0.ts'])],
      [
        'intent-to-add',
        () => (writeFiles(dir, { 'src/d6/later.ts': 'later\n', 'fresh/only.ts': 'o\n' }), git(['add', '-N', 'src/d6/later.ts', 'fresh/only.ts'])),
      ],
      ['a folder named like a file prefix', () => (writeFiles(dir, { 'a.txt.d/x': 'x\n', 'a-b.txt': 'ab\n' }), git(['add', '-A', 'a.txt.d', 'a-b.txt']))],
      ['nothing but a refresh (git status rewrites the index)', () => git(['status', '--porcelain'])],
    ];
    for (const [what, step] of steps) {
      step();
      expectSame(index, what);
      // Another file, read between two reads of the default index, staging HEAD's tree.
      git(['read-tree', 'HEAD'], { GIT_INDEX_FILE: other });
      expectSame(other, `${what} (HEAD read into another file)`);
      expectSame(index, `${what}, read again`);
    }
  });

  it('after random changes that move the folders kept from the last tree, in nested folders of every size, is the tree git writes', () => {
    // Folders of ten files inside folders of forty: each kept from one tree to the next, and
    // carried to a new place in the records when a change before them (in git's order) moves them.
    const nested: Record<string, string> = {};
    for (let p = 0; p < 4; p++) for (let m = 0; m < 4; m++) for (let f = 0; f < 10; f++) nested[`n${p}/m${m}/f${f}.ts`] = `n${p}${m}${f}\n`;
    writeFiles(dir, nested);
    git(['add', '-A']);
    expectSame(index, 'the nested folders added');
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const names = Object.keys(nested);
    for (let step = 0; step < 40; step++) {
      const kind = rand(5);
      const path = names[rand(names.length)]!;
      let what: string;
      if (kind === 0) {
        writeFiles(dir, { [path]: `step ${step}\n` });
        git(['add', path]);
        what = `a change of ${path}`;
      } else if (kind === 1) {
        // a new file that sorts before every nested folder, or inside one: what follows it moves
        const added = rand(2) === 0 ? `m-${step}.txt` : `${path.slice(0, path.lastIndexOf('/'))}/e${step}.ts`;
        writeFiles(dir, { [added]: `${step}\n` });
        git(['add', added]);
        names.push(added);
        what = `a new file ${added}`;
      } else if (kind === 2 && names.length > 20) {
        git(['rm', '-q', '--cached', path]);
        names.splice(names.indexOf(path), 1);
        what = `a removal of ${path}`;
      } else if (kind === 3) {
        git(['read-tree', 'HEAD'], { GIT_INDEX_FILE: other });
        expectSame(other, `step ${step}: HEAD read into another file`);
        what = 'a read of another file between';
      } else {
        writeFiles(dir, { [path]: `both ${step}\n`, [`m-${step}-b.txt`]: 'b\n' });
        git(['add', path, `m-${step}-b.txt`]);
        names.push(`m-${step}-b.txt`);
        what = `a change of ${path} and a new file before it`;
      }
      expectSame(index, `step ${step}, ${what}`);
    }
  });

  it('two writes of the index in quick succession: the second one is what is read', () => {
    for (let round = 0; round < 10; round++) {
      writeFileSync(join(dir, 'quick.txt'), `round ${round}\n`);
      git(['add', 'quick.txt']);
      const first = stagedEntriesOf(index)!.digest;
      expectSame(index, `quick write ${round}`);
      writeFileSync(join(dir, 'quick.txt'), `round ${round} again\n`);
      git(['add', 'quick.txt']);
      expect(stagedEntriesOf(index)!.digest, `the digest after the second quick write of round ${round}`).not.toBe(first);
      expectSame(index, `the second quick write of round ${round}`);
    }
  });
});
