/**
 * Whether git runs hermesd's hooks (status, doctor) depends on where git runs hooks from:
 * core.hooksPath, at any level of git's configuration. The daemon reads it for the status
 * answers it builds, and a `git rev-parse` held its loop meanwhile. Now git is asked again only
 * when one of its config files, or a file one of them includes, changed (a stat each), or
 * every time where an include turns on what no stat shows (the branch checked out). The git processes are counted
 * by a `git` on PATH that records each start and runs the real one.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync, appendFileSync, existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hookHealth } from '../../src/githooks/health.js';
import { findRepo } from '../../src/paths/index.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

let t: TestEnv;
let repo: string;
let log: string;
const saved = process.env;

/** Waits past the racy window (a config file changed this recently is asked of git: src/git/config-files.ts). */
function settle(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40);
}

/** git processes started since the last call. */
function started(): number {
  if (!existsSync(log)) return 0;
  const n = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
  writeFileSync(log, '');
  return n;
}

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({ 'a.txt': 'a\n' });
  expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
  const bin = join(t.home, 'counting-bin');
  mkdirSync(bin);
  log = join(t.home, 'git-starts.log');
  const real = gitIn(t, repo, '--exec-path').trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}/git' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  // hookHealth runs git in this process's environment: the test's, with the counting git first on
  // PATH and a home of its own (its ~/.gitconfig and XDG config are the test's to write).
  process.env = { ...t.env, PATH: `${bin}:${t.env.PATH}`, HOME: t.home };
  delete process.env.XDG_CONFIG_HOME;
});

afterAll(async () => {
  process.env = saved;
  await t.cleanup();
});

describe("hooks' health: git asked again only when its configuration changed", () => {
  it('asks once, then not while nothing changed; again after core.hooksPath moved, and says what moved', () => {
    const paths = findRepo(repo);
    started();
    const first = hookHealth(paths);
    expect(first.active, JSON.stringify(first)).toBe(true);
    expect(started(), 'the first look asks git where hooks run').toBe(1);
    for (let i = 0; i < 5; i++) expect(hookHealth(paths)).toEqual(first);
    expect(started(), 'five more looks with no config file changed started git').toBe(0);

    gitIn(t, repo, 'config', 'core.hooksPath', 'elsewhere');
    const moved = hookHealth(paths);
    expect(started(), 'the look after the repository config changed did not ask git').toBe(1);
    expect(moved.hooksDir).toBe(join(paths.root, 'elsewhere'));
    expect(moved.active, 'hooks reported active where git no longer runs them').toBe(false);

    gitIn(t, repo, 'config', '--unset', 'core.hooksPath');
    expect(hookHealth(paths)).toEqual(first);
    expect(started()).toBe(1);
  });

  it('asks again after the user-level config changed (HOME/.gitconfig, XDG)', () => {
    const paths = findRepo(repo);
    hookHealth(paths);
    started();
    writeFileSync(join(t.home, '.gitconfig'), '[core]\n\thooksPath = /nowhere/hooks\n');
    expect(hookHealth(paths).hooksDir).toBe('/nowhere/hooks');
    expect(started(), 'a changed ~/.gitconfig was not asked about').toBe(1);
    writeFileSync(join(t.home, '.gitconfig'), '');
    mkdirSync(join(t.home, '.config', 'git'), { recursive: true });
    writeFileSync(join(t.home, '.config', 'git', 'config'), '[core]\n\thooksPath = /xdg/hooks\n');
    expect(hookHealth(paths).hooksDir).toBe('/xdg/hooks');
    expect(started(), 'a new XDG config was not asked about').toBe(1);
    writeFileSync(join(t.home, '.config', 'git', 'config'), '');
    expect(hookHealth(paths).active).toBe(true);
  });

  it('asks every time while a config file is too fresh for its stamp to tell a second write (here: dated ahead of the clock)', () => {
    const paths = findRepo(repo);
    const file = join(t.home, '.gitconfig');
    writeFileSync(file, '');
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(file, ahead, ahead);
    hookHealth(paths);
    started();
    hookHealth(paths);
    hookHealth(paths);
    expect(started(), 'looks while ~/.gitconfig was within the racy window did not ask git each time').toBe(2);
    const now = new Date();
    utimesSync(file, now, new Date(now.getTime() - 60_000));
  });

  it('with an include, asks again when the included file changed, and not while nothing did', () => {
    const paths = findRepo(repo);
    const extra = join(t.home, 'extra.gitconfig');
    writeFileSync(extra, '');
    appendFileSync(join(paths.commonDir, 'config'), `[include]\n\tpath = ${extra}\n`);
    settle();
    hookHealth(paths);
    started();
    hookHealth(paths);
    hookHealth(paths);
    expect(started(), 'looks with an include and nothing changed asked git again').toBe(0);
    writeFileSync(extra, '[core]\n\thooksPath = /included/hooks\n');
    expect(hookHealth(paths).hooksDir, 'the included file moved core.hooksPath and the look did not see it').toBe('/included/hooks');
    settle();
    hookHealth(paths);
    started();
    hookHealth(paths);
    expect(started(), 'a look after the included file settled asked git again').toBe(0);
    writeFileSync(extra, '[core]\n\thooksPath = /included/again\n');
    settle();
    expect(hookHealth(paths).hooksDir, 'the included file changed again, past the racy window, and the look did not see it').toBe('/included/again');
  });

  it('asks every time where an include turns on what no stamp covers (a condition on the branch checked out)', () => {
    const paths = findRepo(repo);
    const branch = gitIn(t, repo, 'branch', '--show-current').trim();
    const extra = join(t.home, 'branch.gitconfig');
    writeFileSync(extra, '[core]\n\thooksPath = /branch/hooks\n');
    appendFileSync(join(paths.commonDir, 'config'), `[includeIf "onbranch:${branch}"]\n\tpath = ${extra}\n`);
    settle();
    expect(hookHealth(paths).hooksDir).toBe('/branch/hooks');
    started();
    hookHealth(paths);
    hookHealth(paths);
    expect(started(), 'looks with an include on the branch did not ask git each time').toBe(2);
  });
});
