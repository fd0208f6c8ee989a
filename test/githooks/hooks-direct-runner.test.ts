import { chmodSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stagedTreeOf } from '../../src/git/index-file.js';
import { gitIn, commitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const RULES = 'rules:\n  - id: no-todo\n    message: No TODO markers.\n    forbid: "TODO"\n';

describe('the husky layout hermesd creates runs hooks without husky runner forks', () => {
  let t: TestEnv;
  let repo: string;
  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ 'a.txt': 'a\n' });
    // husky as the chosen way (a repository with no hook manager gets .git/hooks stubs instead).
    expect((await t.cli(['init', '--manager', 'husky'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, '.hermes', 'config.yaml'), RULES);
    await t.cli(['start'], { cwd: repo });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('runs hermesd once, then your commands in .husky/<hook>; HUSKY=0 (reported after the commit) and a removed block are honoured', async () => {
    const stub = readFileSync(join(repo, '.husky', '_', 'pre-commit'), 'utf8');
    expect(stub).toContain('hermesd_stub=husky');
    // no command substitution (a fork) on the way to hermesd's runner
    expect(
      stub
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n'),
    ).not.toContain('$(');
    const userHook = join(repo, '.husky', 'pre-commit');
    writeFileSync(userHook, readFileSync(userHook, 'utf8') + 'echo "user $HERMESD_SKIP" >> user-hook-ran\n');

    writeFiles(repo, { 'b.txt': 'TODO later\n' });
    gitIn(t, repo, 'add', 'b.txt');
    const refused = commitIn(t, repo, ['-qm', 'todo']);
    expect(refused.code).toBe(1);
    expect(refused.out.split('no-todo').length - 1).toBe(1);
    expect(existsSync(join(repo, 'user-hook-ran'))).toBe(false);

    // HUSKY=0 skips your commands and hermesd's pre-commit check (husky's own convention), not
    // silently: hermesd's post-commit re-checks the commit at once and names what breaks a rule.
    const off = commitIn(t, repo, ['-qm', 'todo'], { HUSKY: '0' });
    expect(off.code, off.out).toBe(0);
    expect(existsSync(join(repo, 'user-hook-ran'))).toBe(false);
    expect(off.out, 'a commit made with HUSKY=0 went unreported').toContain('SKIPPED the pre-commit hook');
    expect(off.out).toContain('b.txt:1  [no-todo]');

    writeFiles(repo, { 'c.txt': 'fine\n' });
    gitIn(t, repo, 'add', 'c.txt');
    const ok = commitIn(t, repo, ['-qm', 'fine']);
    expect(ok.code, ok.out).toBe(0);
    expect(readFileSync(join(repo, 'user-hook-ran'), 'utf8')).toBe('user \n');

    // Your command failing stops the commit, as with husky.
    writeFileSync(userHook, readFileSync(userHook, 'utf8') + 'exit 3\n');
    writeFiles(repo, { 'd.txt': 'd\n' });
    gitIn(t, repo, 'add', 'd.txt');
    const failed = commitIn(t, repo, ['-qm', 'd']);
    expect(failed.code).not.toBe(0);
    expect(failed.out).toContain('pre-commit script failed (code 3)');

    // Our block taken out: your commands alone run, hermesd judges nothing.
    writeFileSync(userHook, 'echo alone >> user-hook-ran\n');
    writeFiles(repo, { 'e.txt': 'TODO again\n' });
    gitIn(t, repo, 'add', 'e.txt');
    const alone = commitIn(t, repo, ['-qm', 'e']);
    expect(alone.code, alone.out).toBe(0);
    expect(readFileSync(join(repo, 'user-hook-ran'), 'utf8')).toBe('user \nuser \nalone\n');
  });

  it('post-commit evidence names the commit it ran for, even when git has moved on', async () => {
    writeFiles(repo, { 'q.txt': 'q\n' });
    gitIn(t, repo, 'add', 'q.txt');
    gitIn(t, repo, 'commit', '-qm', 'Add the quokka');
    const first = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'w.txt': 'w\n' });
    gitIn(t, repo, 'add', 'w.txt');
    gitIn(t, repo, 'commit', '-qm', 'Add the wombat');
    const end = Date.now() + 10_000;
    let text = '';
    while (!text && Date.now() < end) {
      const r = await t.cli(['sessions', 'search', 'quokka', '--json'], { cwd: repo });
      const hit = r.code === 0 ? (r.json().results as Array<{ sessionId: string }>)[0] : undefined;
      if (hit) text = (await t.cli(['sessions', 'show', hit.sessionId, '--json'], { cwd: repo })).json().messages[0].content;
      else await new Promise((res) => setTimeout(res, 100));
    }
    expect(text).toContain(`git commit ${first} on main: Add the quokka`);
    expect(text).toContain('q.txt');
  });

  it('computes the staged tree from the index entries as git write-tree does, whatever the cache tree says', () => {
    writeFiles(repo, {
      'dir/x.txt': 'x\n',
      'dir/sub/y.txt': 'y\n',
      'a.txt': 'a\n',
      'a/b.txt': 'b\n',
      'a-b/c': 'c\n',
      'run.sh': 'echo\n',
      'ita.txt': 'later\n',
    });
    chmodSync(join(repo, 'run.sh'), 0o755);
    symlinkSync('dir/x.txt', join(repo, 'link'));
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'rm', '-q', '--cached', 'ita.txt');
    gitIn(t, repo, 'add', '-N', 'ita.txt');
    gitIn(t, repo, 'update-index', '--add', '--cacheinfo', `160000,${gitIn(t, repo, 'rev-parse', 'HEAD').trim()},vendor/mod`);
    // git add left the changed parts of the cache tree invalid: the entries answer all the same
    const tree = gitIn(t, repo, 'write-tree').trim();
    expect(stagedTreeOf(join(repo, '.git', 'index'))).toBe(tree);
    gitIn(t, repo, 'update-index', '--index-version', '4');
    expect(stagedTreeOf(join(repo, '.git', 'index'))).toBe(tree);
    expect(stagedTreeOf(join(repo, '.git', 'no-such-index'))).toBeUndefined();
    gitIn(t, repo, 'rm', '-q', '--cached', 'ita.txt');
  });
});
