/**
 * `hermesd doctor` after `init --agents all` on a machine with none of the agents: each is "not
 * installed", not a failure (doctor exited 1 with "fail codex … trust the project" where Codex
 * had never been installed). An agent is there when its command is on PATH or the folder it
 * keeps its state in exists; the real Codex CLI put on PATH makes its line a real check again.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCli } from '../helpers/agent-clis.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

type Check = { name: string; status: string; detail: string; fix?: string };
const AGENTS = ['claude', 'codex', 'cursor', 'gemini'];

describe('doctor and agents that are not installed', () => {
  let t: TestEnv;
  let repo: string;
  let bare: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': 'rules: []\n' });
    const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    // A machine with git and nothing of the agents: PATH holds git alone, HOME is empty.
    const base = join(t.home, '..');
    const bin = join(base, 'bin-git-only');
    mkdirSync(bin);
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    const home = join(base, 'empty-home');
    mkdirSync(home);
    bare = { PATH: bin, HOME: home, CODEX_HOME: undefined, CLAUDE_CONFIG_DIR: undefined, OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined };
  }, 60_000);
  afterAll(async () => {
    await t.cleanup();
  });

  it('each is "not installed" and doctor passes', async () => {
    const json = await t.cli(['doctor', '--json'], { cwd: repo, env: bare });
    const checks = json.json().checks as Check[];
    const said = JSON.stringify(checks, null, 1);
    for (const agent of AGENTS) {
      const c = checks.find((x) => x.name === agent);
      expect(c, `no line for ${agent}:\n${said}`).toBeDefined();
      expect(c!.status, `${agent}: ${c!.detail}`).toBe('ok');
      expect(c!.detail).toMatch(/^not installed \(no .* command on PATH, no .*\)/);
    }
    expect(
      checks.filter((c) => c.status === 'fail'),
      said,
    ).toEqual([]);
    expect(json.code, said).toBe(0);
    const plain = await t.cli(['doctor'], { cwd: repo, env: bare });
    expect(plain.stdout).toMatch(/ok {3}codex {4}not installed \(no codex command on PATH, no .*\.codex\)/);
    expect(plain.code).toBe(0);
  });

  it('Codex on PATH (the real CLI): its line is a real check again, and the untrusted project fails it', async () => {
    const codex = await agentCli('codex');
    const bin = join(codex.dir, 'node_modules', '.bin');
    const env = { ...bare, PATH: `${bare.PATH}:${bin}` };
    const json = await t.cli(['doctor', '--json'], { cwd: repo, env });
    const checks = json.json().checks as Check[];
    const c = checks.find((x) => x.name === 'codex')!;
    expect(c.status, c.detail).toBe('fail');
    expect(c.detail).toContain('until you trust the project');
    expect(json.code).toBe(1);
    for (const agent of AGENTS.filter((a) => a !== 'codex')) expect(checks.find((x) => x.name === agent)!.detail).toMatch(/^not installed/);
  }, 120_000);
});
