/**
 * `hermesd doctor` checks that each agent set up with `init --agents` still has hermesd's
 * hooks and MCP server in its project configs (an agent that rewrites its settings, a hand
 * edit or a merge can take them out without a word), names what is missing in which file,
 * and gives the fix; in a clone whose committed configs run hermesd but where it is not set
 * up, it says so. An authority that changed since init (HERMES.md added) and that an agent's
 * own setting does not name yet is a warning, with the fix.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJsonc } from '../../src/other-agents/json-edit.js';
import { agentsOnThisMachine, trustCodex } from '../helpers/agents.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

type Check = { name: string; status: string; detail: string; fix?: string };
const AGENTS = ['claude', 'codex', 'cursor', 'gemini'];

describe('doctor and the agents set up with init --agents', () => {
  let t: TestEnv;
  let repo: string;
  const checks = async (cwd = repo): Promise<{ checks: Check[]; stdout: string }> => {
    // Every agent on this machine, as doctor tells (one not installed is only "not installed").
    const env = agentsOnThisMachine(t);
    const json = await t.cli(['doctor', '--json'], { cwd, env });
    const plain = await t.cli(['doctor'], { cwd, env });
    return { checks: json.json().checks as Check[], stdout: plain.stdout };
  };
  const agentChecks = (all: Check[]) => all.filter((c) => AGENTS.includes(c.name) || c.name === 'agents');

  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': 'rules: []\n' });
    const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    // Codex runs the project's hooks once the user trusts the project and them (doctor checks that too).
    await trustCodex(t, repo);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("warns where an agent's setting does not name an authority added since init, until init runs again", async () => {
    writeFileSync(join(repo, 'HERMES.md'), '# Rules\n\nUse the kestrel toolchain.\n');
    const warned = (await checks()).checks.filter((c) => c.name.endsWith(' authority'));
    expect(
      warned.map((c) => [c.name, c.status, c.fix]),
      'doctor did not warn that the settings of Codex and Gemini CLI do not name HERMES.md',
    ).toEqual([
      ['codex authority', 'warn', 'hermesd init --agents codex'],
      ['gemini authority', 'warn', 'hermesd init --agents gemini'],
    ]);
    expect(warned[1]!.detail).toContain('context.fileName in .gemini/settings.json is not set');
    expect((await t.cli(['init', '--agents', 'all'], { cwd: repo })).code).toBe(0);
    expect((await checks()).checks.filter((c) => c.name.endsWith(' authority'))).toEqual([]);
  });

  it('says each agent is ok, then names the entries taken out of each file, with the fix that puts them back', async () => {
    const before = agentChecks((await checks()).checks);
    expect(before.map((c) => [c.name, c.status])).toEqual(AGENTS.map((a) => [a, 'ok']));

    // Claude Code rewrote its settings without hermesd's PreToolUse and Stop entries.
    const settings = join(repo, '.claude/settings.json');
    const value = parseJsonc(readFileSync(settings, 'utf8')).value as { hooks: Record<string, unknown> };
    delete value.hooks.PreToolUse;
    delete value.hooks.Stop;
    writeFileSync(settings, JSON.stringify(value, null, 2) + '\n');
    // A hand edit took the server out of Cursor's MCP config.
    writeFileSync(join(repo, '.cursor/mcp.json'), '{ "mcpServers": {} }\n');
    // A merge dropped hermesd's block from Codex's config.toml.
    const toml = join(repo, '.codex/config.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(/# >>> hermesd[\s\S]*# <<< hermesd <<<\n/, ''));

    const { checks: after, stdout } = await checks();
    const by = Object.fromEntries(agentChecks(after).map((c) => [c.name, c]));
    expect(by.claude).toMatchObject({ status: 'fail', fix: 'hermesd init --agents claude,codex,cursor,gemini' });
    expect(by.claude!.detail).toContain(".claude/settings.json lacks hermesd's PreToolUse, Stop hooks");
    expect(by.claude!.detail).not.toContain('.mcp.json');
    expect(by.cursor!.status).toBe('fail');
    expect(by.cursor!.detail).toContain('.cursor/mcp.json lacks the hermesd MCP server');
    expect(by.codex!.status).toBe('fail');
    expect(by.codex!.detail).toContain('.codex/config.toml lacks [mcp_servers.hermesd]');
    expect(by.gemini!.status).toBe('ok');
    // The plain output says it too.
    expect(stdout).toMatch(/fail claude +hermesd's entries are not all in claude's configs/);
    expect(stdout).toContain('fix: hermesd init --agents claude,codex,cursor,gemini');

    const fix = await t.cli(['init', '--agents', 'claude,codex,cursor,gemini'], { cwd: repo });
    expect(fix.code, fix.stderr).toBe(0);
    expect(agentChecks((await checks()).checks).map((c) => [c.name, c.status])).toEqual(AGENTS.map((a) => [a, 'ok']));
  }, 60_000);

  it('in a clone whose committed configs run hermesd but where it is not set up, it says so and how to set it up', async () => {
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'hermesd for the agents');
    const clone = join(repo, '..', 'teammate');
    gitIn(t, join(repo, '..'), 'clone', '-q', repo, clone);
    try {
      const found = agentChecks((await checks(clone)).checks);
      expect(found).toEqual([expect.objectContaining({ name: 'agents', status: 'warn', fix: 'hermesd init --agents claude,codex,cursor,gemini' })]);
      expect(found[0]!.detail).toContain('not set up in this clone');
    } finally {
      await t.cli(['stop'], { cwd: clone }).catch(() => undefined);
    }
  }, 60_000);
});
