/**
 * `stagedEntriesOf` (src/git/index-file.ts) names what an index stages, whichever file holds
 * it: two index files with other stat data and checksums but the same entries have the same
 * digest; staging anything else (content, mode, intent-to-add) changes it; a split index, which
 * holds only part of the entries, is not named at all. SHA-1 and SHA-256 repositories alike.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stagedEntriesOf } from '../../src/git/index-file.js';
import { writeFiles } from '../helpers/env.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-index-')));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: base,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@e',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@e',
};

function repo(name: string, format: 'sha1' | 'sha256') {
  const dir = join(base, name);
  mkdirSync(dir);
  const git = (args: string[], extra: NodeJS.ProcessEnv = {}) => execFileSync('git', args, { cwd: dir, env: { ...env, ...extra }, encoding: 'utf8' });
  git(['init', '-q', `--object-format=${format}`]);
  writeFiles(dir, { 'a.txt': 'a\n', 'src/b.txt': 'b\n', 'src/deep/c.txt': 'c\n', '.gitattributes': '*.bin binary\n', 'src/.gitattributes': '*.txt text\n' });
  git(['add', '-A']);
  git(['commit', '-qm', 'one']);
  return { dir, git, index: join(dir, '.git', 'index') };
}

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.each(['sha1', 'sha256'] as const)('the staged snapshot of an index file (%s)', (format) => {
  const r = repo(`r-${format}`, format);

  it('the same entries in another file, written another way, have the same digest', () => {
    const first = stagedEntriesOf(r.index)!;
    expect(first.digest).toMatch(/^2:(20|32):5:[0-9a-f]{64}$/);
    expect(first.attributes.sort()).toEqual(['.gitattributes', 'src/.gitattributes']);
    const alt = join(r.dir, '.git', 'alt-index');
    r.git(['read-tree', 'HEAD'], { GIT_INDEX_FILE: alt });
    expect(readFileSync(alt).equals(readFileSync(r.index))).toBe(false);
    expect(stagedEntriesOf(alt)!.digest).toBe(first.digest);
    // a refresh rewrites stat data only
    r.git(['update-index', '--really-refresh']);
    expect(stagedEntriesOf(r.index)!.digest).toBe(first.digest);
  });

  it('content, mode and intent-to-add each change it', () => {
    const before = stagedEntriesOf(r.index)!.digest;
    writeFiles(r.dir, { 'src/b.txt': 'b2\n' });
    r.git(['add', 'src/b.txt']);
    const content = stagedEntriesOf(r.index)!.digest;
    expect(content).not.toBe(before);
    r.git(['update-index', '--chmod=+x', 'src/b.txt']);
    const mode = stagedEntriesOf(r.index)!.digest;
    expect(mode).not.toBe(content);
    writeFiles(r.dir, { 'new.txt': 'n\n' });
    r.git(['add', '-N', 'new.txt']);
    const intent = stagedEntriesOf(r.index)!.digest;
    expect(intent).not.toBe(mode);
    r.git(['add', 'new.txt']);
    expect(stagedEntriesOf(r.index)!.digest).not.toBe(intent);
  });

  it('index version 4 is read, and a split index is not named', () => {
    r.git(['update-index', '--index-version', '4']);
    const v4 = stagedEntriesOf(r.index)!;
    expect(v4.digest).toMatch(/^4:/);
    expect(v4.attributes.sort()).toEqual(['.gitattributes', 'src/.gitattributes']);
    r.git(['update-index', '--index-version', '2']);
    expect(stagedEntriesOf(r.index)!.digest.slice(2)).toBe(v4.digest.slice(2));
    r.git(['update-index', '--split-index']);
    expect(stagedEntriesOf(r.index)).toBeUndefined();
    expect(stagedEntriesOf(join(r.dir, '.git', 'no-such-index'))).toBeUndefined();
  });
});
