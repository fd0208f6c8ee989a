import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitIn, commitIn, makeEnv, waitFor, writeFiles, type TestEnv } from '../helpers/env.js';

/** git with the test's environment: a hook it triggers must talk to the test daemon, never the real HERMES_HOME. */
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
  - id: generated-files
    message: Do not edit generated files directly; change schema.txt and run sh gen.sh.
    protect: ["gen/**"]
    generator: "sh gen.sh"
`;

describe('pre-commit enforces the rules on exactly the staged snapshot', () => {
  let t: TestEnv;
  let repo: string;
  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({
      'schema.txt': 'one\n',
      'gen.sh': 'mkdir -p gen && tr a-z A-Z < schema.txt > gen/out.txt\n',
      'gen/out.txt': 'ONE\n',
      'src/app.txt': 'app\n',
    });
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    writeFileSync(join(repo, '.hermes', 'config.yaml'), RULES);
    gitIn(t, repo, 'add', '.hermes/config.yaml');
    expect(commitIn(t, repo, ['-qm', 'config']).code).toBe(0);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('refuses forbidden content on added lines with file:line, rule id, message and the bypass', () => {
    writeFiles(repo, { 'src/app.txt': 'app\nkey = AKIAABCDEFGHIJKLMNOP\n' });
    gitIn(t, repo, 'add', 'src/app.txt');
    const c = commitIn(t, repo, ['-qm', 'leak']);
    expect(c.code).toBe(1);
    expect(c.out).toContain('src/app.txt:2');
    expect(c.out).toContain('no-aws-keys');
    expect(c.out).toContain('Never commit credentials.');
    expect(c.out).toContain('HERMESD_SKIP=1');
    expect(c.out).toContain('--no-verify');
    expect(gitIn(t, repo, 'log', '--format=%s', '-1').trim()).toBe('config');
    // The unstaged line is not judged: only what is staged is.
    writeFiles(repo, { 'src/app.txt': 'app\nclean\n' });
    gitIn(t, repo, 'add', 'src/app.txt');
    writeFiles(repo, { 'src/app.txt': 'app\nclean\nAKIAABCDEFGHIJKLMNOP\n' });
    const ok = commitIn(t, repo, ['-qm', 'clean']);
    expect(ok.code, ok.out).toBe(0);
    // git commit -a hands the hook another index (index.lock): that one is judged.
    const all = commitIn(t, repo, ['-qam', 'all']);
    expect(all.code).toBe(1);
    expect(all.out).toContain('src/app.txt:3');
    expect(commitIn(t, repo, ['-qam', 'all'], { HERMESD_SKIP: '1' }).code).toBe(0);
  });

  it('refuses a hand edit of a protected file but accepts what the generator reproduces', () => {
    writeFiles(repo, { 'gen/out.txt': 'HAND EDIT\n' });
    gitIn(t, repo, 'add', 'gen/out.txt');
    const hand = commitIn(t, repo, ['-qm', 'hand']);
    expect(hand.code).toBe(1);
    expect(hand.out).toContain('gen/out.txt');
    expect(hand.out).toContain('generated-files');
    gitIn(t, repo, 'checkout', 'HEAD', '--', 'gen/out.txt');

    writeFiles(repo, { 'schema.txt': 'one\ntwo\n' });
    spawnSync('sh', ['gen.sh'], { cwd: repo });
    expect(readFileSync(join(repo, 'gen', 'out.txt'), 'utf8')).toBe('ONE\nTWO\n');
    gitIn(t, repo, 'add', 'schema.txt', 'gen/out.txt');
    const regen = commitIn(t, repo, ['-qm', 'regenerated']);
    expect(regen.code, regen.out).toBe(0);
  });

  it('a hung daemon holds a commit only for hooks.timeoutMs, then stops it: a daemon that runs but does not answer never lets it through', async () => {
    writeFileSync(join(repo, '.hermes', 'config.yaml'), RULES + 'hooks:\n  timeoutMs: 1000\n');
    writeFiles(repo, { 'src/app.txt': 'v2\n' });
    gitIn(t, repo, 'add', '-A');
    expect(commitIn(t, repo, ['-qm', 'timeout config']).code).toBe(0);
    // The daemon writes the new bound into the runners' settings once its watcher sees the config change.
    await waitFor(() => /^HERMESD_TIMEOUT_MS=1000$/m.test(readFileSync(join(repo, '.git/hermesd/settings'), 'utf8')));
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      writeFiles(repo, { 'src/app.txt': 'v3\n' });
      gitIn(t, repo, 'add', '-A');
      // hooks.onUnavailable ("allow") is for a daemon that cannot start, not for one that hangs.
      const c = commitIn(t, repo, ['-qm', 'while hung']);
      expect(c.code, c.out).not.toBe(0);
      expect(c.out).toContain('did not answer within 1000 ms');
      expect(c.out).toContain('refused this commit');
      expect(c.out).toContain('HERMESD_SKIP=1 git commit');
      // `hermesd hook pre-commit` runs the same runner: the same bound, the same verdict.
      const byHand = await t.cli(['hook', 'pre-commit'], { cwd: repo });
      expect(byHand.code, byHand.stderr).toBe(1);
      expect(byHand.stderr).toContain('did not answer within 1000 ms');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Once it answers again, the commit is judged (and clean, so it goes ahead).
    expect(commitIn(t, repo, ['-qm', 'after']).code).toBe(0);
  });

  it('a daemon that is down is started by the hook', async () => {
    await t.cli(['stop'], { cwd: repo });
    writeFiles(repo, { 'src/app.txt': 'key AKIAABCDEFGHIJKLMNOP\n' });
    gitIn(t, repo, 'add', 'src/app.txt');
    const c = commitIn(t, repo, ['-qm', 'cold']);
    expect(c.code).toBe(1);
    expect(c.out).toContain('no-aws-keys');
    expect((await t.cli(['status'], { cwd: repo })).code).toBe(0);
  });
});
