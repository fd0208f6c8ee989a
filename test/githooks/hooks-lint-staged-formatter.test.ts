/**
 * A TypeScript project as many are set up: husky 9, lint-staged running prettier (which
 * re-stages the files it formats) and commitlint. hermesd joins it with `hermesd init`.
 * Proves: a formatted commit is judged on what git commits and never recorded as having
 * skipped the hook (from a shell, and from hermesd's own agent under its guard); a violation
 * is refused; a formatter that adds a violation after hermesd's verdict is caught at the end
 * of the chain; a --no-verify commit after commitlint rejected an attempt gets its banner;
 * uninstall leaves the project's files as they were. Real tools, real git, real daemon.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitIn, gitIn, makeEnv, waitFor, writeFiles, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';
import { huskyInstall, linkNodeModules, toolEnv } from '../helpers/hook-managers.js';

const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
  - id: generated-files
    message: Do not edit generated files; run npm run gen.
    protect: ["src/generated/**"]
`;

const PACKAGE = {
  name: 'demo',
  private: true,
  type: 'module',
  devDependencies: { husky: '9.1.7', 'lint-staged': '16.4.0', prettier: '3.6.2' },
  'lint-staged': { '*.ts': 'prettier --write', '*.stamp': 'node stamp.cjs' },
};

/** A stand-in for a formatter that breaks a rule: it writes a key into the file it was given, then lint-staged re-stages it. */
const STAMP = `const fs = require('node:fs');\nfor (const f of process.argv.slice(2)) fs.appendFileSync(f, 'stamped AKIA' + 'ABCDEFGHIJKLMNOP\\n');\n`;

const PRETTY = 'export const answer = { value: 42, name: "x" };\n';
/** A change prettier reformats (the commit holds FORMATTED, not what was staged). */
const UGLY = 'export const  answer = {value:43,   name:"x"}\n';
const FORMATTED = 'export const answer = { value: 43, name: "x" };\n';

describe('husky + lint-staged (prettier re-stages files) + commitlint, with hermesd', () => {
  let t: TestEnv;
  let repo: string;
  let env: NodeJS.ProcessEnv;
  let model: FakeModel | undefined;
  const husky = { pre: 'lint-staged\n', msg: 'commitlint --edit "$1"\n' };

  beforeEach(async () => {
    t = makeEnv();
    env = toolEnv(dirname(t.home));
    Object.assign(t.env, env);
    repo = t.repo({
      'package.json': JSON.stringify(PACKAGE, null, 2) + '\n',
      '.gitignore': 'node_modules\n',
      'commitlint.config.mjs': "export default { extends: ['@commitlint/config-conventional'] };\n",
      'stamp.cjs': STAMP,
      'src/generated/api.ts': 'export const v = 1;\n',
      'src/app.ts': PRETTY,
    });
    linkNodeModules(repo);
    huskyInstall(repo, t.env);
    writeFiles(repo, { '.husky/pre-commit': husky.pre, '.husky/commit-msg': husky.msg });
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'chore: husky, lint-staged and commitlint');
  });
  afterEach(async () => {
    await t.cleanup();
    await model?.close();
    model = undefined;
  });

  async function init(): Promise<void> {
    const r = await t.cli(['init', '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ manager: 'husky', huskyDir: '.husky', hooksPath: '.husky/_' });
    // The project's hook files carry hermesd's block: commit them so teammates get it.
    expect(r.json().commit).toEqual(expect.arrayContaining(['.hermes/config.yaml', '.husky/pre-commit']));
    writeFileSync(join(repo, '.hermes', 'config.yaml'), RULES);
    gitIn(t, repo, 'add', '-A');
    const c = commitIn(t, repo, ['-qm', 'chore: hermesd']);
    expect(c.code, c.out).toBe(0);
  }

  async function skippedRecords(): Promise<number> {
    const r = await t.cli(['sessions', 'search', 'skipped pre-commit hook', '--json'], { cwd: repo });
    return r.code === 0 ? (r.json().results as unknown[]).length : 0;
  }

  it('a commit prettier reformats is judged on what git commits and never recorded as skipped; a violation is refused', async () => {
    await init();
    writeFiles(repo, { 'src/app.ts': UGLY });
    gitIn(t, repo, 'add', 'src/app.ts');
    const postCommits = logCount(repo, /hook post-commit /);
    const ok = commitIn(t, repo, ['-m', 'feat: format the answer']);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).not.toMatch(/skipped the pre-commit hook/i);
    // lint-staged's prettier re-staged the file: the commit holds the formatted version.
    expect(gitIn(t, repo, 'show', 'HEAD:src/app.ts')).toBe(FORMATTED);
    // The post-commit of a judged commit records no skipped hook (it runs in the background: wait for it).
    await waitFor(() => logCount(repo, /hook post-commit /) > postCommits);
    expect(await skippedRecords()).toBe(0);

    writeFiles(repo, { 'src/keys.ts': 'export const key = "AKIAABCDEFGHIJKLMNOP";\n' });
    gitIn(t, repo, 'add', 'src/keys.ts');
    const refused = commitIn(t, repo, ['-m', 'feat: add a key']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('src/keys.ts:1');
    expect(refused.out).toContain('no-aws-keys');
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('feat: format the answer');
  }, 120_000);

  it('a formatter that adds a violation after hermesd judged the staged files is refused at the end of the chain', async () => {
    await init();
    writeFiles(repo, { 'notes.stamp': 'release notes\n' });
    gitIn(t, repo, 'add', 'notes.stamp');
    const c = commitIn(t, repo, ['-m', 'docs: release notes']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain('after hermesd judged the staged files');
    expect(c.out).toContain('notes.stamp:2');
    expect(c.out).toContain('no-aws-keys');
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('chore: hermesd');
  }, 120_000);

  it('after commitlint rejects an attempt, the next --no-verify commit is reported as having skipped the hook', async () => {
    await init();
    writeFiles(repo, { 'src/more.ts': 'export const more = 1;\n' });
    gitIn(t, repo, 'add', 'src/more.ts');
    const rejected = commitIn(t, repo, ['-m', 'Bad message without a type']);
    expect(rejected.code).not.toBe(0);
    expect(rejected.out).toContain('subject may not be empty');
    for (let i = 0; i < 3; i++) {
      const sneaky = commitIn(t, repo, ['--no-verify', '-m', `Bad message ${i}`]);
      expect(sneaky.code, sneaky.out).toBe(0);
      expect(sneaky.out).toContain('skipped the pre-commit hook');
      gitIn(t, repo, 'reset', '-q', '--soft', 'HEAD~1');
      // the same tree again, with commitlint rejecting first each time
      expect(commitIn(t, repo, ['-m', `Bad again ${i}`]).code).not.toBe(0);
    }
  }, 120_000);

  it("hermesd's own agent commits through the formatter chain and its guard does not undo the commit", async () => {
    model = await startFakeModel([]);
    t.env.OPENAI_BASE_URL = model.url;
    await init();
    writeFiles(repo, { 'src/agent.ts': 'export const  fromAgent = {ok:true}\n' });
    model.push(
      { tool_calls: [{ name: 'terminal', arguments: { command: 'git add src/agent.ts && git commit -qm "feat: agent change" && git log -1 --format=%s' } }] },
      { content: 'Committed.' },
    );
    const head = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const r = await t.cli(['run', 'commit the agent change', '--json'], { cwd: repo, timeoutMs: 120_000 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const result = JSON.parse(String(model.requests.at(-1)!.messages.at(-1)!.content));
    expect(result.guard, JSON.stringify(result)).toBeUndefined();
    expect(result.output).toContain('feat: agent change');
    expect(gitIn(t, repo, 'rev-parse', 'HEAD^').trim()).toBe(head);
    expect(gitIn(t, repo, 'show', 'HEAD:src/agent.ts')).toBe('export const fromAgent = { ok: true };\n');
  }, 180_000);

  it('uninstall leaves the project hook files as the repository has them and restores the rest', async () => {
    const r = await t.cli(['init'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(repo, '.husky', 'pre-commit'), 'utf8')).toContain('hermesd');
    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(readFileSync(join(repo, '.husky', 'pre-commit'), 'utf8')).toBe(husky.pre);
    expect(readFileSync(join(repo, '.husky', 'commit-msg'), 'utf8')).toBe(husky.msg);
    expect(gitIn(t, repo, 'config', '--get', 'core.hooksPath').trim()).toBe('.husky/_');
    // Nothing tracked is left changed, nothing of hermesd's left behind but its config file.
    expect(gitIn(t, repo, 'status', '--porcelain').trim()).toBe('?? .hermes/');
    // The project's hooks run as before.
    writeFiles(repo, { 'src/app.ts': UGLY });
    gitIn(t, repo, 'add', 'src/app.ts');
    expect(commitIn(t, repo, ['-m', 'feat: after hermesd']).code).toBe(0);
    expect(gitIn(t, repo, 'show', 'HEAD:src/app.ts')).toBe(FORMATTED);
  }, 120_000);

  it('committed hermesd blocks (a teammate clone) are left as committed on uninstall: no empty hooks, no stubs', async () => {
    await init();
    expect(gitIn(t, repo, 'show', 'HEAD:.husky/pre-commit')).toContain('hermesd');
    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json().keptCommitted).toEqual(expect.arrayContaining(['.husky/pre-commit']));
    expect(gitIn(t, repo, 'status', '--porcelain').trim()).toBe('');
    // Without hermesd the committed block is a no-op: the project's own commands still run.
    writeFiles(repo, { 'src/app.ts': UGLY });
    gitIn(t, repo, 'add', 'src/app.ts');
    const c = commitIn(t, repo, ['-m', 'feat: without hermesd']);
    expect(c.code, c.out).toBe(0);
    expect(gitIn(t, repo, 'show', 'HEAD:src/app.ts')).toBe(FORMATTED);
  }, 120_000);
});

/** Lines of the daemon log matching `re` (the hooks log one line each). */
function logCount(repo: string, re: RegExp): number {
  try {
    return readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => re.test(l)).length;
  } catch {
    return 0;
  }
}
