import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** git with the test's environment: a hook it triggers must talk to the test daemon, never the real HERMES_HOME. */
/** Async: the fake model answers from this process, so the test must not block while git runs. */
function commit(t: TestEnv, repo: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['commit', ...args], { cwd: repo, env: { ...t.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

const config = (fix: string) => `checks:
  - id: tests
    run: "grep -q '^sum=3$' calc.txt"
    fix: true
hooks:
  pre-commit:
    checks: [tests]
    fix: ${fix}
`;

const fixSteps = () => [
  { tool_calls: [{ name: 'write_file', arguments: { path: 'calc.txt', content: 'sum=3\n' } }] },
  { content: 'Fixed the sum in calc.txt.' },
];

describe('pre-commit checks run on the staged snapshot; failures become fix requests', () => {
  let t: TestEnv;
  let model: FakeModel;
  let repo: string;
  const setup = async (fix: string) => {
    repo = t.repo({ 'calc.txt': 'sum=3\n', 'other.txt': 'other\n' });
    await t.cli(['init'], { cwd: repo });
    writeFileSync(join(repo, '.hermes', 'config.yaml'), config(fix));
    gitIn(t, repo, 'add', '.hermes/config.yaml');
    gitIn(t, repo, 'commit', '-qm', 'config', '--no-verify');
    const start = await t.cli(['start'], { cwd: repo });
    expect(start.code, start.stderr).toBe(0);
  };
  beforeEach(async () => {
    t = makeEnv();
    model = await startFakeModel([]);
    // Every process of the test (the CLI, git, the hooks, the daemon they start) reaches the fake model.
    t.env.OPENAI_BASE_URL = model.url;
  });
  afterEach(async () => {
    await t.cleanup();
    await model.close();
  });

  it('judges what is staged, not unstaged work, and leaves the unstaged work in place', async () => {
    await setup('propose');
    writeFiles(repo, { 'other.txt': 'other v2\n' });
    gitIn(t, repo, 'add', 'other.txt');
    writeFiles(repo, { 'calc.txt': 'sum=4\n', 'scratch.bin': Buffer.from([0, 1, 2, 255]) });
    const c = await commit(t, repo, ['-qm', 'staged is fine']);
    expect(c.code, c.out).toBe(0);
    expect(gitIn(t, repo, 'show', 'HEAD:calc.txt')).toBe('sum=3\n');
    expect(readFileSync(join(repo, 'calc.txt'), 'utf8')).toBe('sum=4\n');
    expect(readFileSync(join(repo, 'scratch.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(model.requests.length).toBe(0);
  });

  it('fix: propose leaves the fix in the work tree, stops the commit, and says how to review it', async () => {
    await setup('propose');
    model.push(...fixSteps());
    writeFiles(repo, { 'calc.txt': 'sum=2\n' });
    gitIn(t, repo, 'add', 'calc.txt');
    writeFiles(repo, { 'other.txt': 'my unstaged work\n', 'notes.txt': 'untracked notes\n' });
    const c = await commit(t, repo, ['-qm', 'broken']);
    expect(c.code).toBe(1);
    expect(c.out).toContain('check tests FAILED');
    expect(c.out).toContain('proposes a fix (the checks pass with it)');
    expect(c.out).toContain('git diff');
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('config');
    expect(readFileSync(join(repo, 'calc.txt'), 'utf8')).toBe('sum=3\n');
    expect(gitIn(t, repo, 'show', ':calc.txt')).toBe('sum=2\n');
    expect(readFileSync(join(repo, 'other.txt'), 'utf8')).toBe('my unstaged work\n');
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('untracked notes\n');
    // The check output reached the agent as turn context.
    const firstUser = model.requests[0]!.messages.filter((m) => m.role === 'user')
      .map((m) => String(m.content))
      .join('\n');
    expect(firstUser).toContain("grep -q '^sum=3$' calc.txt");
    // Logged to SessionDB.
    const found = await t.cli(['sessions', 'search', 'pre-commit', '--json'], { cwd: repo });
    expect(found.json().results.length).toBeGreaterThan(0);
  });

  it('fix: stage stages the fix when the checks pass with it, and the commit proceeds', async () => {
    await setup('stage');
    model.push(...fixSteps());
    writeFiles(repo, { 'calc.txt': 'sum=2\n', 'feature.txt': 'the feature\n' });
    gitIn(t, repo, 'add', 'calc.txt', 'feature.txt');
    const c = await commit(t, repo, ['-qm', 'auto-fixed']);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('fix is staged');
    expect(gitIn(t, repo, 'show', 'HEAD:calc.txt')).toBe('sum=3\n');
    expect(gitIn(t, repo, 'show', 'HEAD:feature.txt')).toBe('the feature\n');
    expect(gitIn(t, repo, 'status', '--porcelain', '--', 'calc.txt', 'other.txt')).toBe('');
  });

  it('fix: stage never turns a commit into an empty one: a fix that takes back every staged change is left for review', async () => {
    await setup('stage');
    model.push(...fixSteps());
    writeFiles(repo, { 'calc.txt': 'sum=2\n' });
    gitIn(t, repo, 'add', 'calc.txt');
    const head = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const c = await commit(t, repo, ['-qm', 'my change to the sum']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain('takes back every change you staged');
    expect(c.out).not.toContain('fix is staged');
    // No commit under the user's message, empty or not; the user's staged version is still staged.
    expect(gitIn(t, repo, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(gitIn(t, repo, 'show', ':calc.txt')).toBe('sum=2\n');
    expect(readFileSync(join(repo, 'calc.txt'), 'utf8')).toBe('sum=3\n');
  });

  it("a fix request that fails says why (the model's error) and SessionDB keeps the reason", async () => {
    await setup('propose');
    await model.close();
    // Nothing listens there any more: the agent cannot reach its model.
    writeFiles(repo, { 'calc.txt': 'sum=2\n' });
    gitIn(t, repo, 'add', 'calc.txt');
    const c = await commit(t, repo, ['-qm', 'broken']);
    expect(c.code).toBe(1);
    expect(c.out).toContain('the agent made no change');
    expect(c.out).toMatch(/the agent could not work: model-unreachable: .*127\.0\.0\.1/);
    const sessions = (await t.cli(['sessions', 'list', '--json'], { cwd: repo })).json();
    const failed = (sessions.sessions as Array<{ id: string; endReason: string | null }>).find((x) => x.endReason === 'failed');
    expect(failed, JSON.stringify(sessions)).toBeDefined();
    const shown = await t.cli(['sessions', 'show', failed!.id], { cwd: repo });
    expect(shown.stdout).toContain('model-unreachable');
  });

  it("a fix that conflicts with the user's unstaged change keeps the user's version and saves the fix as a patch", async () => {
    await setup('propose');
    model.push(...fixSteps());
    writeFiles(repo, { 'calc.txt': 'sum=2\n' });
    gitIn(t, repo, 'add', 'calc.txt');
    writeFiles(repo, { 'calc.txt': 'sum=2\n# my own note\n' });
    const c = await commit(t, repo, ['-qm', 'conflict']);
    expect(c.code).toBe(1);
    expect(readFileSync(join(repo, 'calc.txt'), 'utf8')).toBe('sum=2\n# my own note\n');
    const m = /is in (\S+fix\.patch)/.exec(c.out);
    expect(m, c.out).not.toBeNull();
    expect(existsSync(m![1]!)).toBe(true);
    expect(readFileSync(m![1]!, 'utf8')).toContain('+sum=3');
  });
});
