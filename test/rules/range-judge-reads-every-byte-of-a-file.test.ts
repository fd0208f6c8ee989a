/**
 * The range judge reads every byte of every file a commit adds: a key after the first MiB of a
 * text file, after the first megabytes of a file git shows as binary, or at the end of one
 * line of megabytes, is found (it was a warning, or nothing, before). A file too large to read
 * within hermesd's stated bound (MAX_JUDGED_FILE_BYTES) is a finding that names the file and
 * why, never a pass; a path no content rule applies to is not read at all. `check --commits`
 * and the server's pre-receive hook. Real repositories, the real CLI, a real push.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JUDGED_FILE_BYTES } from '../../src/git/stored-diff.js';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
    exclude: ["assets/**"]
`;
const MiB = 1024 * 1024;
const FILLER = 'x'.repeat(99) + '\n';
/** Lines of filler worth `mib` MiB. */
const filler = (mib: number) => FILLER.repeat(Math.ceil((mib * MiB) / FILLER.length));

describe('the range judge reads every byte', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;

  const commit = (files: Record<string, string | Buffer>, message: string) => {
    writeFiles(repo, files);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', message);
    return gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  };
  const check = async (range: string) => {
    const r = await t.cli(['check', '--commits', range, '--json'], { cwd: repo, timeoutMs: 120_000 });
    return { ...r, out: r.code === 0 || r.code === 1 ? r.json() : undefined };
  };

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'README.md': '# project\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('a key after the first 1 MiB of added text is found at its line', async () => {
    const text = filler(1.5);
    const line = text.split('\n').length; // the filler's lines, then the key's
    commit({ 'big.txt': `${text}${KEY}\n` }, 'a big file with a key at its end');
    const r = await check(`${base}..HEAD`);
    expect(r.code, `a key past 1 MiB of a file passed:\n${r.stdout}`).toBe(1);
    expect(r.out.violations, 'the key past 1 MiB is not the finding').toMatchObject([{ rule: 'no-aws-keys', file: 'big.txt', line }]);
    expect(r.out.warnings, 'a part of the file was left unread').toEqual([]);
  });

  it('a key after the first megabytes of a file git shows as binary is found', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const data = Buffer.concat([Buffer.from('\0\0binary header\n'), Buffer.from(filler(3)), Buffer.from(`${KEY}\n`)]);
    commit({ 'data.bin': data }, 'a binary file with a key deep inside');
    const r = await check(`${start}..HEAD`);
    expect(r.code, `a key past 2 MiB of a binary file passed:\n${r.stdout}`).toBe(1);
    expect(r.out.violations.map((v: { file: string; rule: string }) => `${v.file} ${v.rule}`)).toEqual(['data.bin no-aws-keys']);
  });

  it('a key at the end of one line of megabytes is found', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commit({ 'min.js': `${'y'.repeat(3 * MiB)}${KEY}\n` }, 'a minified line with a key at its end');
    const r = await check(`${start}..HEAD`);
    expect(r.code, `a key at the end of a 3 MiB line passed:\n${r.stdout}`).toBe(1);
    expect(r.out.violations).toMatchObject([{ rule: 'no-aws-keys', file: 'min.js', line: 1 }]);
  });

  it('a file over the bound is a finding naming the file and why; a path no content rule reads is left alone', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const huge = Buffer.alloc(MAX_JUDGED_FILE_BYTES + 1024, 0x61);
    const big = commit({ 'dump.sql': huge, 'assets/video.raw': huge }, 'a file too large to read');
    const r = await check(`${start}..HEAD`);
    expect(r.code, `a file over ${MAX_JUDGED_FILE_BYTES} bytes passed unread:\n${r.stdout}`).toBe(1);
    expect(r.out.violations, 'the finding does not name the file, its rule and the bound').toMatchObject([
      { rule: 'no-aws-keys', file: 'dump.sql', commit: big, message: expect.stringMatching(`not judged: .*over the ${MAX_JUDGED_FILE_BYTES / MiB} MiB`) },
    ]);
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it('the server refuses a push with a key past the first MiB of a file', async () => {
    const server = join(repo, '..', 'server.git');
    gitIn(t, repo, 'clone', '-q', '--bare', repo, server);
    gitIn(t, server, 'update-ref', 'refs/heads/main', base);
    expect((await t.cli(['init', '--server'], { cwd: server })).code).toBe(0);
    gitIn(t, repo, 'remote', 'add', 'server', server);
    const r = spawnSync('git', ['push', 'server', 'HEAD:main'], { cwd: repo, env: t.env, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, `the server took a key past the first MiB of a file:\n${r.stderr}`).not.toBe(0);
    expect(r.stderr).toMatch(/big\.txt:\d+\s+no-aws-keys/);
  });
});
