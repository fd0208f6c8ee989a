/**
 * A merge can change a protected path while git's combined diff shows nothing: a merge made
 * with `git commit-tree` that takes the protected file from one parent (here: reverts it to an
 * older parent's version) differs from its first parent there, yet matches the other, so the
 * combined diff leaves it out. The range judge compares a merge with EACH parent for protected
 * paths: `check --commits` and the server's pre-receive hook refuse it; an ordinary merge that
 * leaves protected paths alone still passes. Real repositories, the real CLI, a real push.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const RULES = `rules:
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["gen/**"]
`;

describe('a merge judged against each parent for protected paths', () => {
  let t: TestEnv;
  let repo: string;
  let older: string;
  let current: string;
  let crafted: string;

  const commit = (files: Record<string, string>, message: string) => {
    writeFiles(repo, files);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', message);
    return gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  };

  beforeAll(() => {
    t = makeEnv();
    // gen/api.ts was v1 before the rule came; the rule came with v2.
    repo = t.repo({ 'gen/api.ts': 'export const api = 1;\n', 'README.md': '# project\n' });
    older = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    current = commit({ '.hermes/config.yaml': RULES, 'gen/api.ts': 'export const api = 2;\n' }, 'v2, and protect gen/');
    // The crafted merge: the current tree with gen/api.ts put back to the older parent's version.
    gitIn(t, repo, 'checkout', '-q', older, '--', 'gen/api.ts');
    const tree = gitIn(t, repo, 'write-tree').trim();
    gitIn(t, repo, 'reset', '-q', '--hard', current);
    crafted = gitIn(t, repo, 'commit-tree', tree, '-p', current, '-p', older, '-m', 'merge older work').trim();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('check --commits refuses a merge that reverts a protected file to one parent’s version', async () => {
    const combined = gitIn(t, repo, 'diff-tree', '--cc', '--name-only', crafted).trim().split('\n').slice(1);
    expect(combined, 'the crafted merge is not hidden from the combined diff (the test would prove nothing)').toEqual([]);
    const r = await t.cli(['check', '--commits', `${current}..${crafted}`, '--json'], { cwd: repo });
    expect(r.code, `the crafted merge passed:\n${r.stdout}`).toBe(1);
    expect(r.json().violations).toEqual([
      { rule: 'generated-files', file: 'gen/api.ts', line: 0, message: 'Do not edit generated files directly.', commit: crafted },
    ]);
  });

  it('an ordinary merge that leaves protected paths alone still passes', async () => {
    gitIn(t, repo, 'checkout', '-q', '-b', 'side', current);
    commit({ 'src/side.ts': 'side\n' }, 'side work');
    gitIn(t, repo, 'checkout', '-q', 'main');
    commit({ 'src/main.ts': 'main\n' }, 'main work');
    gitIn(t, repo, 'merge', '-q', '--no-edit', 'side');
    const r = await t.cli(['check', '--commits', `${current}..HEAD`], { cwd: repo });
    expect(r.code, `an ordinary merge was refused:\n${r.stdout}`).toBe(0);
  });

  it('the server refuses the crafted merge', async () => {
    const server = join(repo, '..', 'server.git');
    gitIn(t, repo, 'init', '-q', '--bare', server);
    gitIn(t, repo, 'push', '-q', server, `${current}:refs/heads/main`);
    expect((await t.cli(['init', '--server'], { cwd: server })).code).toBe(0);
    const r = spawnSync('git', ['push', server, `${crafted}:refs/heads/main`], { cwd: repo, env: t.env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, `the server took the crafted merge:\n${r.stderr}`).not.toBe(0);
    expect(r.stderr).toMatch(/gen\/api\.ts:0\s+generated-files/);
  });
});
