/**
 * Secrets by value: a known value is removed in every simple form a command can print it in
 * (base64 at each alignment and wrapped, URL-safe base64, hex together or apart in either
 * case, reversed, spaced out, inside JSON), and ordinary text is left alone. The values of a
 * repository are found at any depth, in ignored directories, in history and in the daemon's
 * environment.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileRedactor, envSecretValues, SecretValues } from '../../src/security/secret-values.js';

const VALUE = 'correcthorse9battery';
const r = compileRedactor([VALUE, 'short1'])!;
const b64 = (s: string) => Buffer.from(s).toString('base64');

const forms: Array<[string, string]> = [
  ['verbatim', `SMTP_PASS=${VALUE}`],
  ['base64, aligned', b64(`${VALUE}\n`)],
  ['base64, offset 1', b64(`x${VALUE}`)],
  ['base64, offset 2', b64(`xy${VALUE}`)],
  ['base64 wrapped at 8 columns', b64(`SMTP_PASS=${VALUE}`).replace(/(.{8})/g, '$1\n')],
  ['url-safe base64', Buffer.from(`??${VALUE}>>`).toString('base64url')],
  ['hex', Buffer.from(VALUE).toString('hex')],
  ['HEX with spaces', Buffer.from(VALUE).toString('hex').toUpperCase().replace(/(..)/g, '$1 ')],
  [
    'hex with colons',
    Buffer.from(VALUE)
      .toString('hex')
      .replace(/(..)(?!$)/g, '$1:'),
  ],
  ['reversed', [...VALUE].reverse().join('')],
  ['spaced', [...VALUE].join(' ')],
  ['dashed', [...VALUE].join('-')],
  ['inside JSON with escaped line breaks', JSON.stringify({ output: b64(`SMTP_PASS=${VALUE}`).replace(/(.{10})/g, '$1\n') })],
];

describe('known secret values are redacted in every simple form', () => {
  it.each(forms)('%s', (_name, text) => {
    const out = r.redact(text);
    expect(out.count).toBeGreaterThan(0);
    const joined = out.text.replace(/\\n|\s|[-:]/g, '');
    for (const form of [VALUE, [...VALUE].reverse().join(''), Buffer.from(VALUE).toString('hex')])
      expect(joined.toLowerCase()).not.toContain(form.toLowerCase());
  });

  it('leaves ordinary text alone; a short value only verbatim', () => {
    const text = 'The correct horse is a battery of tests. short one, s h o r t 1, and 73686f727431 stay.';
    expect(r.redact(text)).toEqual({ text, count: 0 });
    expect(r.redact('pw=short1;').text).toBe('pw=[REDACTED:secret-value];');
  });
});

describe('where the values come from', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'hd-values-')));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('secret files at any depth and in ignored directories, old versions in history, the environment', () => {
    const git = (...a: string[]) =>
      execFileSync('git', a, {
        cwd: dir,
        env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' },
      });
    git('init', '-q');
    writeFileSync(join(dir, '.gitignore'), 'build/\n.env\n');
    writeFileSync(join(dir, '.env.production'), 'OLD=historyvalue77x\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    git('rm', '-q', '.env.production');
    git('commit', '-qm', 'two');
    for (const [rel, text] of [
      ['a/b/c/d/e/f/.env', 'DEEP=deepvalue5Kq8Zr'],
      ['build/.env', 'BUILD=buildvalue2Hn7Tc'],
      ['node_modules/pkg/.env', 'PKG=packagevalue9Zz'],
    ]) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), text + '\n');
    }
    const values = new SecretValues({ root: dir, config: {}, env: { MY_API_TOKEN: 'envtoken8Yh3Kq', HOME: '/home/x', PWD: '/somewhere/long' } });
    const known = values.refresh();
    expect(known).toEqual(expect.arrayContaining(['deepvalue5Kq8Zr', 'buildvalue2Hn7Tc', 'historyvalue77x', 'envtoken8Yh3Kq']));
    // Installed packages are not the user's secrets.
    expect(known).not.toContain('packagevalue9Zz');
    expect(values.redact('x historyvalue77x y').text).toBe('x [REDACTED:secret-value] y');
  });

  it('history is read for every kind of secret file the guard names, and the configured ones: one list, not a second copy as git pathspecs', () => {
    const repo = join(dir, 'kinds');
    mkdirSync(repo);
    const git = (...a: string[]) =>
      execFileSync('git', a, {
        cwd: repo,
        env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 'T@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' },
      });
    git('init', '-q');
    // Each file is committed, then removed: its value is known from history alone.
    const files: Array<[string, string, string]> = [
      ['ops/.kube/config', 'token: kubetoken8Qw3Xz\n', 'kubetoken8Qw3Xz'],
      ['.aws/config', 'aws_secret_access_key = awsconfig5Tg7Hj\n', 'awsconfig5Tg7Hj'],
      ['keys/.ssh/id_ecdsa', '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIDsshkeyvalue4Rt6Yu9\n-----END EC PRIVATE KEY-----\n', 'MHcCAQEEIDsshkeyvalue4Rt6Yu9'],
      ['deploy/vault.secret', 'VAULT=configuredvalue3Ws8Lp\n', 'configuredvalue3Ws8Lp'],
      ['README.md', 'NOT=readmevalue6Bn2Vc\n', 'readmevalue6Bn2Vc'],
    ];
    for (const [rel, text] of files) {
      mkdirSync(join(repo, rel, '..'), { recursive: true });
      writeFileSync(join(repo, rel), text);
    }
    git('add', '-A');
    git('commit', '-qm', 'one');
    git('rm', '-rq', '.');
    git('commit', '-qm', 'two');
    const known = new SecretValues({ root: repo, config: { guard: { secretPaths: ['**/*.secret'] } }, env: {} }).refresh();
    for (const [rel, , value] of files.slice(0, -1)) expect(known, `${rel}: its value in history was not read`).toContain(value);
    expect(known, 'a file that is not a secret file was read as one').not.toContain('readmevalue6Bn2Vc');
  });

  it('secret environment variables by name, not paths or words', () => {
    expect(
      envSecretValues({
        OPENAI_API_KEY: 'sk-abc123def456',
        GITHUB_TOKEN: 'ghp_x1y2z3w4',
        PWD: '/a/b/c/d',
        GIT_ASKPASS: '/usr/bin/askpass',
        SHELL_PASS: 'password',
        EDITOR: 'vim-but-long',
      }),
    ).toEqual(['sk-abc123def456', 'ghp_x1y2z3w4']);
  });
});
