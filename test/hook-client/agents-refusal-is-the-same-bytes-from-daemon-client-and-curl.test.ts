/**
 * Each agent reads a refusal in its own form, and three programs write it: the daemon (a rule
 * broken), hermesd's C client and the curl runner (a daemon that cannot answer). All three take
 * the form from one table (src/protocol/agent-hooks.ts); this test holds them to the same
 * bytes for every agent and every pre-tool event whose form differs — Cursor's beforeReadFile
 * among them — with a reason that needs escaping (quotes, a backslash, non-ASCII, a tab).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentName } from '../../src/protocol/agent-hooks.js';
import { denyText } from '../../src/other-agents/hook-table.js';
import { agentRunnerScript } from '../../src/hook-client/runners.js';
import { clientPath } from '../../src/paths/index.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { guardedConfig } from '../helpers/transport.js';
import { geminiExpand, hookCommands, runHook, toolHookCommand } from '../helpers/agents.js';

type Case = { agent: AgentName; event: string; payload: (repo: string) => Record<string, unknown> };

const write = (repo: string) => join(repo, 'gen/api.ts');
const CASES: Case[] = [
  {
    agent: 'claude',
    event: 'PreToolUse',
    payload: (repo) => ({
      session_id: 's',
      cwd: repo,
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: write(repo), content: 'x' },
    }),
  },
  {
    agent: 'codex',
    event: 'PreToolUse',
    payload: (repo) => ({ session_id: 's', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'echo x > gen/api.ts' } }),
  },
  {
    agent: 'cursor',
    event: 'preToolUse',
    payload: (repo) => ({ hook_event_name: 'preToolUse', tool_name: 'Write', tool_input: { file_path: write(repo) }, cwd: repo }),
  },
  {
    agent: 'cursor',
    event: 'beforeShellExecution',
    payload: (repo) => ({ hook_event_name: 'beforeShellExecution', command: 'echo x > gen/api.ts', cwd: repo }),
  },
  {
    agent: 'cursor',
    event: 'beforeReadFile',
    payload: (repo) => ({
      hook_event_name: 'beforeReadFile',
      file_path: join(repo, '.env'),
      content: 'DB_PASSWORD=x',
      attachments: [],
      workspace_roots: [repo],
    }),
  },
  {
    agent: 'gemini',
    event: 'BeforeTool',
    payload: (repo) => ({
      session_id: 's',
      cwd: repo,
      hook_event_name: 'BeforeTool',
      tool_name: 'write_file',
      tool_input: { file_path: write(repo), content: 'x' },
    }),
  },
];

/** The reason inside a refusal, whichever key the agent's form keeps it under. */
function reasonIn(stdout: string): string {
  const out = JSON.parse(stdout) as Record<string, any>;
  const reason = out.hookSpecificOutput?.permissionDecisionReason ?? out.reason ?? out.user_message;
  if (typeof reason !== 'string') throw new Error(`no reason in the refusal: ${stdout}`);
  return reason;
}

let t: TestEnv;
let repo: string;
let scratch: string;
/** A node that cannot run, named with characters the JSON must escape: its path is in the fault's words. */
let badNode: string;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/api.ts': 'x\n', '.env': 'DB_PASSWORD=x\n' });
  const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
  scratch = mkdtempSync(join(tmpdir(), 'hd-deny-bytes-'));
  badNode = join(scratch, 'no "node" \\ é');
});

afterAll(async () => {
  await t?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the refusal each agent reads', () => {
  it.each(CASES)('$agent $event: the daemon writes the form of agent-hooks.ts for a broken rule', async ({ agent, event, payload }) => {
    const body = payload(repo);
    const command = agent === 'cursor' ? hookCommands(repo, agent)[event] : toolHookCommand(repo, agent, event, String(body.tool_name));
    expect(command, `${agent} has no hermesd ${event} hook`).toBeDefined();
    // Each agent's own way to name the project in the command (Gemini CLI replaces the variable before it runs it).
    const r = await runHook(t, agent === 'gemini' ? geminiExpand(command!, repo) : command!, { cwd: repo, payload: body, env: { CLAUDE_PROJECT_DIR: repo } });
    expect(r.code, `${agent} ${event}: exit ${r.code}, stderr ${r.stderr}`).toBe(0);
    const reason = reasonIn(r.stdout);
    expect(reason).toMatch(/rule/);
    expect(r.stdout, `${agent} ${event}: the daemon's refusal is not the table's bytes`).toBe(denyText(agent, event, reason));
  });

  it.each(CASES)('$agent $event: the C client writes the same bytes when no daemon can start', ({ agent, event, payload }) => {
    const rt = join(scratch, `rt-c-${agent}-${event}`);
    mkdirSync(rt, { recursive: true });
    const client = clientPath(join(repo, '.git'));
    const r = spawnSync(
      client,
      ['-r', rt, '-w', repo, '-t', '3000', '-x', '-u', 'block', '-c', '2', '-n', `${badNode}\tx`, '-d', '/nonexistent', agent, event],
      {
        input: JSON.stringify(payload(repo)),
        encoding: 'utf8',
        env: t.env,
      },
    );
    expect(r.status, `${agent} ${event}: the client exited ${r.status}: ${r.stderr}`).toBe(0);
    const reason = reasonIn(r.stdout);
    expect(reason, 'the fault does not name the node that could not run').toContain(`${badNode}\tx`);
    expect(r.stdout, `${agent} ${event}: the C client's refusal is not the table's bytes`).toBe(denyText(agent, event, reason));
  });

  it.each(CASES)('$agent $event: the curl runner writes the same bytes when no daemon can start', ({ agent, event, payload }) => {
    const gd = join(scratch, `gd-sh-${agent}-${event}`);
    mkdirSync(join(gd, 'hermesd'), { recursive: true });
    const runner = join(gd, 'hermesd', 'agent-hook');
    // No client here (the curl path), and a node that cannot run.
    writeFileSync(runner, agentRunnerScript({ nodePath: badNode, cliPath: '/nonexistent', commonDir: gd, timeoutMs: 1000, onUnavailable: 'block' }));
    chmodSync(runner, 0o755);
    const r = spawnSync('sh', [runner, agent, event], {
      input: JSON.stringify(payload(repo)),
      encoding: 'utf8',
      cwd: repo,
      env: { ...t.env, hermesd_root: repo, hermesd_gd: gd },
    });
    expect(r.status, `${agent} ${event}: the curl runner exited ${r.status}: ${r.stderr}`).toBe(0);
    const reason = reasonIn(r.stdout);
    expect(reason, 'the fault does not say no daemon could start').toMatch(/could not be started|none could start|no daemon/);
    expect(r.stdout, `${agent} ${event}: the curl runner's refusal is not the table's bytes`).toBe(denyText(agent, event, reason));
  });
});
