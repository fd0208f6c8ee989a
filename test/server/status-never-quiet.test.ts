/**
 * Problems show in plain output, not only in --json: hooks that git no longer runs (the hint a
 * refusing installer gives, another tool's hook in their place), a broken config, backups
 * waiting for a restore, model settings only this shell has; `logs` shows what the hooks did;
 * file checkouts at one commit are one session; a bare repository gets a message that says
 * what to do. Real daemon, real git, real CLI.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, commitIn, git, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

describe('status, doctor and logs say what is wrong', () => {
  let t: TestEnv;
  let repo: string;
  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ 'a.txt': 'a\n' });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  /** Polls plain `status` until its output matches (the daemon re-reads hook health every few seconds). */
  async function statusUntil(re: RegExp, env: NodeJS.ProcessEnv = {}): Promise<string> {
    let out = '';
    const end = Date.now() + 15_000;
    for (;;) {
      const r = await t.cli(['status'], { cwd: repo, env });
      out = r.stdout + r.stderr;
      if (re.test(out) || Date.now() > end) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(out).toMatch(re);
    return out;
  }

  it('hooks active, then turned off by another tool: status and doctor say so with the fix', async () => {
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['start'], { cwd: repo });
    const ok = await statusUntil(/hooks {4}active \(\.git\/hooks\)/);
    expect(ok).toContain('config   ok');
    expect(ok).toContain('backups  none pending');

    // What `pre-commit install -f` or a hand-written hook does: git now runs someone else's pre-commit.
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const off = await statusUntil(/hooks {4}NOT active/);
    expect(off).toContain('which does not call hermesd: run hermesd init');
    const doctor = await t.cli(['doctor', '--json'], { cwd: repo });
    const hooks = (doctor.json().checks as Array<{ name: string; status: string; detail: string }>).find((c) => c.name === 'hooks')!;
    expect(hooks.status).toBe('fail');
    expect(doctor.code).toBe(1);
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await statusUntil(/hooks {4}active/);
  }, 60_000);

  it('husky: unsetting core.hooksPath (the hint a refusing installer prints) turns the hooks off, and status says so', async () => {
    expect((await t.cli(['init', '--manager', 'husky'], { cwd: repo })).code).toBe(0);
    await t.cli(['start'], { cwd: repo });
    await statusUntil(/hooks {4}active \(husky\)/);
    gitIn(t, repo, 'config', '--unset-all', 'core.hooksPath');
    const out = await statusUntil(/hooks {4}NOT active: core\.hooksPath does not point at \.husky\/_/);
    expect(out).toContain('git config core.hooksPath .husky/_');
    const doctor = await t.cli(['doctor'], { cwd: repo });
    expect(doctor.stdout).toMatch(/fail hooks/);
    expect(doctor.stdout).toMatch(/hookspath +core\.hooksPath unset/);
  }, 60_000);

  it('a broken config, a backup waiting for a restore and model settings only this shell has are in plain status', async () => {
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['start'], { cwd: repo });
    writeFileSync(join(repo, '.hermes', 'config.yaml'), 'rules: [\n');
    // A hook process that saved the work tree and died before putting it back.
    const backup = join(REPO_ROOT, 'dist', 'src', 'githooks', 'backup.js');
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `import(${JSON.stringify(backup)}).then(m => m.saveWorkState({ root: ${JSON.stringify(repo)}, gitDir: ${JSON.stringify(join(repo, '.git'))}, reason: 'pre-commit checks' }))`,
      ],
      { env: t.env, encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = await statusUntil(/config {3}ERROR: .*config\.yaml/, { HERMESD_MODEL: 'only-in-this-shell' });
    expect(out).toMatch(/backups {2}1 left by an interrupted hook .*hermesd hook restore/);
    expect(out).toContain("model-env: HERMESD_MODEL is set in this shell (only-in-this-shell) but not in the daemon's environment");
    expect(out).toContain('Set model.name in $HERMES_HOME/config.yaml');
    const doctor = await t.cli(['doctor', '--json'], { cwd: repo, env: { HERMESD_MODEL: 'only-in-this-shell' } });
    const names = (doctor.json().checks as Array<{ name: string; status: string }>).map((c) => `${c.name}:${c.status}`);
    expect(names).toContain('model-env:warn');
  }, 60_000);

  it('logs show the hooks at work, not the watcher; file checkouts at one commit are one session', async () => {
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['start'], { cwd: repo });
    writeFiles(repo, { 'b.txt': 'b\n' });
    gitIn(t, repo, 'add', 'b.txt');
    expect(commitIn(t, repo, ['-qm', 'b']).code).toBe(0);
    for (let i = 0; i < 3; i++) {
      writeFiles(repo, { 'a.txt': `edit ${i}\n` });
      gitIn(t, repo, 'checkout', '--', 'a.txt');
    }
    const titles = async () => {
      const r = await t.cli(['sessions', 'list', '--json'], { cwd: repo });
      return (r.json().sessions as Array<{ title: string | null }>).map((s) => s.title ?? '').filter((x) => x.includes('checkout of files'));
    };
    let seen: string[] = [];
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      seen = await titles();
      if (seen.some((s) => s.includes('(3×)'))) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('(3×)');
    const logs = await t.cli(['logs'], { cwd: repo });
    expect(logs.stdout).toMatch(/hook pre-commit \{"via":"client","exitCode":0/);
    expect(logs.stdout).toMatch(/hook post-checkout /);
    expect(logs.stdout).not.toContain('"kinds":["workspace"]');
  }, 60_000);

  it('a bare repository gets a message that says where hermesd can run', async () => {
    const bare = join(repo, '..', 'bare.git');
    git(join(repo, '..'), 'init', '-q', '--bare', bare);
    const r = spawnSync(process.execPath, [CLI, 'status'], { cwd: bare, env: t.env, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is in a bare repository');
    expect(r.stderr).toContain('git clone');
    expect(r.stderr).not.toContain('git init creates one');
  });
});
