/**
 * A changed index file is compared with the bytes read before, and only the entries whose bytes
 * differ are read again (src/git/index-file.ts). Whatever a write changed — content, new files,
 * removals, renames, modes, intent-to-add, conflicts and their resolution, attributes files,
 * stat data only, the cache tree, the index version, a path longer than the name field holds —
 * what the reader says of the file must be what a first read of the same bytes says, and the
 * tree must be the one `git write-tree` writes. Seeded random steps over a repository of a few
 * hundred files (folders large enough to be kept from build to build), SHA-1 and SHA-256.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stagedEntriesOf, stagedTreeOf } from '../../src/git/index-file.js';
import { makeEnv, writeFiles } from '../helpers/env.js';

// The first reads are made by another instance of the module: its kept reads and last tree are its own.
const oracle = (await import(`../../src/git/index-file.js?${'first-reads'}`)) as typeof import('../../src/git/index-file.js');
const t = makeEnv();
afterAll(() => t.cleanup());

describe.each(['sha1', 'sha256'] as const)('an index read again after a write (%s)', (format) => {
  it('says what a first read of the same bytes says, after each of 120 random writes', () => {
    const dir = join(t.home, '..', `again-${format}`);
    mkdirSync(dir);
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: dir, env: t.env, encoding: 'utf8', input }).trim();
    git(['init', '-q', `--object-format=${format}`]);
    const paths: string[] = [];
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) {
      const p = `d${i % 4}/s${i % 2}/f${i}.txt`;
      files[p] = `file ${i}\n`;
      paths.push(p);
    }
    writeFiles(dir, files);
    git(['add', '-A']);
    git(['commit', '-qm', 'one']);
    const index = join(dir, '.git', 'index');
    const blob = git(['hash-object', '-w', '--stdin'], 'a blob\n');

    let seed = 46;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 12) % n;
    };
    const some = () => paths[rnd(paths.length)]!;
    let made = 0;
    const steps: Array<[string, () => void]> = [
      ['a content change', () => (writeFiles(dir, { [some()]: `changed ${made++}\n` }), git(['add', '-A']))],
      [
        'new files here and there',
        () => {
          const fresh = [`d${rnd(6)}/new${made++}.txt`, `n${made++}/x/y.txt`];
          writeFiles(dir, Object.fromEntries(fresh.map((p) => [p, `${p}\n`])));
          paths.push(...fresh);
          git(['add', '--', ...fresh]);
        },
      ],
      ['a removal', () => git(['rm', '-q', '--cached', '--ignore-unmatch', '--', some()])],
      [
        "a folder's first or last file changed",
        () => {
          const listed = git(['ls-files', '--', `d${rnd(4)}/s${rnd(2)}`])
            .split('\n')
            .filter(Boolean);
          if (listed.length === 0) return;
          writeFiles(dir, { [rnd(2) ? listed[0]! : listed[listed.length - 1]!]: `edge ${made++}\n` });
          git(['add', '-A']);
        },
      ],
      ['a mode change', () => git(['update-index', '--chmod=+x', '--', some()])],
      [
        'intent-to-add',
        () => {
          const p = `ita/${made++}.txt`;
          writeFiles(dir, { [p]: 'later\n' });
          paths.push(p);
          git(['add', '-N', '--', p]);
        },
      ],
      [
        'a conflict, then its resolution',
        () => {
          const p = `conflict${made++}.txt`;
          git(['update-index', '--index-info'], [1, 2, 3].map((s) => `100644 ${blob} ${s}\t${p}`).join('\n') + '\n');
          check(`a conflict on ${p}`);
          git(['update-index', '--force-remove', '--', p]);
          git(['update-index', '--add', '--cacheinfo', `100644,${blob},${p}`]);
        },
      ],
      ['an attributes file', () => (writeFiles(dir, { [`d${rnd(4)}/.gitattributes`]: `*.bin binary ${made++}\n` }), git(['add', '-A']))],
      [
        'stat data only (files touched, then a refresh)',
        () => {
          for (let i = 0; i < 20; i++) {
            const when = new Date(Date.now() - rnd(100000) * 1000);
            try {
              utimesSync(join(dir, some()), when, when);
            } catch {
              // removed from the work tree: nothing to touch
            }
          }
          git(['update-index', '-q', '--really-refresh']);
        },
      ],
      ['the cache tree written', () => void git(['write-tree'])],
      ['the index version changed', () => git(['update-index', '--index-version', String(2 + rnd(3))])],
      ['a path longer than the name field holds', () => git(['update-index', '--add', '--cacheinfo', `100644,${blob},${'long/'.repeat(900)}${made++}.txt`])],
      ['a commit', () => git(['commit', '-qm', `c${made++}`, '--allow-empty'])],
    ];

    let n = 0;
    function check(after: string) {
      const again = stagedEntriesOf(index);
      // A first read: the same bytes in a file the reader has never seen.
      const copy = join(dir, '.git', `first-read-${n++}`);
      copyFileSync(index, copy);
      const first = oracle.stagedEntriesOf(copy);
      expect(again, `the index read again after ${after} was not read`).toBeDefined();
      expect(again!.digest, `the digest of the index read again after ${after} differs from a first read's`).toBe(first!.digest);
      expect([...again!.attributes].sort(), `the attributes files after ${after}`).toEqual([...first!.attributes].sort());
      const conflicted = git(['ls-files', '-u']) !== '';
      if (conflicted) expect(stagedTreeOf(index), `a tree named for a conflicted index after ${after}`).toBeUndefined();
      else expect(stagedTreeOf(index), `the staged tree after ${after}`).toBe(git(['write-tree']));
    }

    check('the first commit');
    for (let i = 0; i < 120; i++) {
      const [what, step] = steps[rnd(steps.length)]!;
      step();
      check(`step ${i}: ${what}`);
    }
    // 120 writes by git itself, each read again and read afresh: the bound is for a stuck test, not a goal.
  }, 180_000);
});
