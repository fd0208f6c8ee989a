/**
 * What git stores as a blob is judged as content whatever it looks like: a symlink's target (a
 * blob of mode 120000), and UTF-16 (LE, BE) or UTF-32 text written without a byte-order mark,
 * whose every ASCII letter comes with NUL bytes (git shows it as binary). `check --commits` and
 * the server's pre-receive hook find the key in each, at its line. Real repositories, the real
 * CLI, a real push. (Keys are built at run time.)
 */
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;
const TEXT = `first line\nsecond line, café\naws = ${KEY}\n`;

function utf32(text: string, little: boolean): Buffer {
  const points = [...text].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((p, i) => (little ? out.writeUInt32LE(p, i * 4) : out.writeUInt32BE(p, i * 4)));
  return out;
}

/** The same three lines in each wide encoding, without a byte-order mark. */
const WIDE: Record<string, Buffer> = {
  'utf16le.txt': Buffer.from(TEXT, 'utf16le'),
  'utf16be.txt': Buffer.from(TEXT, 'utf16le').swap16(),
  'utf32le.txt': utf32(TEXT, true),
  'utf32be.txt': utf32(TEXT, false),
};

describe('symlink targets and text without a byte-order mark', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;
  let linked: string;
  let wide: string;

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'README.md': '# project\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    symlinkSync(`../keys/${KEY}`, join(repo, 'current-key'));
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'a link whose target is a key');
    linked = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, WIDE);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'wide text without a BOM');
    wide = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("check --commits finds a key in a symlink's target", async () => {
    const r = await t.cli(['check', '--commits', `${base}..${linked}`, '--json'], { cwd: repo });
    expect(r.code, `a symlink whose target is a key passed:\n${r.stdout}`).toBe(1);
    expect(r.json().violations).toEqual([{ rule: 'no-aws-keys', file: 'current-key', line: 1, message: 'Never commit credentials.', commit: linked }]);
  });

  it('check --commits finds a key in UTF-16 and UTF-32 text (LE and BE) without a byte-order mark, at its line', async () => {
    const r = await t.cli(['check', '--commits', `${linked}..${wide}`, '--json'], { cwd: repo });
    expect(r.code, `wide text with a key passed:\n${r.stdout}`).toBe(1);
    const found = r.json().violations.map((v: { file: string; line: number }) => `${v.file}:${v.line}`);
    expect(found, 'a wide encoding was not decoded').toEqual(
      Object.keys(WIDE)
        .sort()
        .map((f) => `${f}:3`),
    );
  });

  it('the server refuses both', async () => {
    const server = join(repo, '..', 'server.git');
    gitIn(t, repo, 'init', '-q', '--bare', server);
    gitIn(t, repo, 'push', '-q', server, `${base}:refs/heads/main`);
    expect((await t.cli(['init', '--server'], { cwd: server })).code).toBe(0);
    const push = (rev: string) => spawnSync('git', ['push', server, `${rev}:refs/heads/main`], { cwd: repo, env: t.env, encoding: 'utf8', timeout: 60_000 });
    const link = push(linked);
    expect(link.status, `the server took a symlink whose target is a key:\n${link.stderr}`).not.toBe(0);
    expect(link.stderr).toMatch(/current-key:1\s+no-aws-keys/);
    // The link's commit reaches the server another way (a fetch runs no hook): then only the wide files are new.
    gitIn(t, repo, 'branch', '-f', 'linked', linked);
    gitIn(t, server, 'fetch', '-q', repo, 'linked:refs/heads/side');
    const text = push(wide);
    expect(text.status, `the server took wide text with a key:\n${text.stderr}`).not.toBe(0);
    for (const f of Object.keys(WIDE)) expect(text.stderr, `${f} was not decoded`).toMatch(new RegExp(`${f.replace('.', '\\.')}:3\\s+no-aws-keys`));
  });
});
