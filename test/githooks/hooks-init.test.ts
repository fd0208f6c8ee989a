import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitIn, commitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { huskyInstall, linkNodeModules } from '../helpers/hook-managers.js';

/** git with the test's environment: a hook it triggers must talk to the test daemon, never the real HERMES_HOME. */
function hooksPath(repo: string): string | null {
  const r = spawnSync('git', ['config', '--local', '--get', 'core.hooksPath'], { cwd: repo, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

describe('hermesd init installs hooks the way the repository manages them and keeps the old ones running', () => {
  let t: TestEnv;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('works in a Go project without package.json: stubs in .git/hooks (no .husky/), chains the old hook, is idempotent, and uninstalls byte for byte', async () => {
    const repo = t.repo({ 'go.mod': 'module example.com/x\n', 'main.go': 'package main\n' });
    const marker = join(repo, 'old-hook-ran');
    const oldHook = `#!/bin/sh\necho ran >> "${marker}"\n`;
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), oldHook);
    chmodSync(join(repo, '.git', 'hooks', 'pre-commit'), 0o755);

    const first = await t.cli(['init', '--json'], { cwd: repo });
    expect(first.code, first.stderr).toBe(0);
    const report = first.json();
    expect(report).toMatchObject({
      manager: 'git',
      hooksPath: null,
      chained: ['pre-commit'],
      reinstalled: false,
      config: { written: true },
      commit: ['.hermes/config.yaml'],
    });
    expect(hooksPath(repo)).toBeNull();
    expect(existsSync(join(repo, '.husky'))).toBe(false);
    expect(existsSync(join(repo, '.hermes', 'config.yaml'))).toBe(true);
    for (const h of ['pre-commit', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite']) {
      expect(readFileSync(join(repo, '.git', 'hooks', h), 'utf8')).toContain(`hermesd_hook_name=${h}`);
    }
    const runner = readFileSync(join(repo, '.git', 'hermesd', 'hook'), 'utf8');
    expect(runner).toContain(`HERMESD_NODE='${process.execPath}'`);
    expect(runner).toContain('dist/cli/main.js');

    const snapshot = () => ['hooks/pre-commit', 'hooks/post-commit', 'hermesd/hook'].map((f) => readFileSync(join(repo, '.git', f), 'utf8')).join('\n--\n');
    const before = snapshot();
    const again = await t.cli(['init', '--json'], { cwd: repo });
    expect(again.json()).toMatchObject({ reinstalled: true, previousHooksPath: null, chained: ['pre-commit'], config: { written: false } });
    expect(snapshot()).toBe(before);

    writeFileSync(join(repo, 'main.go'), 'package main\n// change\n');
    gitIn(t, repo, 'add', 'main.go');
    const c = commitIn(t, repo, ['-qm', 'change']);
    expect(c.code, c.out).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');

    const un = await t.cli(['init', '--uninstall', '--json'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json().restoredFiles).toEqual(['.git/hooks/pre-commit']);
    expect(hooksPath(repo)).toBeNull();
    expect(readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe(oldHook);
    for (const h of ['post-commit', 'post-merge', 'post-checkout', 'post-rewrite']) expect(existsSync(join(repo, '.git', 'hooks', h))).toBe(false);
    expect(existsSync(join(repo, '.git', 'hermesd', 'hook'))).toBe(false);
    const un2 = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un2.code).toBe(0);
    expect(un2.stdout).toContain('nothing to do');
    // The old hook runs from .git/hooks again, on its own.
    writeFileSync(join(repo, 'main.go'), 'package main\n// change 2\n');
    gitIn(t, repo, 'add', 'main.go');
    expect(commitIn(t, repo, ['-qm', 'change 2']).code).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('ran\nran\n');
  });

  it('joins an existing husky setup: the project hook keeps its commands and a custom core.hooksPath is restored on uninstall', async () => {
    const repo = t.repo({ 'package.json': '{"name":"x"}\n' });
    // An existing husky 9 project: .husky/pre-commit tracked, core.hooksPath = .husky/_
    mkdirSync(join(repo, '.husky', '_'), { recursive: true });
    const husky = join(process.cwd(), 'node_modules', 'husky', 'index.js');
    const r = spawnSync(process.execPath, ['-e', `import(${JSON.stringify(husky)}).then(m => process.stdout.write(m.default('.husky')))`], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(r.stdout).toBe('');
    writeFileSync(join(repo, '.husky', 'pre-commit'), 'echo project-hook >> project-hook-ran\n');
    expect(hooksPath(repo)).toBe('.husky/_');

    const init = await t.cli(['init', '--json'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(init.json()).toMatchObject({ huskyDir: '.husky', previousHooksPath: '.husky/_', chained: [] });
    const hook = readFileSync(join(repo, '.husky', 'pre-commit'), 'utf8');
    expect(hook).toContain('echo project-hook');
    expect(hook).toContain('hermesd');
    gitIn(t, repo, 'add', 'package.json');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    gitIn(t, repo, 'add', 'a.txt');
    const c = commitIn(t, repo, ['-qm', 'a']);
    expect(c.code, c.out).toBe(0);
    expect(readFileSync(join(repo, 'project-hook-ran'), 'utf8')).toBe('project-hook\n');

    await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(readFileSync(join(repo, '.husky', 'pre-commit'), 'utf8')).toBe('echo project-hook >> project-hook-ran\n');
    expect(hooksPath(repo)).toBe('.husky/_');
    expect(existsSync(join(repo, '.husky', '_', 'h'))).toBe(true);
    expect(existsSync(join(repo, '.husky', '_', 'hermesd'))).toBe(false);

    // A repository with its own hooks directory: hermesd's directory takes its place, chains every
    // hook in it, and the setting is put back on uninstall. Nothing is written into githooks/.
    const repo2 = t.repo();
    mkdirSync(join(repo2, 'githooks'));
    writeFileSync(join(repo2, 'githooks', 'pre-push'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(repo2, 'githooks', 'pre-push'), 0o755);
    gitIn(t, repo2, 'config', 'core.hooksPath', 'githooks');
    const init2 = await t.cli(['init', '--json'], { cwd: repo2 });
    expect(init2.json()).toMatchObject({
      manager: 'git',
      previousHooksPath: 'githooks',
      chained: ['pre-push'],
      hooksPath: join(repo2, '.git', 'hermesd', 'hooks'),
    });
    expect(readFileSync(join(repo2, '.git', 'hermesd', 'hooks', 'pre-push'), 'utf8')).toContain('hermesd_hook_name=pre-push');
    expect(readdirSync(join(repo2, 'githooks'))).toEqual(['pre-push']);
    await t.cli(['init', '--uninstall'], { cwd: repo2 });
    expect(hooksPath(repo2)).toBe('githooks');
    expect(existsSync(join(repo2, '.git', 'hermesd', 'hooks'))).toBe(false);
  });

  it('one install in .git/hooks serves a linked worktree too: its commits are judged by its own daemon, and the last uninstall removes the runner', async () => {
    const repo = t.repo({ 'a.txt': 'a\n', '.hermes/config.yaml': 'rules:\n  - id: no-todo\n    message: No TODO markers.\n    forbid: "TODO"\n' });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    const linked = join(repo, '..', 'linked');
    gitIn(t, repo, 'worktree', 'add', '-q', '-b', 'side', linked);
    writeFileSync(join(linked, 'b.txt'), 'TODO later\n');
    gitIn(t, linked, 'add', 'b.txt');
    const refused = commitIn(t, linked, ['-qm', 'todo']);
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toContain('b.txt:1');
    // The linked worktree's own daemon judged it (its runtime dir is in .git/worktrees/linked/hermesd).
    const linkedStatus = await t.cli(['status', '--json'], { cwd: linked });
    const mainStatus = await t.cli(['status', '--json'], { cwd: repo });
    expect(linkedStatus.json().root).toBe(realpathSync(linked));
    expect(linkedStatus.json().pid).not.toBe(mainStatus.code === 0 ? mainStatus.json().pid : -1);

    // Installed in the linked worktree too; uninstalling there keeps the runner the main one still uses.
    expect((await t.cli(['init'], { cwd: linked })).code).toBe(0);
    expect((await t.cli(['init', '--uninstall'], { cwd: linked })).code).toBe(0);
    expect(existsSync(join(repo, '.git', 'hermesd', 'hook'))).toBe(true);
    expect(commitIn(t, linked, ['-qm', 'todo']).code).toBe(1);
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(existsSync(join(repo, '.git', 'hermesd', 'hook'))).toBe(false);
    expect(commitIn(t, linked, ['-qm', 'todo']).code).toBe(0);
    await t.cli(['stop'], { cwd: linked });
  }, 60_000);

  it('says in one sentence what it found and what it did, and what to commit as it is: no hook manager', async () => {
    const repo = t.repo({ 'go.mod': 'module example.com/x\n' });
    const first = await t.cli(['init'], { cwd: repo });
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.split('\n');
    expect(lines[0], "init's first line is not one sentence of what it found and did").toBe(
      `hermesd hooks installed in ${repo}: found no hook manager; hermesd's hooks are stubs in .git/hooks, in this clone only.`,
    );
    expect(lines, 'init does not say the hooks are this clone only and the config is to commit').toContain(
      'commit .hermes/config.yaml so teammates get its rules; the hooks live in this clone only (each clone runs hermesd init once)',
    );
    gitIn(t, repo, 'add', '.hermes/config.yaml');
    gitIn(t, repo, 'commit', '-qm', 'hermesd config');
    const again = await t.cli(['init'], { cwd: repo });
    const againLines = again.stdout.split('\n');
    expect(againLines[0], "init's first line on a refresh is not one sentence of what it found and did").toBe(
      `hermesd hooks refreshed in ${repo}: found an earlier hermesd init with no hook manager; hermesd's hooks are stubs in .git/hooks, in this clone only.`,
    );
    expect(againLines, 'a refresh does not say there is nothing to commit').toContain(
      'nothing to commit: the hooks live in this clone only (each clone runs hermesd init once)',
    );
  });

  it('in a husky 9 project, says which layout it kept, and once the hook files are committed, that teammates get them (init --agents all again)', async () => {
    const repo = t.repo({ 'package.json': '{"name":"x"}\n', '.gitignore': 'node_modules\n' });
    linkNodeModules(repo);
    huskyInstall(repo, t.env);
    writeFileSync(join(repo, '.husky', 'pre-commit'), 'echo project-hook\n');
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'husky');
    const hooks = ['pre-commit', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'].map((h) => `.husky/${h}`).join(', ');
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    const lines = init.stdout.split('\n');
    expect(lines[0], "init's first line does not say which husky layout it found and kept").toBe(
      `hermesd hooks installed in ${repo}: found husky 9's layout (core.hooksPath = .husky/_, husky's runner .husky/_/h); hermesd's block is at the top of ${hooks}; husky's runner and core.hooksPath are left as they are.`,
    );
    expect(lines, 'init does not list the husky hook files to commit').toContain(
      `commit these so teammates get the hooks (each clone then runs hermesd init once): .hermes/config.yaml, ${hooks}`,
    );
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'hermesd');
    const agents = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(agents.code, agents.stderr).toBe(0);
    expect(agents.stdout.split('\n'), 'init --agents all again does not say the committed hook files reach teammates').toContain(
      `nothing to commit: ${hooks} are committed with hermesd's part, so teammates get the hooks (each clone runs hermesd init once)`,
    );
    expect(agents.stdout, 'init says committed husky hooks live in this clone only').not.toContain('this clone only');
  });

  it('init --uninstall and stop, in either order, leave nothing of hermesd in .git but work a hook kept for the user', async () => {
    const made = async (files: Record<string, string>) => {
      const repo = t.repo(files);
      expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
      writeFileSync(join(repo, 'b.txt'), 'b\n');
      gitIn(t, repo, 'add', 'b.txt');
      const c = commitIn(t, repo, ['-qm', 'b']);
      expect(c.code, c.out).toBe(0);
      // The commit's hooks started the daemon, which keeps its log and the runners' settings there.
      expect(existsSync(join(repo, '.git', 'hermesd', 'daemon.log'))).toBe(true);
      return repo;
    };
    const runtime = (repo: string) => join(repo, '.git', 'hermesd');

    const uninstallFirst = await made({ 'a.txt': 'a\n' });
    const un = await t.cli(['init', '--uninstall'], { cwd: uninstallFirst });
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout, 'init --uninstall did not stop the daemon of this work tree').toMatch(/^stopped this work tree's daemon \(pid \d+\)$/m);
    expect(un.stdout.split('\n'), 'init --uninstall does not say .git/hermesd is removed').toContain(
      "removed .git/hermesd (hermesd's runtime folder: the daemon's log, the hooks' settings)",
    );
    expect(existsSync(runtime(uninstallFirst)), 'init --uninstall left .git/hermesd').toBe(false);
    const stop = await t.cli(['stop'], { cwd: uninstallFirst });
    expect(stop.stdout.trim()).toBe('not running');
    expect(existsSync(runtime(uninstallFirst)), 'stop after init --uninstall made .git/hermesd again').toBe(false);

    const stopFirst = await made({ 'a.txt': 'a\n' });
    expect((await t.cli(['stop'], { cwd: stopFirst })).code).toBe(0);
    expect((await t.cli(['init', '--uninstall'], { cwd: stopFirst })).code).toBe(0);
    expect(existsSync(runtime(stopFirst)), 'after stop and init --uninstall, .git/hermesd is still there').toBe(false);

    // A backup a restore kept is the user's work: it stays, and uninstall says where.
    const kept = await made({ 'a.txt': 'a\n' });
    mkdirSync(join(runtime(kept), 'kept', 'b1'), { recursive: true });
    writeFileSync(join(runtime(kept), 'kept', 'b1', 'a.txt'), 'work\n');
    const un3 = await t.cli(['init', '--uninstall'], { cwd: kept });
    expect(un3.stdout.split('\n'), 'init --uninstall does not say where the kept work is').toContain(
      'kept in .git/hermesd: kept (work a hook saved for you: hermesd hook restore)',
    );
    expect(readdirSync(runtime(kept)), 'init --uninstall removed work a hook kept, or left more than it').toEqual(['kept']);
    expect(readFileSync(join(runtime(kept), 'kept', 'b1', 'a.txt'), 'utf8')).toBe('work\n');
  }, 60_000);

  it('hooks find the hermesd that installed them without node on PATH, and HERMESD_SKIP=1 makes them do nothing', async () => {
    const repo = t.repo();
    await t.cli(['init'], { cwd: repo });
    writeFileSync(join(repo, '.hermes', 'config.yaml'), 'rules:\n  - id: no-todo\n    message: No TODO markers.\n    forbid: "TODO"\n');
    writeFileSync(join(repo, 'a.txt'), 'TODO later\n');
    gitIn(t, repo, 'add', 'a.txt');
    // No daemon running, no node and no hermesd on PATH: the baked paths start it.
    // A PATH with the shell tools git and the hook use, and no node.
    const bin = join(repo, '..', 'bin-without-node');
    mkdirSync(bin);
    for (const tool of ['git', 'sh', 'curl', 'sha256sum', 'cut', 'tr', 'cat', 'dirname', 'basename', 'id', 'env', 'sed', 'grep']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found) symlinkSync(found, join(bin, tool));
    }
    const noNode = { PATH: bin };
    expect(spawnSync(join(bin, 'sh'), ['-c', 'command -v node'], { env: noNode }).status).not.toBe(0);
    const refused = commitIn(t, repo, ['-qm', 'todo'], noNode);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('a.txt:1');
    expect(refused.out).toContain('no-todo');
    const skipped = commitIn(t, repo, ['-qm', 'todo'], { ...noNode, HERMESD_SKIP: '1' });
    expect(skipped.code, skipped.out).toBe(0);
    expect(skipped.out).not.toContain('hermesd');
  });
});
