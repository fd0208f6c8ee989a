/**
 * The agent's `terminal` may write in a git directory only where git writes its own state
 * (objects, refs, logs, the index, HEAD…). What git or hermesd reads there — the hook runner
 * in `<common-dir>/hermesd` that every git hook of every work tree sources, `info/`, a
 * `commondir` that would send git to another config, the `.git` itself — stays as it was:
 * read-only in the sandbox, and put back by the check after the command where there is no
 * sandbox. Replace refs and grafts are the guard's too. A linked work tree is where this
 * mattered first: its sandbox left the common dir's runner writable.
 * Real repositories, `hermesd init`, real bubblewrap, the terminal tool's guard.
 */

import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { prepareTerminalGuard, type GuardReport } from '../../src/guard/terminal-guard.js';
import { sandboxAvailability } from '../../src/guard/sandbox.js';
import { runCommand } from '../../src/process/run.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

const config = configSchema().parse({ rules: [{ id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' }] });
const unsandboxed = configSchema().parse({ ...config, guard: { sandbox: { enabled: false } } });

let t: TestEnv;
let main: string;
let linked: string;
let common: string;
let runner: string;

beforeAll(async () => {
  t = makeEnv();
  main = t.repo({ 'README.md': '# repo\n' });
  const init = await t.cli(['init'], { cwd: main });
  expect(init.code, init.stderr).toBe(0);
  gitIn(t, main, 'add', '-A');
  gitIn(t, main, '-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'hermesd init');
  linked = join(main, '..', 'linked');
  gitIn(t, main, 'worktree', 'add', '-q', '-b', 'side', linked);
  linked = realpathSync(linked);
  common = realpathSync(join(main, '.git'));
  runner = join(common, 'hermesd', 'hook');
  expect(existsSync(runner)).toBe(true);
}, 60_000);
afterAll(async () => {
  // `git worktree add` ran the post-checkout hook there, which started that work tree's daemon.
  if (linked) await t.cli(['stop'], { cwd: linked });
  await t?.cleanup();
});

/** One command the way the terminal tool runs it: the guard prepared, the command in its sandbox, then the checks. */
async function terminal(root: string, command: string, cfg = config): Promise<{ exitCode: number | null; output: string; guard: GuardReport }> {
  const guard = await prepareTerminalGuard(root, cfg, { env: { ...t.env, HOME: join(t.home, '..') } });
  const r = await runCommand(command, { cwd: root, env: guard.env, wrap: (c) => guard.command(c), timeoutMs: 30_000, output: { headChars: 20_000 } });
  const report = await guard.finish();
  return { exitCode: r.exitCode, output: r.output.head + r.output.tail, guard: report };
}

const hasSandbox = sandboxAvailability(process.env).kind === 'bwrap';

describe.runIf(hasSandbox)('in the sandbox', () => {
  it("from a linked work tree, the common dir's hook runner is read-only", async () => {
    const bytes = readFileSync(runner);
    const r = await terminal(linked, `echo 'touch /tmp/pwned' >> "$(git rev-parse --git-common-dir)/hermesd/hook"; echo "exit=$?"`);
    expect(r.output).toMatch(/Read-only file system/);
    expect(readFileSync(runner)).toEqual(bytes);
  });

  it("a linked work tree's .git file, and its git dir's commondir, are read-only", async () => {
    const dotGit = readFileSync(join(linked, '.git'));
    const r = await terminal(linked, `echo "gitdir: /tmp/elsewhere" > .git; echo "/tmp/elsewhere" > "$(git rev-parse --git-dir)/commondir"`);
    expect(r.output).toMatch(/Read-only file system/);
    expect(readFileSync(join(linked, '.git'))).toEqual(dotGit);
    expect(gitIn(t, linked, 'rev-parse', '--git-common-dir').trim()).toBe(common);
  });

  it('.git cannot be moved away and replaced, info/ cannot take a graft file', async () => {
    const r = await terminal(main, 'mv .git .git-old; echo "$(git rev-parse HEAD) $(git rev-parse HEAD)" > .git/info/grafts; ls -a');
    expect(r.output).toMatch(/Device or resource busy|Read-only file system/);
    expect(existsSync(join(main, '.git-old'))).toBe(false);
    expect(existsSync(join(main, '.git', 'info', 'grafts'))).toBe(false);
  });

  it('a name git does not write, created at the top of the git dir, is removed after the command', async () => {
    const r = await terminal(main, 'mkdir -p /tmp/other && echo /tmp/other > .git/commondir && echo planted');
    expect(r.output).toContain('planted');
    expect(existsSync(join(main, '.git', 'commondir'))).toBe(false);
    expect(r.guard.notice).toContain('commondir');
    expect(gitIn(t, main, 'rev-parse', 'HEAD')).toBeTruthy();
  });

  it('git still works (objects, refs, the index, a stash); replace refs are taken back', async () => {
    const r = await terminal(
      main,
      'echo more >> README.md && git add README.md && c=$(git commit-tree $(git write-tree) -p HEAD -m more) && git update-ref refs/heads/topic $c && git stash -q && git stash list && git replace HEAD HEAD~1 && echo done',
    );
    expect(r.exitCode, r.output).toBe(0);
    expect(r.output).toContain('done');
    expect(gitIn(t, main, 'log', '-1', '--format=%s', 'topic').trim()).toBe('more');
    gitIn(t, main, 'stash', 'drop', '-q');
    expect(gitIn(t, main, 'for-each-ref', 'refs/replace/').trim()).toBe('');
    expect(r.guard.notice).toContain('Replace refs were changed');
  });
});

describe('without a sandbox, the check after the command puts it back', () => {
  it("the common dir's hook runner, changed from a linked work tree", async () => {
    const bytes = readFileSync(runner);
    const r = await terminal(linked, `echo 'touch /tmp/pwned' >> "$(git rev-parse --git-common-dir)/hermesd/hook"`, unsandboxed);
    expect(readFileSync(runner)).toEqual(bytes);
    expect(r.guard.notice).toContain("hermesd's hook runner was changed");
  });

  it('a graft file and a replace ref', async () => {
    const head = gitIn(t, main, 'rev-parse', 'HEAD').trim();
    const r = await terminal(main, 'git replace HEAD HEAD~1 && echo "$(git rev-parse HEAD)" > .git/info/grafts', unsandboxed);
    expect(existsSync(join(main, '.git', 'info', 'grafts'))).toBe(false);
    expect(gitIn(t, main, 'for-each-ref', 'refs/replace/').trim()).toBe('');
    expect(r.guard.notice).toContain('grafts');
    expect(r.guard.notice).toContain('Replace refs were changed');
    expect(gitIn(t, main, 'rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('a planted commondir', async () => {
    const r = await terminal(main, 'echo /tmp/other > .git/commondir', unsandboxed);
    expect(existsSync(join(main, '.git', 'commondir'))).toBe(false);
    expect(r.guard.notice).toContain('commondir');
  });
});
