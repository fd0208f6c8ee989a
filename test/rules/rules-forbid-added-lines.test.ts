import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { MAX_JUDGED_FILE_BYTES } from '../../src/git/stored-diff.js';
import { checkStaged, checkWorktree } from '../../src/rules/engine.js';
import { git, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const config = configSchema().parse({
  rules: [{ id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' }],
});
const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';
const where = (r: { violations: Array<{ file: string; line: number; rule: string }> }) => r.violations.map((v) => `${v.file}:${v.line}:${v.rule}`);

describe('forbid rules judge added lines only, with new-file line numbers', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('reports each added line in a file with earlier unchanged content and several hunks', async () => {
    // Line 2 already holds a key in HEAD: not added, not reported.
    const repo = t.repo({ 'config/app.txt': lines(20, (i) => (i === 2 ? `old ${KEY}` : i === 9 ? `removed ${KEY}` : `line ${i}`)) });
    const now = lines(20, (i) => `line ${i}`)
      .split('\n')
      .slice(0, 20);
    now[1] = `old ${KEY}`; // unchanged
    now[4] = `changed ${KEY}`; // line 5 modified
    now.splice(12, 0, 'inserted clean', `inserted ${KEY}`); // new lines 13, 14
    now.push(`appended ${KEY}`); // last line: 23 (20 + 2 inserted + 1), line 9's key removed
    writeFiles(repo, { 'config/app.txt': now.join('\n') + '\n' });
    git(repo, 'add', '-A');
    const r = await checkStaged(repo, config);
    expect(where(r)).toEqual(['config/app.txt:5:no-aws-keys', 'config/app.txt:14:no-aws-keys', 'config/app.txt:23:no-aws-keys']);
    expect(r.violations[0]!.message).toBe('Never commit credentials.');
    expect(r.warnings).toEqual([]);
  });

  it('limits a rule to `paths` minus `exclude`', async () => {
    const scoped = configSchema().parse({
      rules: [{ id: 'no-keys-in-src', message: 'm', forbid: KEY, paths: ['src/**'], exclude: ['src/fixtures/**'] }],
    });
    const repo = t.repo();
    writeFiles(repo, { 'src/a.ts': `x\n${KEY}\n`, 'src/fixtures/f.txt': `${KEY}\n`, 'docs/k.md': `${KEY}\n`, 'src/.env': `${KEY}\n` });
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, scoped))).toEqual(['src/.env:1:no-keys-in-src', 'src/a.ts:2:no-keys-in-src']);
  });

  it('judges a file git shows as binary on the bytes it stores', async () => {
    const repo = t.repo();
    writeFiles(repo, { 'blob.bin': Buffer.concat([Buffer.from(`${KEY}\n`), Buffer.alloc(16), Buffer.from(`\n${KEY}\n`)]), 'text.txt': `${KEY}\n` });
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, config))).toEqual(['blob.bin:1:no-aws-keys', 'blob.bin:3:no-aws-keys', 'text.txt:1:no-aws-keys']);
    // A binary change adds the lines the file did not hold before.
    git(repo, 'commit', '-qm', 'binary');
    writeFiles(repo, { 'blob.bin': Buffer.concat([Buffer.from(`${KEY}\nnew ${KEY}\n`), Buffer.alloc(16), Buffer.from(`\n${KEY}\n`)]) });
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, config))).toEqual(['blob.bin:2:no-aws-keys']);
  });

  it('a pure rename of a file is no violation; a rename with an added line is judged at the new path', async () => {
    const body = lines(30, (i) => (i === 3 ? `legacy ${KEY}` : `content line ${i} of a file that is long enough to be a rename`));
    const repo = t.repo({ 'old/a.txt': body, 'old/b.txt': body.replace('legacy', 'other') });
    mkdirSync(join(repo, 'new'));
    mkdirSync(join(repo, 'new2'));
    git(repo, 'mv', 'old/a.txt', 'new/a.txt');
    git(repo, 'mv', 'old/b.txt', 'new2/b.txt');
    writeFiles(repo, { 'new2/b.txt': body.replace('legacy', 'other') + `added ${KEY}\n` });
    git(repo, 'add', '-A');
    const raw = git(repo, 'diff', '--cached', '-M', '--name-status');
    expect(raw).toMatch(/^R100\s+old\/a\.txt\s+new\/a\.txt$/m);
    expect(raw).toMatch(/^R\d+\s+old\/b\.txt\s+new2\/b\.txt$/m);
    expect(where(await checkStaged(repo, config))).toEqual(['new2/b.txt:31:no-aws-keys']);
  });

  it('a deletion adds no lines', async () => {
    const repo = t.repo({ 'secrets.txt': `${KEY}\n`, 'keep.txt': 'x\n' });
    git(repo, 'rm', '-q', 'secrets.txt');
    const r = await checkStaged(repo, config);
    expect(r.violations).toEqual([]);
    expect(r.files).toBe(1);
  });

  it('judges odd paths (spaces, quotes, non-ASCII) and CRLF lines', async () => {
    const anchored = configSchema().parse({ rules: [{ id: 'no-aws-keys', message: 'm', forbid: 'AKIA[0-9A-Z]{16}$' }] });
    const repo = t.repo();
    const odd = 'dir with space/naïve "quoted"\tname.txt';
    writeFiles(repo, { [odd]: `clean\r\n${KEY}\r\n` });
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, anchored))).toEqual([`${odd}:2:no-aws-keys`]);
  });

  it('reads a symlink target as content: git stores it as a blob, and pushes it', async () => {
    const repo = t.repo();
    symlinkSync(`target-${KEY}`, join(repo, 'link'));
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, config)), 'a key as a staged symlink target passed').toEqual(['link:1:no-aws-keys']);
    // The work tree check reads an untracked link's target the same way.
    git(repo, 'rm', '-q', '--cached', 'link');
    expect(where(await checkWorktree(repo, config)), 'a key as an untracked symlink target passed').toEqual(['link:1:no-aws-keys']);
  });

  it('decodes UTF-16 text without a byte-order mark, staged or untracked', async () => {
    const repo = t.repo();
    writeFiles(repo, { 'notes.txt': Buffer.from(`first\nsecond ${KEY}\n`, 'utf16le') });
    expect(where(await checkWorktree(repo, config)), 'an untracked UTF-16 file was not decoded').toEqual(['notes.txt:2:no-aws-keys']);
    git(repo, 'add', '-A');
    expect(where(await checkStaged(repo, config)), 'a staged UTF-16 file was not decoded').toEqual(['notes.txt:2:no-aws-keys']);
  });

  it('judges every added line of a big file (no part is left unread), and refuses a file over the bound unread', async () => {
    const repo = t.repo();
    const filler = 'x'.repeat(99) + '\n';
    const count = Math.ceil((1024 * 1024 * 1.5) / filler.length);
    writeFiles(repo, { 'big.txt': `${KEY}\n` + filler.repeat(count) + `${KEY}\n` });
    git(repo, 'add', '-A');
    const r = await checkStaged(repo, config);
    expect(where(r), 'a key past the first MiB was not found').toEqual(['big.txt:1:no-aws-keys', `big.txt:${count + 2}:no-aws-keys`]);
    expect(r.warnings).toEqual([]);

    // The same for an untracked file in the work tree check.
    git(repo, 'rm', '-q', '--cached', 'big.txt');
    const w = await checkWorktree(repo, config);
    expect(where(w), 'a key past the first MiB of an untracked file was not found').toEqual(['big.txt:1:no-aws-keys', `big.txt:${count + 2}:no-aws-keys`]);

    // Over the bound: a violation that says why, staged or untracked, never a pass.
    writeFiles(repo, { 'huge.txt': filler.repeat(Math.ceil((MAX_JUDGED_FILE_BYTES + 1024) / filler.length)) });
    const untracked = await checkWorktree(repo, config);
    expect(
      untracked.violations.filter((v) => v.file === 'huge.txt'),
      'an untracked file over the bound passed',
    ).toMatchObject([{ rule: 'no-aws-keys', line: 0, message: expect.stringContaining('not judged: huge.txt is over the') }]);
    git(repo, 'add', 'huge.txt');
    const staged = await checkStaged(repo, config);
    expect(
      staged.violations.map((v) => `${v.file}:${v.rule}`),
      'a staged file over the bound passed',
    ).toEqual(['huge.txt:no-aws-keys']);
    expect(staged.violations[0]!.message).toMatch(/not judged: huge\.txt is over the \d+ MiB of one file hermesd reads/);
  });

  it('works in a repository without commits', async () => {
    const repo = t.repo();
    execFileSync('rm', ['-rf', join(repo, '.git')]);
    git(repo, 'init', '-q', '-b', 'main');
    writeFiles(repo, { 'a.txt': `${KEY}\n`, 'b.txt': `x\n${KEY}\n` });
    git(repo, 'add', 'a.txt');
    expect(where(await checkStaged(repo, config))).toEqual(['a.txt:1:no-aws-keys']);
    expect(where(await checkWorktree(repo, config))).toEqual(['a.txt:1:no-aws-keys', 'b.txt:2:no-aws-keys']);
    unlinkSync(join(repo, 'b.txt'));
  });
});
