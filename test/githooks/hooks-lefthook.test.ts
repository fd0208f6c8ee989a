/**
 * A repository on lefthook 2 (the npm package's binary): hermesd leaves core.hooksPath alone
 * (lefthook 2 refuses to install with it set), adds a `hermesd` command to lefthook.yml's
 * pre-commit and a re-check to prepare-commit-msg, where lefthook's chain has ended. In either
 * install order: a clean commit passes and is not flagged, a violation is refused, a lefthook
 * command with stage_fixed that writes a violation after hermesd's verdict is refused, and
 * uninstall gives lefthook.yml back byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';
import { BIN, linkNodeModules, sh, toolEnv } from '../helpers/hook-managers.js';

const LEFTHOOK = `# the project's hooks
pre-commit:
  commands:
    # a formatter that runs after hermesd (lefthook runs commands in name order) and re-stages
    zz-format:
      glob: "*.txt"
      run: sed -i 's/secret/AKIA''ABCDEFGHIJKLMNOP/' {staged_files}
      stage_fixed: true
`;

const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('lefthook and hermesd, installed in either order', () => {
  let t: TestEnv;
  let repo: string;

  beforeEach(() => {
    t = makeEnv();
    Object.assign(t.env, toolEnv(dirname(t.home)));
    repo = t.repo({ '.gitignore': 'node_modules\n', 'lefthook.yml': LEFTHOOK, '.hermes/config.yaml': RULES, 'a.txt': 'a\n' });
    linkNodeModules(repo);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const lefthookInstall = () => sh(BIN('lefthook'), ['install'], repo, t.env);

  async function hermesdInit(): Promise<void> {
    const r = await t.cli(['init', '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ manager: 'lefthook', hooksPath: null });
    expect(r.json().commit).toContain('lefthook.yml');
    const config = readFileSync(join(repo, 'lefthook.yml'), 'utf8');
    expect(config.startsWith(LEFTHOOK)).toBe(true);
    expect(config).toMatch(/prepare-commit-msg:\n {2}commands:\n {4}hermesd:/);
  }

  async function commitsAreJudged(): Promise<void> {
    writeFiles(repo, { 'b.txt': 'clean\n' });
    gitIn(t, repo, 'add', 'b.txt');
    const ok = commitIn(t, repo, ['-m', 'clean']);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).not.toMatch(/skipped the pre-commit hook/i);

    writeFiles(repo, { 'c.txt': 'key AKIAABCDEFGHIJKLMNOP\n' });
    gitIn(t, repo, 'add', 'c.txt');
    const refused = commitIn(t, repo, ['-m', 'leak']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('c.txt:1');
    expect(refused.out).toContain('no-aws-keys');
    gitIn(t, repo, 'rm', '-q', '--cached', 'c.txt');

    // zz-format runs after hermesd's verdict and re-stages a key: the re-check in prepare-commit-msg refuses it.
    writeFiles(repo, { 'd.txt': 'the secret\n' });
    gitIn(t, repo, 'add', 'd.txt');
    const late = commitIn(t, repo, ['-m', 'formatted into a leak']);
    expect(late.code, late.out).not.toBe(0);
    expect(late.out).toContain('after hermesd judged the staged files');
    expect(late.out).toContain('d.txt:1');
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('clean');
    gitIn(t, repo, 'rm', '-q', '--cached', 'd.txt');
  }

  async function uninstallGivesBack(): Promise<void> {
    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(readFileSync(join(repo, 'lefthook.yml'), 'utf8')).toBe(LEFTHOOK);
    for (const h of ['post-commit', 'post-merge', 'post-checkout', 'post-rewrite', 'pre-commit.old'])
      expect(existsSync(join(repo, '.git', 'hooks', h)), h).toBe(false);
    expect(readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8')).toContain('lefthook');
    // lefthook alone runs the next commit.
    writeFiles(repo, { 'e.txt': 'e\n' });
    gitIn(t, repo, 'add', 'e.txt');
    const c = commitIn(t, repo, ['-m', 'later']);
    expect(c.code, c.out).toBe(0);
    expect(c.out).not.toContain('hermesd');
  }

  it('lefthook install first, then hermesd init', async () => {
    lefthookInstall();
    await hermesdInit();
    expect(spawnSync('git', ['config', '--get-all', 'core.hooksPath'], { cwd: repo, env: t.env }).status).toBe(1);
    await commitsAreJudged();
    await uninstallGivesBack();
  }, 120_000);

  it('hermesd init first, then lefthook install: lefthook 2 installs (core.hooksPath is not set) and hermesd keeps running', async () => {
    await hermesdInit();
    const out = lefthookInstall();
    expect(out).toContain('sync hooks');
    expect(out).not.toContain('core.hooksPath');
    await commitsAreJudged();
    await uninstallGivesBack();
  }, 120_000);
});
