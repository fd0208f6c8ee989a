/**
 * Codex runs a project's hooks only in a trusted project, and only hooks the user reviewed:
 * `[projects."<root>"] trust_level` and `[hooks.state."<file>:<event>:<group>:<handler>"]
 * trusted_hash` in `$CODEX_HOME/config.toml`. An untrusted project ignores .codex/ entirely; an
 * unreviewed hook is skipped without a word. `hermesd doctor` reads that state (never writes
 * it) and says whether Codex will run hermesd's hooks, and what to do; it said "ok codex"
 * either way. `init --agents codex` says how to trust both. Codex's state lives in a temp
 * CODEX_HOME here.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexHookHash } from '../../src/other-agents/codex-trust.js';
import { trustCodex } from '../helpers/agents.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

type Check = { name: string; status: string; detail: string; fix?: string };

describe('doctor says whether Codex will run hermesd', () => {
  let t: TestEnv;
  let repo: string;
  let config: string;
  let initOut: string;
  const codexCheck = async (): Promise<Check> => ((await t.cli(['doctor', '--json'], { cwd: repo })).json().checks as Check[]).find((c) => c.name === 'codex')!;
  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': 'rules: []\n', 'gen/a.ts': 'export const a = 1;\n' });
    config = join(t.env.CODEX_HOME!, 'config.toml');
    mkdirSync(t.env.CODEX_HOME!, { recursive: true });
    const init = await t.cli(['init', '--agents', 'codex'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    initOut = init.stdout;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('init says how to trust the project and the hooks', () => {
    expect(initOut).toContain(`[projects."${repo}"] trust_level = "trusted"`);
    expect(initOut).toContain('/hooks');
  });

  it('computes the hash Codex 0.171 records for a trusted hook', () => {
    // Hashes Codex 0.171 accepted: with them in [hooks.state] a SessionStart and a UserPromptSubmit hook
    // ran in `codex exec`; with one digit changed, the SessionStart hook was skipped.
    const command = (n: string) => `echo ${n} >> /tmp/i31b/cx/proj/../marker`;
    expect(codexHookHash('SessionStart', undefined, { command: command('ss'), timeout: 30 })).toBe(
      'sha256:4fa0a71d82a9fd790510ccd47a57f487865acb3c680561e56374877cc14f5af5',
    );
    expect(codexHookHash('UserPromptSubmit', undefined, { command: command('ups'), timeout: 30 })).toBe(
      'sha256:f15264e1c5dbafa7601877eb4ee1ccc01e19db715a22c0748016eb082ccacae9',
    );
  });

  it('an untrusted project: Codex ignores .codex/, doctor says so and how to trust it', async () => {
    const none = await codexCheck();
    expect(none.status).toBe('fail');
    expect(none.detail).toContain('until you trust the project');
    expect(none.fix).toContain('codex exec --trust');
    writeFileSync(config, `model = "gpt-5.5"\n\n[projects."${repo}"]\ntrust_level = "untrusted"\n`);
    const marked = await codexCheck();
    expect(marked.status).toBe('fail');
    expect(marked.detail).toContain('marked untrusted');
    expect(marked.fix).toContain(`[projects."${repo}"] trust_level = "trusted"`);
  });

  it('a trusted project whose hooks are not reviewed: doctor names them', async () => {
    writeFileSync(config, `[projects."${repo}"]\ntrust_level = "trusted"\n`);
    const c = await codexCheck();
    expect(c.status).toBe('fail');
    expect(c.detail).toContain('not reviewed yet: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd');
    expect(c.fix).toContain('/hooks');
    // One reviewed hook left out.
    await trustCodex(t, repo, 1);
    expect((await codexCheck()).detail).toContain('not reviewed yet: SessionStart');
  });

  it('everything trusted: ok; a hook changed since it was reviewed is named', async () => {
    await trustCodex(t, repo);
    const ok = await codexCheck();
    expect(ok.status, ok.detail).toBe('ok');
    // A reviewed hook whose command changed afterwards (an edit, another hermesd version).
    const hooksFile = join(repo, '.codex/hooks.json');
    const before = readFileSync(hooksFile, 'utf8');
    writeFileSync(hooksFile, before.replace('Stop;', 'Stop ;'));
    const changed = await codexCheck();
    expect(changed.status).toBe('fail');
    expect(changed.detail).toContain('changed since you reviewed them: Stop');
    writeFileSync(hooksFile, before);
  });

  it("says whether Codex's sandbox runs hermesd's permission profile for the rules in force, and what to run when the rules changed since init", async () => {
    expect((await codexCheck()).detail).toContain("Codex's sandbox runs hermesd's permission profile (the protected paths read-only)");
    // sandbox_mode in the user's config: Codex uses the older settings, and the profile goes unused.
    const userConfig = readFileSync(config, 'utf8');
    writeFileSync(config, `sandbox_mode = "workspace-write"\n${userConfig}`);
    expect((await codexCheck()).detail).toContain(`Codex's sandbox follows sandbox_mode in ${config}, not hermesd's permission profile`);
    // The user's own default_permissions at init: no profile of hermesd's written, and doctor says the sandbox is theirs.
    writeFileSync(config, `default_permissions = ":workspace"\n${userConfig}`);
    expect((await t.cli(['init', '--agents', 'codex'], { cwd: repo })).code).toBe(0);
    const theirs = await codexCheck();
    expect(theirs.status, theirs.detail).toBe('ok');
    expect(theirs.detail).toContain("Codex's sandbox is as your config chooses it");
    writeFileSync(config, userConfig);
    expect((await t.cli(['init', '--agents', 'codex'], { cwd: repo })).code).toBe(0);
    const yaml = join(repo, '.hermes/config.yaml');
    writeFileSync(yaml, 'rules:\n  - id: generated-files\n    message: Run the generator.\n    protect: ["gen/**"]\n');
    try {
      const stale = await codexCheck();
      expect(stale.status, stale.detail).toBe('warn');
      expect(stale.detail).toContain('was written before gen');
      expect(stale.fix).toBe('hermesd init --agents codex');
      expect((await t.cli(['init', '--agents', 'codex'], { cwd: repo })).code).toBe(0);
      // The profile's name changed with it; hooks and MCP entries did not, so their trust holds.
      const again = await codexCheck();
      expect(again.status, again.detail).toBe('ok');
      expect(again.detail).toContain("runs hermesd's permission profile");
    } finally {
      writeFileSync(yaml, 'rules: []\n');
      await t.cli(['init', '--agents', 'codex'], { cwd: repo });
    }
    // Nine CLI runs: the bound is for a stuck test, not a goal.
  }, 120_000);
});
