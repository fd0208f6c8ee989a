/**
 * Claude Code's hooks, through the commands `hermesd init --agents claude` wrote into
 * `.claude/settings.json`, run as Claude Code runs them (`sh -c`, CLAUDE_PROJECT_DIR set,
 * the payload on stdin, shaped as code.claude.com/docs/en/hooks documents it), against a
 * real daemon (started by the first hook, through the Node fallback).
 */
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { confinement, denied, rewritten, hookCommands, runHook, toolHookCommand, transcripts, until } from '../helpers/agents.js';
import { skillMd } from '../helpers/skills.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'agents');

describe('Claude Code hooks written by hermesd init --agents claude', () => {
  let t: TestEnv;
  let repo: string;
  let cmd: Record<string, string>;
  let home: string;
  const env = () => ({ CLAUDE_PROJECT_DIR: repo });
  const base = () => ({ session_id: 'cc-session-1', transcript_path: join(home, 'cc-session-1.jsonl'), cwd: repo, permission_mode: 'default' });
  const pre = (tool_name: string, tool_input: Record<string, unknown>, cwd = repo) =>
    runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', tool_name), {
      cwd,
      env: env(),
      payload: { ...base(), cwd, hook_event_name: 'PreToolUse', tool_name, tool_input, tool_use_id: 'toolu_01ABC' },
    });

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({
      'README.md': '# app\n',
      '.gitignore': '*.log\n',
      '.env.example': 'API_TOKEN=changeme\n',
      '.hermes/config.yaml': [
        'rules:',
        '  - id: generated-files',
        '    message: Do not edit generated files directly; change the schema and run `npm run gen`.',
        '    protect: ["src/generated/**"]',
        '',
      ].join('\n'),
      'src/generated/api.ts': 'export const api = 1;\n',
      'src/app.ts': 'export const app = 1;\n',
      'notebooks/gen/report.ipynb': '{}\n',
      '.claude/settings.json': '{\n\t"permissions": {\n\t\t"allow": ["Bash(npm test)"]\n\t}\n}\n',
      '.hermes/skills/release/SKILL.md': skillMd('release', 'Cut a release (bump, changelog, tag).'),
    });
    writeFileSync(join(repo, '.env'), 'API_TOKEN=ghp_realLookingButFake000000000000000000000\n');
    writeFileSync(join(repo, 'debug.log'), 'ignored\n');
    home = join(t.home, '..', 'claude-projects');
    mkdirSync(home, { recursive: true });
    const init = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('.claude/settings.json');
    cmd = hookCommands(repo, 'claude');
    expect(Object.keys(cmd).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionEnd', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    // After a call only the shell's has work (what it changed of protected files is put back): no hook run after a read or a write.
    expect(JSON.parse(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).hooks.PostToolUse.map((g: { matcher?: string }) => g.matcher)).toEqual([
      'Bash',
    ]);
    const mem = await t.cli(['memory', 'add', 'Releases are cut from the main branch only.'], { cwd: repo });
    expect(mem.code, mem.stderr).toBe(0);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('keeps the user settings and registers the MCP server in .mcp.json', () => {
    const settings = JSON.parse(readFileSync(join(repo, '.claude/settings.json'), 'utf8'));
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(
      readFileSync(join(repo, '.claude/settings.json'), 'utf8').startsWith('{\n\t"permissions": {\n\t\t"allow": ["Bash(npm test)"]\n\t},\n\t"hooks": {'),
    ).toBe(true);
    const mcp = JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8'));
    // The committed stub, found from the project directory; hermesd's variables forwarded by Claude Code's own expansion.
    expect(mcp.mcpServers.hermesd).toEqual({
      type: 'stdio',
      command: 'sh',
      args: ['${CLAUDE_PROJECT_DIR:-.}/.hermes/mcp'],
      env: { HERMES_HOME: '${HERMES_HOME:-}', HERMESD_SOCKET_DIR: '${HERMESD_SOCKET_DIR:-}' },
    });
  });

  it('refuses writes, edits, multi-edits and notebook edits of protected paths with permissionDecision "deny" and the rule as the reason (exit 0)', async () => {
    const gen = join(repo, 'src/generated/api.ts');
    for (const [tool, input] of [
      ['Write', { file_path: gen, content: 'x' }],
      ['Edit', { file_path: gen, old_string: 'api = 1', new_string: 'api = 2' }],
      ['MultiEdit', { file_path: gen, edits: [{ old_string: '1', new_string: '2' }] }],
    ] as const) {
      const r = await pre(tool, input);
      const reason = denied('claude', r);
      expect(reason, `${tool}: ${JSON.stringify(r)}`).toBeDefined();
      expect(reason).toContain('src/generated/api.ts');
      expect(reason).toContain('repository rule "generated-files"');
      expect(reason).toContain('change the schema and run `npm run gen`');
    }
    const cfg = readFileSync(join(repo, '.hermes/config.yaml'), 'utf8');
    writeFileSync(
      join(repo, '.hermes/config.yaml'),
      cfg + '  - id: notebooks\n    message: Notebooks are generated by make report.\n    protect: ["notebooks/gen/**"]\n',
    );
    const nb = await until(
      () => pre('NotebookEdit', { notebook_path: join(repo, 'notebooks/gen/report.ipynb'), new_source: 'print(1)', cell_id: 'a', edit_mode: 'replace' }),
      (r) => denied('claude', r) !== undefined,
    );
    expect(denied('claude', nb)).toContain('rule "notebooks"');
    writeFileSync(join(repo, '.hermes/config.yaml'), cfg);
  });

  it('lets allowed calls through silently: exit 0, nothing on stdout or stderr (never an explicit allow); a shell command comes back confined', async () => {
    for (const [tool, input] of [
      ['Write', { file_path: join(repo, 'src/app.ts'), content: 'export const app = 2;\n' }],
      ['Edit', { file_path: join(repo, 'src/app.ts'), old_string: '1', new_string: '2' }],
      ['Read', { file_path: join(repo, 'src/app.ts') }],
    ] as const) {
      const r = await pre(tool, input);
      expect({ tool, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ tool, code: 0, stdout: '', stderr: '' });
    }
    for (const input of [
      { command: 'npm test', description: 'Run test suite', timeout: 120000, run_in_background: false },
      { command: 'git commit -m "feat: x"' },
      { command: 'git push origin main' },
    ]) {
      const r = await pre('Bash', input);
      // updatedInput with the other fields kept and no permissionDecision: the user's permission rules still decide.
      const out = JSON.parse(r.stdout).hookSpecificOutput;
      expect(Object.keys(out).sort()).toEqual(['hookEventName', 'updatedInput']);
      expect({ ...out.updatedInput, command: input.command }).toEqual(input);
      expect(confinement(rewritten('claude', r))).toMatchObject({ command: input.command, script: expect.stringMatching(/--ro-bind[\s\S]*\/bwrap' "\$@"/) });
    }
  });

  it('refuses git commands that bypass hooks, force-push or stage ignored files, and shell writes to protected paths', async () => {
    const cases: Array<[string, string]> = [
      ['git commit --no-verify -m wip', 'guard.gitPolicy.noVerify'],
      ['HERMESD_SKIP=1 git commit -m wip', 'HERMESD_SKIP'],
      ['git -c core.hooksPath=/dev/null commit -m wip', 'core.hookspath'],
      ['git push --force origin main', 'overwrites commits on the remote'],
      ['git push origin +main', 'force-pushes'],
      ['git add -f debug.log', 'would stage ignored files (debug.log)'],
      ['echo "export const api = 2" > src/generated/api.ts', 'would write src/generated/api.ts'],
      ['cd src && sed -i "s/1/2/" generated/api.ts', 'would write src/generated/api.ts'],
      ['rm -rf src/generated', 'would delete src/generated'],
      ['sh -c "cp /tmp/x src/generated/api.ts"', 'would write src/generated/api.ts'],
      ['git checkout HEAD~1 -- src/generated/api.ts', 'src/generated/api.ts'],
    ];
    for (const [command, needle] of cases) {
      const r = await pre('Bash', { command });
      const reason = denied('claude', r);
      expect(reason, `${command}: ${JSON.stringify(r)}`).toBeDefined();
      expect(reason!.toLowerCase()).toContain(needle.toLowerCase());
    }
  });

  it('refuses reading secret files, with Read, Grep and the shell alike', async () => {
    for (const [tool, input] of [
      ['Read', { file_path: join(repo, '.env') }],
      ['Grep', { pattern: 'TOKEN', path: join(repo, '.env') }],
      ['Bash', { command: 'cat .env' }],
      ['Bash', { command: 'grep TOKEN .env | head -1' }],
    ] as const) {
      const r = await pre(tool, input);
      const reason = denied('claude', r);
      expect(reason, `${tool} ${JSON.stringify(input)}: ${JSON.stringify(r)}`).toBeDefined();
      expect(reason).toContain('.env is a secret file');
      expect(reason).toContain('.env.example');
      expect(reason).toContain('(hermesd rule: secret-file)');
    }
  });

  it('hands out the memory snapshot and the skill index at SessionStart', async () => {
    const r = await runHook(t, cmd.SessionStart!, {
      cwd: repo,
      env: env(),
      payload: { ...base(), hook_event_name: 'SessionStart', source: 'startup', model: 'claude-sonnet-5' },
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out.hookSpecificOutput.additionalContext).toContain('Releases are cut from the main branch only.');
    expect(out.hookSpecificOutput.additionalContext).toContain('release');
    expect(out.hookSpecificOutput.additionalContext).toContain('Cut a release (bump, changelog, tag).');
    expect(out.hookSpecificOutput.additionalContext.length).toBeLessThanOrEqual(10_000);
  });

  it('ingests the transcript incrementally after shell calls and at Stop, finds it with sessions search, and stores nothing twice', async () => {
    const transcript = base().transcript_path;
    const lines = readFileSync(join(FIXTURES, 'claude-sample_session.jsonl'), 'utf8').split('\n').filter(Boolean);
    // Claude writes the transcript as it goes: half of it, then a line cut in the middle.
    writeFileSync(transcript, lines.slice(0, 4).join('\n') + '\n' + lines[4]!.slice(0, 20));
    const post = () =>
      runHook(t, cmd.PostToolUse!, {
        cwd: repo,
        env: env(),
        payload: {
          ...base(),
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_input: { command: 'npm test' },
          tool_response: { stdout: 'ok', stderr: '', interrupted: false },
          tool_use_id: 'toolu_01',
          duration_ms: 12,
        },
      });
    const r1 = await post();
    expect(r1).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const first = await until(
      () => transcripts(t, repo),
      (x) => x.some((e) => e.path === transcript && e.stored === 3),
    );
    const row = first.find((e) => e.path === transcript)!;
    expect(row.agent).toBe('claude');
    // The rest arrives; Stop reads on from where the last read stopped.
    writeFileSync(transcript, lines.join('\n') + '\n');
    const stop = await runHook(t, cmd.Stop!, {
      cwd: repo,
      env: env(),
      payload: { ...base(), hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'Done!' },
    });
    expect(stop).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await until(
      () => transcripts(t, repo),
      (x) => x.some((e) => e.path === transcript && e.offset === Buffer.byteLength(lines.join('\n') + '\n')),
    );
    // Once more, and after a restart: nothing new, nothing twice.
    await post();
    await t.cli(['restart'], { cwd: repo });
    await post();
    const after = await until(
      () => transcripts(t, repo),
      (x) => x.some((e) => e.path === transcript),
    );
    const show = (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json();
    expect(show.session.source).toBe('claude-code');
    expect(show.session.repo).toBe(repo);
    expect(show.messages.map((m: { role: string; content: string }) => `${m.role}:${m.content}`)).toEqual([
      'user:Create a hello world function',
      "assistant:I'll create that function for you.",
      'tool:File written successfully',
      'assistant:',
      'tool:[main abc1234] Add hello function\n 1 file changed',
      'user:Now add a goodbye function',
      'assistant:Done! The hello function is ready.',
    ]);
    expect(after.find((e) => e.path === transcript)!.stored).toBe(7);
    const found = (await t.cli(['sessions', 'search', 'goodbye', '--json'], { cwd: repo })).json();
    expect(found.results.some((h: { sessionId: string; source: string }) => h.sessionId === row.sessionId && h.source === 'claude-code')).toBe(true);
    // SessionEnd closes the session.
    await runHook(t, cmd.SessionEnd!, { cwd: repo, env: env(), payload: { ...base(), hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' } });
    const ended = await until(
      async () => (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json().session,
      (s) => s.endReason === 'prompt_input_exit',
    );
    expect(ended.endedAt).toBeTruthy();
  });

  it('counts malformed transcript lines and skips them (public edge-case fixture)', async () => {
    const transcript = join(home, 'edge.jsonl');
    copyFileSync(join(FIXTURES, 'claude-edge_cases.jsonl'), transcript);
    await runHook(t, cmd.Stop!, {
      cwd: repo,
      env: env(),
      payload: { ...base(), session_id: 'edge', transcript_path: transcript, hook_event_name: 'Stop', stop_hook_active: false },
    });
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === transcript),
      )
    ).find((e) => e.path === transcript)!;
    // "massive error", 42 and [1] are not records; a user record's message is "error", another's has "contenst" for "content";
    // {"silly": "this"} and a summary are records hermesd has no use for (not malformed).
    expect(row.skipped).toBe(5);
    expect(row.stored).toBeGreaterThan(10);
    appendFileSync(transcript, 'not json at all\n');
    await runHook(t, cmd.Stop!, {
      cwd: repo,
      env: env(),
      payload: { ...base(), session_id: 'edge', transcript_path: transcript, hook_event_name: 'Stop', stop_hook_active: false },
    });
    const again = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === transcript && e.skipped === 6),
      )
    ).find((e) => e.path === transcript)!;
    expect(again.stored).toBe(row.stored);
  });

  it('adds turn-only recall at UserPromptSubmit, fenced and labelled as evidence', async () => {
    const r = await runHook(t, cmd.UserPromptSubmit!, {
      cwd: repo,
      env: env(),
      payload: {
        ...base(),
        session_id: 'cc-session-2',
        transcript_path: join(home, 'cc-session-2.jsonl'),
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Add the goodbye function like last time',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const ctx = JSON.parse(r.stdout).hookSpecificOutput;
    expect(ctx.hookEventName).toBe('UserPromptSubmit');
    const { RECALL_OPEN, RECALL_CLOSE, RECALL_NOTICE } = await import('../../src/sessions/recall.js');
    expect(ctx.additionalContext.startsWith(`${RECALL_OPEN}\n${RECALL_NOTICE}\n`)).toBe(true);
    expect(ctx.additionalContext.endsWith(RECALL_CLOSE)).toBe(true);
    expect(ctx.additionalContext).toContain('goodbye');
    // Within the asking session, its own messages are not recalled.
    const own = await runHook(t, cmd.UserPromptSubmit!, {
      cwd: repo,
      env: env(),
      payload: { ...base(), hook_event_name: 'UserPromptSubmit', prompt: 'goodbye' },
    });
    expect(own).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('judges a call made from a subdirectory and a symlinked path the same way', async () => {
    mkdirSync(join(repo, 'src/sub'), { recursive: true });
    const r = await pre('Bash', { command: 'echo x > ../generated/api.ts' }, join(repo, 'src/sub'));
    expect(denied('claude', r), JSON.stringify(r)).toContain('src/generated/api.ts');
    gitIn(t, repo, 'status');
  });

  it('reads a transcript after tool calls once they pause, and before the daemon stops: nothing is lost to the wait', async () => {
    const transcript = join(home, 'deferred.jsonl');
    copyFileSync(join(FIXTURES, 'claude-sample_session.jsonl'), transcript);
    const payload = {
      ...base(),
      session_id: 'deferred',
      transcript_path: transcript,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: {},
      tool_use_id: 'toolu_d1',
    };
    expect((await runHook(t, cmd.PostToolUse!, { cwd: repo, env: env(), payload })).code).toBe(0);
    // Stopped at once, inside the pause the read waits for: the daemon reads it on its way out.
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const rows = await transcripts(t, repo);
    expect(rows.find((e) => e.path === transcript)?.stored).toBe(7);
  });
});
