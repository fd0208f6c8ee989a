/**
 * `hermesd check --commits` reads the files git shows as binary (a UTF-16 text, a file with a
 * NUL byte) from their blobs, for the whole range with one `git cat-file --batch`: each
 * finding is still the commit's that added it, with its file and line, and a commit between them
 * with nothing unshown, or a key in a file git shows as text, keeps its own verdict.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { makeEnv, writeFiles } from '../helpers/env.js';

const KEY = 'AKIA' + 'QWERTYUIOPASDFGH';
const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('check --commits over commits whose files git shows as binary', () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('attributes each finding read from a blob to the commit that added it', async () => {
    const repo = t.repo({ 'README.md': '# r\n', '.hermes/config.yaml': CONFIG });
    const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8' });
    const commit = (files: Record<string, string | Buffer>, message: string) => {
      writeFiles(repo, files);
      git('add', '-A');
      expect(git('-c', 'core.hooksPath=/dev/null', 'commit', '-qm', message).status).toBe(0);
      return git('rev-parse', 'HEAD').stdout.trim();
    };
    const base = git('rev-parse', 'HEAD').stdout.trim();
    const utf16 = commit({ 'wide.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`first\r\nkey = ${KEY}\r\n`, 'utf16le')]) }, 'utf-16');
    const plain = commit({ 'notes.md': 'nothing here\n' }, 'plain');
    const nul = commit({ 'blob.bin': Buffer.concat([Buffer.from('a\0b\n'), Buffer.from(`x\ny = ${KEY}\n`)]) }, 'nul');
    const text = commit({ 'cfg.ini': `k = ${KEY}\n` }, 'text');
    const edited = commit(
      { 'wide.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`first\r\nkey = ${KEY}\r\nagain = ${KEY}\r\n`, 'utf16le')]) },
      'utf-16 again',
    );
    const r = await t.cli(['check', '--commits', `${base}..HEAD`, '--format', 'json'], { cwd: repo });
    expect(r.code, `check --commits should refuse the range: ${r.stderr}`).toBe(1);
    const found = (r.json() as { violations: Array<{ commit: string; file: string; line: number; rule: string }> }).violations
      .map((v) => `${v.commit.slice(0, 7)} ${v.file}:${v.line} ${v.rule}`)
      .sort();
    const expected = [
      `${utf16.slice(0, 7)} wide.txt:2 no-aws-keys`,
      `${nul.slice(0, 7)} blob.bin:3 no-aws-keys`,
      `${text.slice(0, 7)} cfg.ini:1 no-aws-keys`,
      `${edited.slice(0, 7)} wide.txt:3 no-aws-keys`,
    ].sort();
    expect(found, `the findings, by commit (the plain commit ${plain.slice(0, 7)} has none)`).toEqual(expected);
  }, 60_000);
});
