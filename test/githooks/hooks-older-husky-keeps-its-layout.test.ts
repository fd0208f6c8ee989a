/**
 * husky 4 and husky 7 projects, set up from npm as their own `npm install` leaves them, with
 * lint-staged running prettier. `hermesd init` keeps the layout each has (never runs husky 9's
 * installer over it): hermesd's pre-commit refuses a key, lint-staged still formats what is
 * committed, HUSKY=0 does what it did before (husky 7: skips the project's hooks, and hermesd's
 * check with them, but the commit is re-checked at once and a key in it reported loudly; husky 4
 * knows no HUSKY=0), and `init --uninstall` gives back every file under .husky/ and .git/hooks,
 * package.json and core.hooksPath byte for byte, with nothing of hermesd left in .git.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';
import { hookFilesSnapshot, oldHuskyProject, toolEnv } from '../helpers/hook-managers.js';
import { INSTALL_TIMEOUT_MS } from '../helpers/npm-cache.js';

/** What prettier reformats, and what it makes of it (prettier 2 and 3 alike); `n` makes each commit a change. */
const ugly = (n: number) => `export  const x={b:${n}}\n`;
const formatted = (n: number) => `export const x = { b: ${n} };\n`;
/** README's example key, refused by init's no-secrets rule. */
const KEY = 'key = "AKIA' + 'ABCDEFGHIJKLMNOP"\n';
const HOOKS = ['pre-commit', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'];

describe('hermesd init keeps an older husky layout and gives it back', () => {
  let t: TestEnv;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    t = makeEnv();
    // The CLI and git run with t.env: the tools' config and caches go to the test's folder, no husky switch of the developer's.
    Object.assign(t.env, toolEnv(dirname(t.home)));
    delete t.env.HUSKY;
    delete t.env.HUSKY_SKIP_HOOKS;
    env = t.env;
  });
  afterEach(async () => {
    await t.cleanup();
  });

  /** Commits `text` as `file` with `extra` in git's environment: the result, and what HEAD holds of the file (undefined: refused). */
  function commitFile(repo: string, file: string, text: string, extra: NodeJS.ProcessEnv = {}) {
    writeFiles(repo, { [file]: text });
    gitIn(t, repo, 'add', file);
    const c = commitIn(t, repo, ['-m', `change ${file}`], extra);
    return { ...c, committed: c.code === 0 ? gitIn(t, repo, 'show', `HEAD:${file}`) : undefined };
  }

  /** Takes the last commit back, files and all. */
  const undo = (repo: string) => gitIn(t, repo, 'reset', '-q', '--hard', 'HEAD~1');

  /** The daemon's log lines for `hook pre-commit` itself (not its final re-check). */
  const preCommitAsks = (repo: string) =>
    (existsSync(join(repo, '.git', 'hermesd', 'daemon.log')) ? readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8') : '')
      .split('\n')
      .filter((l) => /\bhook pre-commit \{/.test(l)).length;

  /** Uninstall, then stop: the hook files as they were, nothing of hermesd in .git. */
  async function uninstallGivesBack(repo: string, before: Record<string, string>): Promise<void> {
    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, `init --uninstall failed: ${un.stderr}`).toBe(0);
    expect(hookFilesSnapshot(repo), 'init --uninstall did not give back .husky/, .git/hooks, package.json and core.hooksPath byte for byte').toEqual(before);
    const stop = await t.cli(['stop'], { cwd: repo });
    expect(stop.code, stop.stderr).toBe(0);
    expect(existsSync(join(repo, '.git', 'hermesd')), 'after init --uninstall and stop, .git/hermesd is still there').toBe(false);
  }

  it(
    'husky 7: core.hooksPath and husky.sh stay, lint-staged formats, a key is refused, HUSKY=0 skips as before and is reported, uninstall is byte for byte',
    async () => {
      const repo = await oldHuskyProject(t, 7, env);
      const before = hookFilesSnapshot(repo);
      expect(before['core.hooksPath']).toBe('.husky');

      // Before hermesd: HUSKY=0 skips lint-staged.
      const off0 = commitFile(repo, 'src/app.js', ugly(4), { HUSKY: '0' });
      expect(off0.code, off0.out).toBe(0);
      expect(off0.committed, 'HUSKY=0 did not skip husky 7 before hermesd').toBe(ugly(4));
      undo(repo);

      const init = await t.cli(['init'], { cwd: repo });
      expect(init.code, `init failed: ${init.stderr}`).toBe(0);
      expect(init.stdout.split('\n')[0], "init's first line does not say it found husky 7's layout and kept it").toBe(
        `hermesd hooks installed in ${repo}: found husky 7.0.4's layout (core.hooksPath = .husky; its hook files source .husky/_/husky.sh); ` +
          `hermesd's block is at the top of ${HOOKS.map((h) => `.husky/${h}`).join(', ')}; core.hooksPath and husky's own files are left as they are (husky is not upgraded).`,
      );
      const now = hookFilesSnapshot(repo);
      expect(now['core.hooksPath'], 'init moved core.hooksPath').toBe('.husky');
      expect(now['.husky/_/husky.sh'], "init replaced husky 7's husky.sh").toBe(before['.husky/_/husky.sh']);
      expect(
        Object.keys(now).filter((f) => f.startsWith('.husky/_/')),
        "init ran another husky's installer",
      ).toEqual(['.husky/_/.gitignore', '.husky/_/hermesd', '.husky/_/husky.sh']);
      expect(now['.husky/commit-msg'], 'init touched a hook hermesd has no part in').toBe(before['.husky/commit-msg']);

      // A formatted commit: lint-staged runs once hermesd has judged, hermesd judges once, no husky 9 notice.
      const asks = preCommitAsks(repo);
      const good = commitFile(repo, 'src/app.js', ugly(5));
      expect(good.code, `a clean commit was refused:\n${good.out}`).toBe(0);
      expect(good.out, "husky's deprecation notice: init upgraded husky").not.toContain('DEPRECATED');
      expect(good.committed, 'lint-staged did not format the staged file').toBe(formatted(5));
      expect(preCommitAsks(repo) - asks, "hermesd's pre-commit did not run exactly once (husky.sh runs the hook file twice)").toBe(1);
      const status = await t.cli(['status'], { cwd: repo });
      expect(status.stdout, 'status does not see the hooks in the husky 7 layout as active').toMatch(/^hooks +active \(husky\)$/m);

      const key = commitFile(repo, 'creds.txt', KEY);
      expect(key.code, `a key was committed:\n${key.out}`).toBe(1);
      expect(key.out).toContain('creds.txt:1');
      expect(key.out).toContain('no-secrets');
      gitIn(t, repo, 'rm', '-q', '--cached', 'creds.txt');

      // HUSKY=0: lint-staged skipped as before, and hermesd's check with it; not silently: the commit is re-checked and the key named.
      const off = commitFile(repo, 'src/app.js', ugly(6), { HUSKY: '0' });
      expect(off.code, off.out).toBe(0);
      expect(off.committed, 'HUSKY=0 no longer skips the husky hooks').toBe(ugly(6));
      undo(repo);
      const offKey = commitFile(repo, 'creds.txt', KEY, { HUSKY: '0' });
      expect(offKey.code, offKey.out).toBe(0);
      expect(offKey.out, 'a key committed with HUSKY=0 went unreported').toContain('SKIPPED the pre-commit hook');
      expect(offKey.out).toContain('creds.txt:1  [no-secrets]');
      undo(repo);

      await uninstallGivesBack(repo, before);
      // husky 7 as it was: HUSKY=0 skips, lint-staged formats, no notice.
      const offAfter = commitFile(repo, 'src/app.js', ugly(7), { HUSKY: '0' });
      expect(offAfter.committed, 'after uninstall, HUSKY=0 no longer skips the husky hooks').toBe(ugly(7));
      undo(repo);
      const after = commitFile(repo, 'src/app.js', ugly(8));
      expect(after.out).not.toContain('DEPRECATED');
      expect(after.committed, 'after uninstall, lint-staged no longer runs').toBe(formatted(8));
    },
    INSTALL_TIMEOUT_MS + 120_000,
  );

  it(
    "husky 4: its scripts in .git/hooks keep running after hermesd's, a key is refused with or without HUSKY=0, uninstall is byte for byte",
    async () => {
      const repo = await oldHuskyProject(t, 4, env);
      const before = hookFilesSnapshot(repo);
      expect(before['core.hooksPath']).toBe('(unset)');
      expect(before['.git/hooks/pre-commit']).toContain('# husky');

      // Before hermesd: husky 4 knows no HUSKY=0 (lint-staged formats); HUSKY_SKIP_HOOKS=1 is its switch.
      const off0 = commitFile(repo, 'src/app.js', ugly(4), { HUSKY: '0' });
      expect(off0.committed, 'husky 4 did not run lint-staged before hermesd').toBe(formatted(4));
      undo(repo);
      const skip0 = commitFile(repo, 'src/app.js', ugly(5), { HUSKY_SKIP_HOOKS: '1' });
      expect(skip0.committed, "HUSKY_SKIP_HOOKS=1 did not skip husky 4's hooks before hermesd").toBe(ugly(5));
      undo(repo);

      const init = await t.cli(['init'], { cwd: repo });
      expect(init.code, `init failed: ${init.stderr}`).toBe(0);
      expect(init.stdout.split('\n')[0], "init's first line does not say it found husky 4's layout and kept it").toBe(
        `hermesd hooks installed in ${repo}: found husky 4.3.8's layout (husky's scripts in .git/hooks, configured in package.json "husky": {"hooks": …}); ` +
          `core.hooksPath now points at hermesd's hooks directory .git/hermesd/hooks, which runs husky's scripts in .git/hooks after hermesd's part; husky's files are left as they are.`,
      );
      const now = hookFilesSnapshot(repo);
      expect(existsSync(join(repo, '.husky')), 'init set up husky 9 in a husky 4 project').toBe(false);
      for (const f of Object.keys(before).filter((f) => f.startsWith('.git/hooks/'))) expect(now[f], `init changed ${f}`).toBe(before[f]);

      const good = commitFile(repo, 'src/app.js', ugly(6));
      expect(good.code, `a clean commit was refused:\n${good.out}`).toBe(0);
      expect(good.committed, "husky 4's lint-staged no longer runs").toBe(formatted(6));
      const status = await t.cli(['status'], { cwd: repo });
      expect(status.stdout, 'status does not see the hooks in the husky 4 layout as active').toMatch(/^hooks +active \(husky\)$/m);
      for (const extra of [{}, { HUSKY: '0' }]) {
        const key = commitFile(repo, 'creds.txt', KEY, extra);
        expect(key.code, `a key was committed (${JSON.stringify(extra)}):\n${key.out}`).toBe(1);
        expect(key.out).toContain('creds.txt:1');
        expect(key.out).toContain('no-secrets');
        gitIn(t, repo, 'rm', '-q', '--cached', 'creds.txt');
      }
      const off = commitFile(repo, 'src/app.js', ugly(7), { HUSKY: '0' });
      expect(off.committed, 'HUSKY=0 now skips husky 4, which it did not').toBe(formatted(7));
      undo(repo);

      await uninstallGivesBack(repo, before);
      const offAfter = commitFile(repo, 'src/app.js', ugly(8), { HUSKY: '0' });
      expect(offAfter.committed, "after uninstall, husky 4's lint-staged no longer runs").toBe(formatted(8));
    },
    INSTALL_TIMEOUT_MS + 120_000,
  );

  it('a husky 5–8 project whose hooks this clone has not installed yet: init changes nothing and says to run husky install first', async () => {
    const hook = '#!/bin/sh\n. "$(dirname "$0")/_/husky.sh"\n\nnpx lint-staged\n';
    const repo = t.repo({ 'package.json': '{"devDependencies":{"husky":"^7.0.4"}}\n', '.husky/pre-commit': hook });
    const before = hookFilesSnapshot(repo);
    const r = await t.cli(['init'], { cwd: repo });
    expect(r.code, `init did not refuse a husky 5–8 layout husky has not installed:\n${r.stdout}`).toBe(2);
    expect(r.stderr.trim(), 'the refusal does not say what to run first').toBe(
      `hermesd: this repository uses husky ^7.0.4's layout (.husky/pre-commit sources .husky/_/husky.sh), not installed in this clone (core.hooksPath is unset). ` +
        `Run husky's own install first (npm install runs it through the "prepare" script, or: npx husky install), then hermesd init again; hermesd never installs or upgrades husky.`,
    );
    expect(hookFilesSnapshot(repo), 'init changed hook files though it refused').toEqual(before);
    expect(existsSync(join(repo, '.hermes')), 'init wrote its config though it refused').toBe(false);
  });
});
