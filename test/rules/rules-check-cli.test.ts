import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { CLI, git, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["src/generated/**"]
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('hermesd check through the real daemon', () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': CONFIG, 'src/generated/api.ts': 'v1\n', 'src/app.ts': 'one\ntwo\n' });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('a clean tree exits 0 with an empty list', async () => {
    const r = await t.cli(['check', '--staged', '--json'], { cwd: repo });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ violations: [], warnings: [] });
    const human = await t.cli(['check'], { cwd: repo });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('no rule violations');
  });

  it('--staged --json prints {violations:[{rule,file,line,message}]} and exits 1', async () => {
    writeFiles(repo, { 'src/app.ts': `one\ntwo\nkey = "${KEY}"\n`, 'src/generated/api.ts': 'v2\n' });
    git(repo, 'add', '-A');
    writeFiles(repo, { 'src/unstaged.ts': `${KEY}\n` });
    const r = await t.cli(['check', '--staged', '--json'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.json()).toEqual({
      violations: [
        { rule: 'no-aws-keys', file: 'src/app.ts', line: 3, message: 'Never commit credentials.' },
        { rule: 'generated-files', file: 'src/generated/api.ts', line: 0, message: 'Do not edit generated files directly.' },
      ],
      warnings: [],
    });
    // The work tree view also sees the untracked file.
    const w = await t.cli(['check', '--json'], { cwd: repo });
    expect(w.code).toBe(1);
    expect(w.json().violations.map((v: { file: string }) => v.file)).toEqual(['src/app.ts', 'src/generated/api.ts', 'src/unstaged.ts']);
  });

  it('human output lists file:line  rule  message and says how to bypass', async () => {
    const r = await t.cli(['check', '--staged'], { cwd: repo });
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^src\/app\.ts:3\s+no-aws-keys\s+Never commit credentials\.$/);
    expect(lines[1]).toMatch(/^src\/generated\/api\.ts:0\s+generated-files\s+Do not edit generated files directly\.$/);
    expect(r.stdout).toContain('2 rule violations.');
    expect(r.stdout).toContain('HERMESD_SKIP=1');
    expect(r.stdout).toContain('git commit --no-verify');
  });

  it('GET /v1/config shows the effective config, where each part came from, and no secret', async () => {
    const status = (await t.cli(['status', '--json'], { cwd: repo })).json();
    const client = new DaemonClient(status.socket);
    const answer = await client.call<any>('GET', '/v1/config');
    expect(answer.config.rules.map((r: { id: string }) => r.id)).toEqual(['generated-files', 'no-aws-keys']);
    expect(answer.config.model.apiKey).toBe('<redacted>');
    expect(answer.config.model.baseUrl).toBe(t.env.OPENAI_BASE_URL);
    expect(answer.origins).toMatchObject({ 'rules.no-aws-keys': 'repository', 'model.apiKey': 'env:OPENAI_API_KEY', 'hooks.timeoutMs': 'default' });
    expect(answer.files).toEqual([
      { scope: 'user', file: `${t.home}/config.yaml`, exists: false },
      { scope: 'repository', file: `${repo}/.hermes/config.yaml`, exists: true },
    ]);
    const bad = await client.raw('POST', '/v1/check', { staged: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('inside a pre-commit hook, --staged judges the index git is committing (git commit -a, git commit <path>)', async () => {
    const r2 = t.repo({ '.hermes/config.yaml': CONFIG, 'src/generated/api.ts': 'v1\n', 'src/app.ts': 'one\n' });
    writeFiles(r2, { '.git/hooks/pre-commit': `#!/bin/sh\nexec "${process.execPath}" "${CLI}" check --staged\n` });
    chmodSync(join(r2, '.git/hooks/pre-commit'), 0o755);
    const commit = (...args: string[]) => spawnSync('git', ['commit', '-q', ...args], { cwd: r2, env: t.env, encoding: 'utf8' });
    writeFiles(r2, { 'src/generated/api.ts': 'v2 by hand\n', 'src/app.ts': 'one\ntwo\n' });
    // Nothing is staged in .git/index; `commit -a` stages both into the index it commits.
    const all = commit('-am', 'everything');
    expect(all.status).not.toBe(0);
    expect(all.stdout + all.stderr).toMatch(/src\/generated\/api\.ts:0\s+generated-files/);
    // Committing only the clean path judges only that path.
    const one = commit('-m', 'just the app', 'src/app.ts');
    expect(one.stderr + one.stdout).not.toContain('generated-files');
    expect(one.status).toBe(0);
    expect(git(r2, 'log', '--oneline').trim().split('\n')).toHaveLength(2);
  });
});
