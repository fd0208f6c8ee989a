/**
 * A Python project on the pre-commit framework (the Debian package, as .ci/run installs it):
 * hermesd does not take core.hooksPath, adds itself to .pre-commit-config.yaml as a
 * `repo: local` hook (nothing downloaded), and `pre-commit install` works before or after it.
 * Each order: a clean commit passes and is not flagged, a violation is refused, uninstall gives
 * the config back byte for byte. Real pre-commit, real git, real daemon.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';
import { hasPreCommitFramework, sh, toolEnv } from '../helpers/hook-managers.js';

const FRAMEWORK_CONFIG = `# The project's own hooks
repos:
  - repo: local
    hooks:
      - id: no-todo
        name: no TODO markers
        entry: 'TODO'
        language: pygrep
        types: [python]
`;

const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('the pre-commit framework and hermesd, installed in either order', () => {
  let t: TestEnv;
  let repo: string;

  beforeEach(() => {
    // A dependency of the suite (.ci/run installs the Debian package): fail loudly, never skip.
    expect(hasPreCommitFramework(), 'the pre-commit framework is not installed: apt-get install -y pre-commit').toBe(true);
    t = makeEnv();
    Object.assign(t.env, toolEnv(dirname(t.home)));
    repo = t.repo({ 'app.py': 'print("hi")\n', '.pre-commit-config.yaml': FRAMEWORK_CONFIG, '.hermes/config.yaml': RULES });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const preCommitInstall = () => sh('pre-commit', ['install'], repo, t.env);

  async function hermesdInit(): Promise<Record<string, unknown>> {
    const r = await t.cli(['init', '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    const report = r.json();
    expect(report).toMatchObject({ manager: 'pre-commit', hooksPath: null });
    expect(report.commit).toContain('.pre-commit-config.yaml');
    return report;
  }

  /** Uninstall before the config change is committed: every file as it was, byte for byte. */
  async function uninstallRestores(): Promise<void> {
    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(readFileSync(join(repo, '.pre-commit-config.yaml'), 'utf8')).toBe(FRAMEWORK_CONFIG);
    expect(gitIn(t, repo, 'status', '--porcelain').trim()).toBe('');
    expect(hookFiles()).toEqual(['pre-commit']);
  }

  const hookFiles = () =>
    sh('ls', [join(repo, '.git', 'hooks')], repo, t.env)
      .split('\n')
      .filter((n) => n && !n.endsWith('.sample'));

  /** The framework refuses to run with its config unstaged: the project commits hermesd's entry, as init says. */
  function commitTheEntry(): void {
    gitIn(t, repo, 'add', '.pre-commit-config.yaml');
    const c = commitIn(t, repo, ['-qm', 'chore: hermesd in pre-commit']);
    expect(c.code, c.out).toBe(0);
  }

  async function commitsAreJudged(): Promise<void> {
    // The config entry is there, after the project's own hook (the framework runs them in order).
    const config = readFileSync(join(repo, '.pre-commit-config.yaml'), 'utf8');
    expect(config.startsWith(FRAMEWORK_CONFIG)).toBe(true);
    expect(config).toContain('id: hermesd');
    const judgedBefore = logLines(/ hook pre-commit \{/);
    writeFiles(repo, { 'clean.py': 'x = 1\n' });
    gitIn(t, repo, 'add', 'clean.py');
    const ok = commitIn(t, repo, ['-m', 'clean']);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/hermesd \(repository rules and checks\)\.+Passed/);
    expect(ok.out).not.toMatch(/skipped the pre-commit hook/i);
    // hermesd judged once, through the framework's entry (not a second time as its legacy hook).
    expect(logLines(/ hook pre-commit \{/) - judgedBefore).toBe(1);

    writeFiles(repo, { 'leak.py': 'KEY = "AKIAABCDEFGHIJKLMNOP"\n' });
    gitIn(t, repo, 'add', 'leak.py');
    const refused = commitIn(t, repo, ['-m', 'leak']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('leak.py:1');
    expect(refused.out).toContain('no-aws-keys');
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('clean');
    gitIn(t, repo, 'rm', '-q', '--cached', 'leak.py');
  }

  /** Uninstall after the entry was committed: the project's config stays as committed, the clone's hooks go. */
  async function uninstallAfterCommit(): Promise<void> {
    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json().keptCommitted).toContain('.pre-commit-config.yaml');
    expect(hookFiles()).toEqual(['pre-commit']);
    // Without hermesd in this clone, the committed entry lets the commit through (it says why in the
    // framework's verbose output) and judges nothing.
    const judgedBefore = logLines(/ hook pre-commit \{/);
    writeFiles(repo, { 'later.py': 'KEY = "AKIAABCDEFGHIJKLMNOP"\n' });
    gitIn(t, repo, 'add', 'later.py');
    const c = commitIn(t, repo, ['-m', 'later']);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toMatch(/hermesd \(repository rules and checks\)\.+Passed/);
    expect(logLines(/ hook pre-commit \{/)).toBe(judgedBefore);
    expect(sh('pre-commit', ['run', 'hermesd', '--verbose', '--files', 'later.py'], repo, t.env)).toContain(
      'hermesd is not set up in this clone (run: hermesd init)',
    );
  }

  function logLines(re: RegExp): number {
    try {
      return readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')
        .split('\n')
        .filter((l) => re.test(l)).length;
    } catch {
      return 0;
    }
  }

  it('pre-commit install first, then hermesd init: hermesd runs as a hook of the framework', async () => {
    preCommitInstall();
    await hermesdInit();
    await uninstallRestores();
    await hermesdInit();
    commitTheEntry();
    await commitsAreJudged();
    await uninstallAfterCommit();
  }, 120_000);

  it('hermesd init first, then pre-commit install: it is not refused, and hermesd keeps running', async () => {
    const report = await hermesdInit();
    expect((report.notes as string[]).join(' ')).toContain('pre-commit install');
    // Before the framework is installed, hermesd's own stub judges.
    writeFiles(repo, { 'early.py': 'KEY = "AKIAABCDEFGHIJKLMNOP"\n' });
    gitIn(t, repo, 'add', 'early.py');
    expect(commitIn(t, repo, ['-m', 'early']).code).toBe(1);
    gitIn(t, repo, 'rm', '-q', '--cached', 'early.py');
    commitTheEntry();

    const out = preCommitInstall();
    expect(out).toContain('pre-commit installed');
    await commitsAreJudged();
    await uninstallAfterCommit();
  }, 120_000);

  it('the .pre-commit-hooks.yaml this package ships is valid for the framework and runs what init writes', async () => {
    const shipped = join(REPO_ROOT, '.pre-commit-hooks.yaml');
    expect(sh('pre-commit', ['validate-manifest', shipped], repo, t.env)).toBe('');
    await hermesdInit();
    // The shipped `hermesd` hook (beside it, `hermesd-commits`, the range check for CI) and init's entry run the same.
    const shippedEntry = (parse(readFileSync(shipped, 'utf8')) as Array<{ id: string; entry: string }>).find((h) => h.id === 'hermesd')!.entry;
    const config = parse(readFileSync(join(repo, '.pre-commit-config.yaml'), 'utf8')) as { repos: Array<{ hooks: Array<{ id: string; entry: string }> }> };
    expect(shippedEntry).toBe(config.repos.flatMap((r) => r.hooks).find((h) => h.id === 'hermesd')!.entry);
  }, 60_000);

  it('a repository without the framework or any manager gets no .husky/ and no pre-commit config', async () => {
    const plain = t.repo({ 'main.py': 'print(1)\n' });
    const r = await t.cli(['init', '--json'], { cwd: plain });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ manager: 'git', hooksPath: null, commit: ['.hermes/config.yaml'] });
    expect(sh('ls', ['-A', plain], plain, t.env).split('\n').filter(Boolean).sort()).toEqual(['.git', '.hermes', 'main.py']);
    // pre-commit install still works afterwards (no core.hooksPath to refuse over).
    writeFileSync(join(plain, '.pre-commit-config.yaml'), FRAMEWORK_CONFIG);
    expect(sh('pre-commit', ['install'], plain, t.env)).toContain('pre-commit installed');
  }, 60_000);
});
