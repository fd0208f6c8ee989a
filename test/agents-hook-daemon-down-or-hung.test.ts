/**
 * An agent's hook when the daemon cannot answer: down (the Node fallback starts it and
 * judges), stopped with SIGSTOP (the hook answers within agents.timeoutMs and applies
 * agents.onUnavailable: the call goes on, or with "block" is refused), killed with its
 * socket left behind. The hook exits 0 or 2 and nothing else (Gemini CLI refuses a call on
 * any other non-zero exit).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive, makeEnv, REPO_ROOT, waitFor, type TestEnv } from './helpers/env.js';
import { denied, hookCommands, runHook, toolHookCommand } from './helpers/agents.js';

const CONFIG = (extra = '') =>
  'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n' + extra;

describe('agent hooks when the daemon is down, hung or gone', () => {
  let t: TestEnv;
  let repo: string;
  let cmd: Record<string, string>;
  let stopped: number | undefined;
  const write = (file: string) => ({ session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, file), content: 'x' } });
  const pre = (file: string) => runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo }, payload: write(file) });

  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': CONFIG('agents:\n  timeoutMs: 800\n'), 'src/generated/api.ts': 'x\n', '.claude/settings.json': '{}\n' });
    expect((await t.cli(['init', '--agents'], { cwd: repo })).code).toBe(0);
    cmd = hookCommands(repo, 'claude');
  });
  afterEach(async () => {
    if (stopped) process.kill(stopped, 'SIGCONT');
    stopped = undefined;
    await t.cleanup();
  });

  it('starts a daemon that is down (Node fallback) and judges the call', async () => {
    const status = await t.cli(['status', '--json'], { cwd: repo });
    expect(status.code).not.toBe(0);
    const r = await pre('src/generated/api.ts');
    expect(denied('claude', r), JSON.stringify(r)).toContain('generated-files');
    expect((await t.cli(['status', '--json'], { cwd: repo })).code).toBe(0);
  });

  it('answers within its bound when the daemon is stopped, letting the call through by default', async () => {
    await t.cli(['start'], { cwd: repo });
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    await pre('src/app.ts');
    process.kill(pid, 'SIGSTOP');
    stopped = pid;
    const r = await pre('src/generated/api.ts');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('did not answer within 800 ms');
    expect(r.stderr).toContain('not checked');
    // A bound with room for a loaded machine, and far below the agents' own timeouts.
    expect(r.ms).toBeLessThan(800 + 2_500);
    // The next call does not wait the whole bound again.
    const again = await pre('src/generated/api.ts');
    expect(again.stderr).toContain('did not answer within 500 ms');
    process.kill(pid, 'SIGCONT');
    stopped = undefined;
    // Once it answers again, the full bound is back and the call is judged.
    const judged = await pre('src/generated/api.ts');
    expect(denied('claude', judged), JSON.stringify(judged)).toBeDefined();
    expect(readFileSync(join(repo, '.git/hermesd/agent-settings'), 'utf8')).toContain('HERMESD_AGENT_TIMEOUT_MS=800');
  });

  it('refuses the call when agents.onUnavailable is "block"', async () => {
    writeFileSync(join(repo, '.hermes/config.yaml'), CONFIG('agents:\n  timeoutMs: 800\n  onUnavailable: block\n'));
    await t.cli(['start'], { cwd: repo });
    // The daemon takes the stricter setting at once and hands it to the sh runner.
    await waitFor(() => readFileSync(join(repo, '.git/hermesd/agent-settings'), 'utf8').includes('HERMESD_AGENT_ON_UNAVAILABLE=block'));
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    process.kill(pid, 'SIGSTOP');
    stopped = pid;
    const r = await pre('src/app.ts');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('agents.onUnavailable is "block"');
    // Not a tool call: nothing to refuse, the session goes on.
    const start = await runHook(t, cmd.SessionStart!, { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo }, payload: { session_id: 's1', cwd: repo, hook_event_name: 'SessionStart', source: 'startup' } });
    expect(start).toMatchObject({ code: 0, stdout: '' });
  });

  it('starts a new daemon when the answer broke off (the daemon died mid-answer), and lets that one call through', async () => {
    await t.cli(['start'], { cwd: repo });
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid));
    // curl as it ends when the connection is reset after the request went out: exit 56.
    const bin = join(dirname(t.home), 'reset-curl');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'curl'), '#!/bin/sh\nexit 56\n');
    chmodSync(join(bin, 'curl'), 0o755);
    const r = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, PATH: `${bin}:${process.env.PATH}` }, payload: write('src/generated/api.ts') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("the daemon's answer broke off (curl exit 56");
    // The fallback started a daemon before it answered: the next call is judged at once.
    expect((await t.cli(['status', '--json'], { cwd: repo })).code).toBe(0);
    const next = await pre('src/generated/api.ts');
    expect(denied('claude', next), JSON.stringify(next)).toContain('generated-files');
  });

  it('starts a new daemon when the old one was killed and left its socket, and exits 0 or 2 only', async () => {
    await t.cli(['start'], { cwd: repo });
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid));
    const r = await pre('src/generated/api.ts');
    expect([0, 2]).toContain(r.code);
    // The first call after the crash started a new daemon (its payload went to the dead socket); once it answers, calls are judged.
    const end = Date.now() + 20_000;
    while ((await t.cli(['status', '--json'], { cwd: repo })).code !== 0 && Date.now() < end) await new Promise((res) => setTimeout(res, 100));
    const next = await pre('src/generated/api.ts');
    expect(denied('claude', next), JSON.stringify(next)).toContain('generated-files');
  });

  it('does nothing in a clone where hermesd is not set up (the committed configs run the stub)', async () => {
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, '.hermes/agent-hook'), readFileSync(join(REPO_ROOT, 'hooks', 'hermesd-agent-stub.sh')));
    const r = await runHook(t, 'sh "$CLAUDE_PROJECT_DIR/.hermes/agent-hook" claude PreToolUse', { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo }, payload: write('src/generated/api.ts') });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });
});
