/**
 * The committed stub `.hermes/agent-hook` gone while the agents' configs still run it — a
 * `git clean -fdx` or a hard reset before the stub was committed, a checkout of an older
 * commit, a session that started before — in a clone where hermesd is set up: every agent's
 * hook command still reaches hermesd (it sources the runner in the git dir itself), so a
 * protected write is still refused, never allowed without a word. Only where hermesd is gone
 * too (uninstalled: no runner) does the call go on, as before. (Once the chaos test's own
 * reset deleted the stub, and every later Claude Code PreToolUse allowed a protected Write
 * with exit 0 and no output.)
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsOnThisMachine, denied, geminiExpand, runHook, toolHookCommand, type HookRun } from '../helpers/agents.js';
import { git, makeEnv, type TestEnv } from '../helpers/env.js';
import { guardedConfig } from '../helpers/transport.js';

type Agent = 'claude' | 'codex' | 'cursor' | 'gemini';

let t: TestEnv;
let repo: string;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/x.ts': 'x\n', 'src/app.ts': 'a\n' });
  const init = await t.cli(['init', '--agents', 'claude,codex,cursor,gemini'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await t?.cleanup();
});

/** A Write of gen/x.ts, asked the way each agent asks it, through the command init wrote. */
function protectedWrite(agent: Agent): Promise<HookRun> {
  const file = join(repo, 'gen/x.ts');
  switch (agent) {
    case 'claude':
      return runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), {
        cwd: repo,
        env: { CLAUDE_PROJECT_DIR: repo },
        payload: { session_id: 's', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: file, content: 'y' } },
      });
    case 'codex': {
      // From a folder below the root, as Codex runs hooks in the session's directory.
      const patch = '*** Begin Patch\n*** Update File: ../gen/x.ts\n@@\n-x\n+y\n*** End Patch\n';
      const cwd = join(repo, 'src');
      return runHook(t, toolHookCommand(repo, 'codex', 'PreToolUse', 'apply_patch'), {
        cwd,
        payload: {
          session_id: 's',
          turn_id: '1',
          cwd,
          hook_event_name: 'PreToolUse',
          tool_name: 'apply_patch',
          tool_input: { command: patch },
          tool_use_id: 'c1',
        },
      });
    }
    case 'cursor': {
      const hooks = JSON.parse(readFileSync(join(repo, '.cursor/hooks.json'), 'utf8')) as { hooks: Record<string, Array<{ command: string }>> };
      const command = hooks.hooks.preToolUse!.find((h) => h.command.includes('.hermes/agent-hook'))!.command;
      return runHook(t, command, {
        cwd: repo,
        payload: {
          conversation_id: 'c',
          generation_id: 'g',
          workspace_roots: [repo],
          hook_event_name: 'preToolUse',
          tool_name: 'Write',
          tool_input: { file_path: file },
          tool_use_id: 'w1',
          cwd: repo,
        },
      });
    }
    case 'gemini':
      return runHook(t, geminiExpand(toolHookCommand(repo, 'gemini', 'BeforeTool', 'write_file'), repo), {
        cwd: repo,
        env: { GEMINI_PROJECT_DIR: repo, GEMINI_CWD: repo },
        payload: { session_id: 's', cwd: repo, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: file, content: 'y' } },
      });
  }
}

const AGENTS: Agent[] = ['claude', 'codex', 'cursor', 'gemini'];

describe('a hook command whose stub is gone', () => {
  it('still asks hermesd where the clone has its runner: the protected write is refused by the rule', async () => {
    for (const agent of AGENTS) {
      const r = await protectedWrite(agent);
      expect(denied(agent, r), `${agent} with the stub: ${JSON.stringify(r)}`).toContain('repository rule "generated"');
    }
    // As `git clean -fdx` leaves a clone whose stub was never committed.
    git(repo, 'clean', '-qfdx', '--', '.hermes/agent-hook');
    expect(existsSync(join(repo, '.hermes/agent-hook'))).toBe(false);
    for (const agent of AGENTS) {
      const r = await protectedWrite(agent);
      expect(denied(agent, r), `${agent} without the stub: ${JSON.stringify(r)}`).toContain('repository rule "generated"');
    }
    expect(readFileSync(join(repo, 'gen/x.ts'), 'utf8')).toBe('x\n');
    // Status says the stub is gone; doctor says it too, and what still holds.
    const status = await t.cli(['status'], { cwd: repo });
    expect(status.stdout).toMatch(/warning +agents: \.hermes\/agent-hook is gone, so a clone without it runs no hermesd hook/);
    const doctor = await t.cli(['doctor'], { cwd: repo, env: agentsOnThisMachine(t) });
    expect(doctor.stdout).toContain('.hermes/agent-hook is gone (the hooks still reach hermesd here, through the runner in .git/hermesd');
    expect(doctor.stdout).toContain('fix: hermesd init --agents');
  }, 120_000);

  it('does nothing where hermesd is gone as well (no runner: uninstalled), as a session started before the uninstall runs it', async () => {
    const runner = join(repo, '.git/hermesd/agent-hook');
    renameSync(runner, `${runner}.away`);
    try {
      for (const agent of AGENTS) expect(await protectedWrite(agent), agent).toMatchObject({ code: 0, stdout: '', stderr: '' });
    } finally {
      renameSync(`${runner}.away`, runner);
    }
  }, 60_000);
});
