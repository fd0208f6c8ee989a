/**
 * Git's own features change what it SHOWS without changing what it STORES: an attribute or
 * a NUL byte makes a file "binary", a UTF-16 file with a byte-order mark looks binary too, a
 * replace ref or a graft shows another commit's tree or parents. Each of them, tried on every
 * judge of commits — the pre-commit hook, the post-commit audit, the judgement after an
 * agent's command, and the push broker — must not hide a forbidden line from the rules.
 * Real repositories, real git, a real daemon with `hermesd init` hooks for the two hooks.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { findRealGit } from '../../src/git/real-git.js';
import { gitPolicyOf } from '../../src/guard/guard-config.js';
import { brokerPush } from '../../src/guard/push-broker.js';
import { runGuarded } from '../../src/guard/terminal-guard.js';
import { checkStaged } from '../../src/rules/engine.js';
import { commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const REAL_GIT = findRealGit();
const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const CONFIG_YAML = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;
const config = configSchema().parse({ rules: [{ id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' }] });

type Git = (...args: string[]) => string;

/**
 * Ways to put a key into the next commit that git shows as something else. `plant` writes
 * the files (and whatever git setting hides them) into the work tree, unstaged; `line` is the
 * key's line in the file.
 */
const HIDDEN_IN_CONTENT: Array<{ name: string; plant(root: string, commonDir: string): void; line: number }> = [
  {
    name: '`*.txt -diff` in .gitattributes',
    plant: (root) => writeFiles(root, { '.gitattributes': '*.txt -diff\n', 'creds.txt': `key = ${KEY}\n` }),
    line: 1,
  },
  {
    name: 'one NUL byte in the file',
    plant: (root) => writeFiles(root, { 'creds.txt': Buffer.concat([Buffer.from('header\0\n'), Buffer.from(`key = ${KEY}\n`)]) }),
    line: 2,
  },
  {
    name: '`*.txt binary` in .git/info/attributes',
    plant: (root, commonDir) => {
      mkdirSync(join(commonDir, 'info'), { recursive: true });
      writeFileSync(join(commonDir, 'info', 'attributes'), '*.txt binary\n');
      writeFiles(root, { 'creds.txt': `key = ${KEY}\n` });
    },
    line: 1,
  },
  {
    name: 'a textconv driver that masks the key (`diff=masked` in .gitattributes)',
    plant: (root) => {
      execFileSync('git', ['config', 'diff.masked.textconv', 'sed s/AKIA/XXXX/'], { cwd: root });
      writeFiles(root, { '.gitattributes': '*.txt diff=masked\n', 'creds.txt': `key = ${KEY}\n` });
    },
    line: 1,
  },
  {
    name: 'UTF-16 with a byte-order mark',
    plant: (root) => writeFiles(root, { 'creds.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`note\r\nkey = ${KEY}\r\n`, 'utf16le')]) }),
    line: 2,
  },
  {
    name: 'UTF-32 (big-endian) with a byte-order mark',
    plant: (root) => {
      const text = `note\nkey = ${KEY}\n`;
      const body = Buffer.alloc(4 * (text.length + 1));
      body.writeUInt32BE(0xfeff, 0);
      for (let i = 0; i < text.length; i++) body.writeUInt32BE(text.charCodeAt(i), 4 * (i + 1));
      writeFiles(root, { 'creds.txt': body });
    },
    line: 2,
  },
];

/** A commit `C` whose tree is HEAD's plus the work tree's creds.txt, made without touching the index. */
function commitWithCreds(g: Git, root: string, message: string): string {
  const blob = g('hash-object', '-w', 'creds.txt');
  const index = join(root, '.git', 'hermesd-test-index');
  const env = { GIT_INDEX_FILE: index };
  const run = (...a: string[]) => execFileSync(REAL_GIT, a, { cwd: root, env: { ...process.env, ...testGitEnv, ...env }, encoding: 'utf8' }).trim();
  run('read-tree', 'HEAD');
  run('update-index', '--add', '--cacheinfo', `100644,${blob},creds.txt`);
  const tree = run('write-tree');
  rmSync(index, { force: true });
  return g('commit-tree', tree, '-p', 'HEAD', '-m', message);
}

/**
 * History hidden behind a replace ref or a graft, for the judges of commits already made: a
 * shell snippet run after commit `$bad` (which adds the key); `$k` is an older commit that
 * held the key (K added it, R removed it; both judged long ago).
 */
const HIDDEN_IN_HISTORY: Array<{ name: string; sh: string }> = [
  {
    name: 'git replace <bad> <the same commit without the key>',
    sh: 'git replace "$bad" "$(git ls-tree "$bad" | grep -v creds.txt | git mktree | xargs -I{} git commit-tree {} -p "$bad^" -m "looks clean")"',
  },
  {
    name: "a graft in .git/info/grafts (the bad commit's parent shown as an old commit that held the key)",
    sh: 'echo "$bad $k" > "$(git rev-parse --git-common-dir)/info/grafts"',
  },
  { name: 'git replace --graft <bad> <an old commit that held the key>', sh: 'git replace --graft "$bad" "$k"' },
];

/** Runs a HIDDEN_IN_HISTORY snippet in `root` with git's test environment. */
function hide(sh: string, root: string, env: NodeJS.ProcessEnv, bad: string, k: string): void {
  execFileSync('sh', ['-c', `mkdir -p "$(git rev-parse --git-common-dir)/info" && ${sh}`], {
    cwd: root,
    env: { ...env, bad, k },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * An index file: `entries`' header and entries, then `cacheFrom`'s extensions (its cache tree),
 * with the checksum git checks. (Both indexes stage the same paths: version 2 entries of one size.)
 */
function withCacheTreeOf(entries: Buffer, cacheFrom: Buffer): Buffer {
  const entriesEnd = (b: Buffer) => {
    let at = 12;
    for (let i = 0; i < b.readUInt32BE(8); i++) at += (62 + (b.readUInt16BE(at + 60) & 0xfff) + 8) & ~7;
    return at;
  };
  const body = Buffer.concat([entries.subarray(0, entriesEnd(entries)), cacheFrom.subarray(entriesEnd(cacheFrom), cacheFrom.length - 20)]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

const testGitEnv = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-stores-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let count = 0;

/** A plain repository with a bare remote: K adds the key, R removes it, both pushed. */
function plainRepo(): { root: string; g: Git; remote: string; k: string; r: string; env: NodeJS.ProcessEnv } {
  const root = join(base, `p${count++}`);
  const remote = `${root}.git`;
  mkdirSync(root);
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_') && !k.startsWith('HERMESD_'))),
    ...testGitEnv,
    HOME: base,
  };
  const g: Git = (...a) => execFileSync(REAL_GIT, a, { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  g('init', '-q', '-b', 'main');
  g('config', 'commit.gpgsign', 'false');
  writeFiles(root, { 'README.md': '# repo\n', 'creds.txt': `key = ${KEY}\n` });
  g('add', '-A');
  g('commit', '-qm', 'K: a key, long ago');
  const k = g('rev-parse', 'HEAD');
  rmSync(join(root, 'creds.txt'));
  g('add', '-A');
  g('commit', '-qm', 'R: the key removed');
  const r = g('rev-parse', 'HEAD');
  execFileSync(REAL_GIT, ['init', '-q', '--bare', '-b', 'main', remote], { env });
  g('remote', 'add', 'origin', remote);
  g('push', '-q', '-u', 'origin', 'main');
  return { root, g, remote, k, r, env };
}

describe('the push broker judges what it would push, not what git shows', () => {
  const push = (root: string) => brokerPush(root, config, gitPolicyOf({}), ['origin', 'main'], { gitBin: REAL_GIT });

  it.each(HIDDEN_IN_CONTENT)('$name', async ({ plant, line }) => {
    const { root, g, remote } = plainRepo();
    plant(root, join(root, '.git'));
    g('add', '-A');
    g('commit', '-qm', 'hidden key');
    const before = execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const r = await push(root);
    expect(r.exitCode, r.output).toBe(1);
    expect(r.output).toContain(`creds.txt:${line} [no-aws-keys]`);
    expect(execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim()).toBe(before);
  });

  it.each(HIDDEN_IN_HISTORY)('$name', async ({ sh }) => {
    const { root, g, remote, k, env } = plainRepo();
    writeFiles(root, { 'creds.txt': `key = ${KEY}\n` });
    g('add', '-A');
    g('commit', '-qm', 'the key again');
    hide(sh, root, env, g('rev-parse', 'HEAD'), k);
    const before = execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const r = await push(root);
    expect(r.exitCode, r.output).toBe(1);
    expect(r.output).toContain('creds.txt:1 [no-aws-keys]');
    expect(execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim()).toBe(before);
  });
});

describe('what else git reads: its environment, a sparse index, submodules', () => {
  const push = (root: string, cfg = config) => brokerPush(root, cfg, gitPolicyOf({}), ['origin', 'main'], { gitBin: REAL_GIT });

  it("GIT_REPLACE_REF_BASE in the daemon's environment (replace refs kept under another name)", async () => {
    const { root, g, remote } = plainRepo();
    writeFiles(root, { 'creds.txt': `key = ${KEY}\n` });
    g('add', '-A');
    g('commit', '-qm', 'the key again');
    const bad = g('rev-parse', 'HEAD');
    const clean = g('commit-tree', `${bad}^^{tree}`, '-p', `${bad}^`, '-m', 'looks clean');
    g('update-ref', `refs/elsewhere/${bad}`, clean);
    const saved = process.env.GIT_REPLACE_REF_BASE;
    process.env.GIT_REPLACE_REF_BASE = 'refs/elsewhere/';
    try {
      const r = await push(root);
      expect(r.exitCode, r.output).toBe(1);
      expect(r.output).toContain('creds.txt:1 [no-aws-keys]');
    } finally {
      if (saved === undefined) delete process.env.GIT_REPLACE_REF_BASE;
      else process.env.GIT_REPLACE_REF_BASE = saved;
    }
    expect(execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim()).not.toBe(bad);
  });

  it('a sparse checkout with a sparse index: the staged key is judged', async () => {
    const { root, g } = plainRepo();
    writeFiles(root, { 'app/main.txt': 'main\n', 'docs/readme.txt': 'docs\n' });
    g('add', '-A');
    g('commit', '-qm', 'layout');
    g('sparse-checkout', 'set', '--cone', 'app');
    g('config', 'index.sparse', 'true');
    writeFiles(root, { 'app/creds.txt': `key = ${KEY}\n` });
    g('add', '-A');
    expect((await checkStaged(root, config)).violations.map((v) => `${v.file}:${v.line}`)).toEqual(['app/creds.txt:1']);
  });

  it('a submodule commit change, with diff.ignoreSubmodules=all in the config', async () => {
    const { root, g } = plainRepo();
    const protect = configSchema().parse({ rules: [{ id: 'vendored', message: 'vendor/ is updated by the release script.', protect: ['vendor/**'] }] });
    const [a, b] = [g('commit-tree', 'HEAD^{tree}', '-m', 'a'), g('commit-tree', 'HEAD^{tree}', '-m', 'b')];
    g('update-index', '--add', '--cacheinfo', `160000,${a},vendor/lib`);
    g('commit', '-qm', 'vendor lib at a');
    g('config', 'diff.ignoreSubmodules', 'all');
    g('update-index', '--cacheinfo', `160000,${b},vendor/lib`);
    expect((await checkStaged(root, protect)).violations.map((v) => v.file)).toEqual(['vendor/lib']);
    // (git commit itself sees no change with that setting: --allow-empty commits the index as it is)
    g('commit', '-q', '--allow-empty', '-m', 'vendor lib at b');
    const r = await push(root, protect);
    expect(r.exitCode, r.output).toBe(1);
    expect(r.output).toContain('vendor/lib [vendored]');
  });
});

describe("the judgement after an agent's command takes back commits whatever git shows", () => {
  const guarded = (root: string, command: string) =>
    runGuarded(command, {
      root,
      gitDir: join(root, '.git'),
      commonDir: join(root, '.git'),
      config,
      realGit: REAL_GIT,
      env: { ...process.env, ...testGitEnv },
      timeoutMs: 30_000,
    });

  it.each(HIDDEN_IN_CONTENT)('$name', async ({ plant, line }) => {
    const { root, g } = plainRepo();
    const head = g('rev-parse', 'HEAD');
    plant(root, join(root, '.git'));
    const r = await guarded(root, 'git add -A && git commit -qm "hidden key"');
    expect(r.guard.notice, JSON.stringify(r)).toContain(`creds.txt:${line} [no-aws-keys]`);
    expect(g('rev-parse', 'HEAD')).toBe(head);
  });

  it.each(HIDDEN_IN_HISTORY)('$name', async ({ sh }) => {
    const { root, g, k } = plainRepo();
    const head = g('rev-parse', 'HEAD');
    writeFiles(root, { 'creds.txt': `key = ${KEY}\n` });
    const r = await guarded(root, `git add -A && git commit -qm "the key again" && bad=$(git rev-parse HEAD) k=${k} && mkdir -p .git/info && ${sh}`);
    expect(r.guard.notice, JSON.stringify(r)).toContain('creds.txt:1 [no-aws-keys]');
    expect(g('rev-parse', 'HEAD')).toBe(head);
  });
});

describe('the installed hooks judge what git stores', () => {
  let t: TestEnv;
  let repo: string;
  let baseline: string;
  let k: string;
  const g: Git = (...a) => gitIn(t, repo, ...a).trim();

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ 'README.md': '# repo\n', '.hermes/config.yaml': CONFIG_YAML, 'creds.txt': `key = ${KEY}\n` });
    k = g('rev-parse', 'HEAD');
    rmSync(join(repo, 'creds.txt'));
    g('add', '-A');
    g('commit', '-qm', 'R: the key removed', '--no-verify');
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    g('add', '-A');
    const first = commitIn(t, repo, ['-qm', 'hooks', '--allow-empty']);
    expect(first.code, first.out).toBe(0);
    baseline = g('rev-parse', 'HEAD');
  }, 120_000);
  afterAll(async () => t?.cleanup());

  function reset(): void {
    g('reset', '-q', '--hard', baseline);
    g('clean', '-qfdx', '-e', '.hermes');
    rmSync(join(repo, '.git', 'info', 'attributes'), { force: true });
    rmSync(join(repo, '.git', 'info', 'grafts'), { force: true });
    for (const ref of g('for-each-ref', '--format=%(refname)', 'refs/replace/').split('\n').filter(Boolean)) g('update-ref', '-d', ref);
  }

  it.each(HIDDEN_IN_CONTENT)('pre-commit refuses it: $name', ({ plant, line }) => {
    reset();
    plant(repo, join(repo, '.git'));
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'hidden key']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain(`creds.txt:${line}`);
    expect(c.out).toContain('no-aws-keys');
    expect(g('rev-parse', 'HEAD')).toBe(baseline);
  });

  it('pre-commit refuses it: HEAD replaced by a commit that already holds the key', () => {
    reset();
    writeFiles(repo, { 'creds.txt': `key = ${KEY}\n` });
    // The replacement is made before the file is staged, so no verdict judged ahead saw HEAD unreplaced.
    g('replace', 'HEAD', commitWithCreds(g, repo, 'looks like HEAD'));
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'hidden key']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain('creds.txt:1');
    expect(g('rev-parse', 'HEAD')).toBe(baseline);
  });

  it('pre-commit refuses a forged cache tree: git would commit the tree it names, git diff --cached shows the entries', () => {
    reset();
    writeFiles(repo, { 'creds.txt': `key = ${KEY}\n` });
    g('add', '-A');
    g('write-tree');
    const withKey = readFileSync(join(repo, '.git', 'index'));
    writeFiles(repo, { 'creds.txt': 'nothing to see\n' });
    g('add', '-A');
    // The staged entries (clean) with the cache tree of the index that staged the key, and a new checksum.
    writeFileSync(join(repo, '.git', 'index'), withCacheTreeOf(readFileSync(join(repo, '.git', 'index')), withKey));
    expect(g('diff', '--cached')).not.toContain('AKIA');
    const c = commitIn(t, repo, ['-qm', 'looks clean']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain('creds.txt:1');
    expect(c.out).toContain("which the index's cache tree names and git would commit");
    expect(g('rev-parse', 'HEAD')).toBe(baseline);
    // Committed anyway (--no-verify): the post-commit audit judges the tree git stored.
    const skipped = commitIn(t, repo, ['-qm', 'looks clean', '--no-verify']);
    expect(skipped.code, skipped.out).toBe(0);
    expect(g('show', 'HEAD:creds.txt')).toContain(KEY);
    expect(skipped.out).toContain('creds.txt:1  [no-aws-keys]');
  });

  it.each(HIDDEN_IN_CONTENT)('post-commit reports a --no-verify commit: $name', ({ plant, line }) => {
    reset();
    plant(repo, join(repo, '.git'));
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'hidden key', '--no-verify']);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('BREAKS the repository');
    expect(c.out).toContain(`creds.txt:${line}  [no-aws-keys]`);
  });

  it.each(HIDDEN_IN_HISTORY)('post-commit reports an earlier commit no hook saw: $name', ({ name, sh }) => {
    reset();
    writeFiles(repo, { 'creds.txt': `key = ${KEY}\n` });
    g('add', '-A');
    // (a message of its own: the same commit made twice within a second is the same commit, judged already)
    expect(commitIn(t, repo, ['-qm', `the key again (${name})`], { HERMESD_SKIP: '1' }).code).toBe(0);
    hide(sh, repo, t.env, g('rev-parse', 'HEAD'), k);
    writeFiles(repo, { 'notes.md': 'notes\n' });
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'on top', '--no-verify']);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('earlier new commits');
    expect(c.out).toContain('creds.txt:1 [no-aws-keys]');
  });
});
