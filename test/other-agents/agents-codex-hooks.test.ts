/**
 * Codex CLI's hooks, through the commands `hermesd init --agents codex` wrote into
 * `.codex/hooks.json` (and its MCP server into `.codex/config.toml`, comments kept), run as
 * Codex runs them: in the session's directory (here a subdirectory; the command finds the
 * root with git), payloads shaped as Codex's generated input schemas and docs give them.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { denied, rewritten, hookCommands, runHook, toolHookCommand, transcripts, until } from '../helpers/agents.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'agents');

const USER_TOML = `# Codex settings for this project
model = "gpt-5.5"   # the team's default

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
`;

describe('Codex hooks written by hermesd init --agents codex', () => {
  let t: TestEnv;
  let repo: string;
  let sub: string;
  let cmd: Record<string, string>;
  const base = () => ({
    session_id: '019b64e5-57fa-7463-b644-fba7e456f905',
    turn_id: '1',
    transcript_path: null as string | null,
    cwd: sub,
    model: 'gpt-5.5',
    permission_mode: 'default',
  });
  const pre = (tool_name: string, command: string) =>
    runHook(t, toolHookCommand(repo, 'codex', 'PreToolUse', tool_name), {
      cwd: sub,
      payload: { ...base(), hook_event_name: 'PreToolUse', tool_name, tool_input: { command }, tool_use_id: 'call_abc' },
    });

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({
      '.hermes/config.yaml':
        'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n',
      'src/generated/api.ts': 'export const api = 1;\n',
      'src/app.ts': 'export const app = 1;\n',
      '.codex/config.toml': USER_TOML,
    });
    sub = join(repo, 'src');
    const init = await t.cli(['init', '--agents', 'codex'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    cmd = hookCommands(repo, 'codex');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('writes hooks.json with the documented shape and registers [mcp_servers.hermesd] after the user TOML, unchanged', () => {
    const hooks = JSON.parse(readFileSync(join(repo, '.codex/hooks.json'), 'utf8'));
    expect(Object.keys(hooks)).toEqual(['hooks']);
    expect(Object.keys(hooks.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd']);
    expect(hooks.hooks.PreToolUse.map((g: { matcher: string }) => g.matcher)).toEqual(['^Bash$', '^apply_patch$']);
    // After a call only the shell's has work (what it changed of protected files is put back): no hook run after a patch.
    expect(hooks.hooks.PostToolUse.map((g: { matcher: string }) => g.matcher)).toEqual(['^Bash$']);
    expect(hooks.hooks.SessionEnd[0].hooks[0].timeout).toBeLessThanOrEqual(3);
    const toml = readFileSync(join(repo, '.codex/config.toml'), 'utf8');
    // The user's TOML unchanged, after the block of top-level keys (Codex's default_permissions: agents-codex-permission-profile.test.ts).
    expect(toml.slice(toml.indexOf('# <<< hermesd, top-level keys <<<\n\n') + '# <<< hermesd, top-level keys <<<\n\n'.length).startsWith(USER_TOML)).toBe(true);
    const parsed = parse(toml) as any;
    expect(parsed.model).toBe('gpt-5.5');
    expect(parsed.mcp_servers.docs).toEqual({ command: 'npx', args: ['-y', 'docs-mcp'] });
    // The committed stub at the root git names (Codex starts servers in the session's directory);
    // Codex passes a stdio server only the variables it lists: hermesd's own are named, never their values.
    // The stub found by walking up with builtins (no git process on the session's way to its first request).
    expect(parsed.mcp_servers.hermesd).toEqual({
      command: 'sh',
      args: [
        '-c',
        'd=$PWD; until [ -f "$d/.hermes/mcp" ]; do [ -n "$d" ] || { echo "hermesd: no .hermes/mcp in $PWD or above it: hermesd\'s MCP server is not in this repository" >&2; exit 1; }; d=${d%/*}; done; exec sh "$d/.hermes/mcp"',
      ],
      env_vars: ['HERMES_HOME', 'HERMESD_SOCKET_DIR'],
    });
  });

  it('refuses an apply_patch that touches a protected path (permissionDecision "deny", the rule as the reason)', async () => {
    const patch = '*** Begin Patch\n*** Update File: generated/api.ts\n@@\n-export const api = 1;\n+export const api = 2;\n*** End Patch\n';
    const r = await pre('apply_patch', patch);
    const reason = denied('codex', r);
    expect(reason, JSON.stringify(r)).toContain('src/generated/api.ts');
    expect(reason).toContain('repository rule "generated-files"');
    const moved = await pre('apply_patch', '*** Begin Patch\n*** Update File: app.ts\n*** Move to: generated/app.ts\n@@\n-1\n+2\n*** End Patch\n');
    expect(denied('codex', moved)).toBeDefined();
    const ok = await pre('apply_patch', '*** Begin Patch\n*** Add File: new.ts\n+export const n = 1;\n*** End Patch\n');
    expect(ok).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('judges Bash commands by the git policy and the files they write; allowed ones print nothing', async () => {
    expect(denied('codex', await pre('Bash', 'git push --force-with-lease origin main'))).toBeDefined();
    expect(denied('codex', await pre('Bash', 'git commit -n -m wip'))).toContain('guard.gitPolicy.noVerify');
    expect(denied('codex', await pre('Bash', 'printf x | tee generated/api.ts'))).toBeDefined();
    // Allowed: given back to run confined (permissionDecision "allow" with updatedInput, as Codex 0.171 takes a rewrite).
    for (const c of ['npm test', 'git status', 'ls generated', 'cat app.ts']) expect(rewritten('codex', await pre('Bash', c))).toContain(c);
  });

  it('answers SessionStart with exactly hookEventName and additionalContext (Codex rejects unknown keys)', async () => {
    await t.cli(['memory', 'add', 'Codex sessions use the staging database.'], { cwd: repo });
    const r = await runHook(t, cmd.SessionStart!, { cwd: sub, payload: { ...base(), hook_event_name: 'SessionStart', source: 'startup' } });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(Object.keys(out.hookSpecificOutput).sort()).toEqual(['additionalContext', 'hookEventName']);
    expect(out.hookSpecificOutput.additionalContext).toContain('staging database');
    // Stop takes JSON or nothing: nothing.
    const stop = await runHook(t, cmd.Stop!, {
      cwd: sub,
      payload: { ...base(), hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' },
    });
    expect(stop).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('ingests a Codex rollout (public fixture): messages, function and custom tool calls, nothing twice; malformed lines counted', async () => {
    const dir = join(t.home, '..', 'codex-sessions');
    mkdirSync(dir, { recursive: true });
    const rollout = join(dir, 'rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl');
    copyFileSync(join(FIXTURES, 'codex-rollout-11111111.jsonl'), rollout);
    const post = () =>
      runHook(t, cmd.PostToolUse!, {
        cwd: sub,
        payload: {
          ...base(),
          transcript_path: rollout,
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_input: { command: 'ls' },
          tool_response: 'ok',
          tool_use_id: 'call_1',
        },
      });
    expect(await post()).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === rollout && e.stored > 0),
      )
    ).find((e) => e.path === rollout)!;
    await post();
    await runHook(t, cmd.SessionEnd!, {
      cwd: sub,
      payload: { session_id: 'thr_123', transcript_path: rollout, cwd: sub, hook_event_name: 'SessionEnd', reason: 'other' },
    });
    const show = await until(
      async () => (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json(),
      (s) => s.session.endReason === 'other',
    );
    expect(show.session.source).toBe('codex');
    expect(show.session.model).toBe('synthetic-model');
    expect(show.messages.map((m: any) => [m.role, m.content, m.toolCalls?.[0]?.function?.name ?? null])).toEqual([
      ['user', 'List the synthetic files.', null],
      ['assistant', '', 'exec_command'],
      ['tool', './alpha.txt\n./beta.txt', null],
      ['assistant', '', 'apply_patch'],
      ['tool', 'Done!', null],
      ['assistant', '', 'mcp__synthetic__lookup'],
      ['tool', '{"status":"ok"}', null],
      ['assistant', 'The synthetic files are alpha.txt and beta.txt.', null],
    ]);
    expect(show.messages[2].toolName).toBe('exec_command');

    const bad = join(dir, 'rollout-66666666.jsonl');
    copyFileSync(join(FIXTURES, 'codex-rollout-66666666-malformed.jsonl'), bad);
    await runHook(t, cmd.Stop!, { cwd: sub, payload: { ...base(), transcript_path: bad, hook_event_name: 'Stop', stop_hook_active: false } });
    const badRow = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === bad && e.lines === 3),
      )
    ).find((e) => e.path === bad)!;
    expect(badRow.skipped).toBe(1);
  });

  it('ingests the real Codex 0.77 session head without the instructions Codex injects as user messages', async () => {
    const real = join(t.home, '..', 'codex-sessions', 'rollout-019b64e5.jsonl');
    copyFileSync(join(FIXTURES, 'codex-sample_codex_session.jsonl'), real);
    await runHook(t, cmd.Stop!, { cwd: sub, payload: { ...base(), transcript_path: real, hook_event_name: 'Stop', stop_hook_active: false } });
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === real && e.offset > 0),
      )
    ).find((e) => e.path === real)!;
    const show = (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json();
    const users = show.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content);
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((u: string) => !u.includes('<environment_context>') && !u.startsWith('# AGENTS.md instructions'))).toBe(true);
    expect(users[0]).toContain('analyse the MD files');
  });
});
