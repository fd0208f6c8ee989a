/**
 * Gemini CLI's hooks, through the commands `hermesd init --agents gemini` wrote into
 * `.gemini/settings.json` (comments of the user's kept), run as Gemini runs them: the
 * command with $GEMINI_PROJECT_DIR replaced by the shell-quoted session directory, the
 * variables it sets, payloads as gemini-cli/docs/hooks/reference.md gives them. Gemini refuses a tool
 * call on any non-zero exit but 1 that prints text, so hermesd's exits are 0 or 2 only.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { denied, rewritten, geminiExpand, hookCommands, runHook, toolHookCommand, transcripts, until } from '../helpers/agents.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'agents');

const USER_SETTINGS = `{
  // Team settings for Gemini CLI
  "general": { "vimMode": true },
  /* tools the agent may use without asking */
  "tools": { "allowed": ["run_shell_command(git status)"] }
}
`;

describe('Gemini CLI hooks written by hermesd init --agents gemini', () => {
  let t: TestEnv;
  let repo: string;
  let cmd: Record<string, string>;
  let chats: string;
  const base = () => ({
    session_id: '5f2a7c1e-3b4d-4e6f-8a9b-0c1d2e3f4a5b',
    transcript_path: join(chats, 'session-2026-08-06T10-00-5f2a7c1e.jsonl'),
    cwd: repo,
    timestamp: '2026-08-06T10:00:00.000Z',
  });
  const hook = (event: string, payload: Record<string, unknown>) =>
    runHook(
      t,
      geminiExpand(typeof payload.tool_name === 'string' ? toolHookCommand(repo, 'gemini', event, payload.tool_name, cmd[event]!) : cmd[event]!, repo),
      {
        cwd: repo,
        env: { GEMINI_PROJECT_DIR: repo, GEMINI_CWD: repo, GEMINI_SESSION_ID: base().session_id, CLAUDE_PROJECT_DIR: repo },
        payload: { ...base(), hook_event_name: event, ...payload },
      },
    );

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({
      '.hermes/config.yaml':
        'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n',
      'src/generated/api.ts': 'export const api = 1;\n',
      '.gemini/settings.json': USER_SETTINGS,
    });
    chats = join(t.home, '..', 'gemini-tmp', 'chats');
    mkdirSync(chats, { recursive: true });
    const init = await t.cli(['init', '--agents', 'gemini'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    cmd = hookCommands(repo, 'gemini');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("merges into the user's commented settings: hooks with a name and a timeout in milliseconds, mcpServers.hermesd", () => {
    const text = readFileSync(join(repo, '.gemini/settings.json'), 'utf8');
    expect(
      text.startsWith(
        '{\n  // Team settings for Gemini CLI\n  "general": { "vimMode": true },\n  /* tools the agent may use without asking */\n  "tools": { "allowed": ["run_shell_command(git status)"] },\n',
      ),
    ).toBe(true);
    const json = JSON.parse(text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, ''));
    expect(Object.keys(json.hooks)).toEqual(['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd']);
    // After a call only the shell's has work: no hook run after a read or a write.
    expect(json.hooks.AfterTool.map((g: { matcher: string }) => g.matcher)).toEqual(['run_shell_command']);
    // Shell commands and reads (small payloads) in one entry, read by the shell; writes (a file's content) in another, read by cat.
    expect(json.hooks.BeforeTool).toEqual([
      {
        matcher: 'run_shell_command|read_file|read_many_files',
        hooks: [
          {
            name: 'hermesd',
            type: 'command',
            command:
              'set -- gemini BeforeTool small; hermesd_root=$GEMINI_PROJECT_DIR; if [ -f $GEMINI_PROJECT_DIR/.hermes/agent-hook ]; then . $GEMINI_PROJECT_DIR/.hermes/agent-hook; elif [ -f $GEMINI_PROJECT_DIR/.git/hermesd/agent-hook ]; then hermesd_gd=$GEMINI_PROJECT_DIR/.git; . $GEMINI_PROJECT_DIR/.git/hermesd/agent-hook; fi',
            timeout: 30000,
          },
        ],
      },
      {
        matcher: 'write_file|replace',
        hooks: [
          {
            name: 'hermesd',
            type: 'command',
            command:
              'set -- gemini BeforeTool; hermesd_root=$GEMINI_PROJECT_DIR; if [ -f $GEMINI_PROJECT_DIR/.hermes/agent-hook ]; then . $GEMINI_PROJECT_DIR/.hermes/agent-hook; elif [ -f $GEMINI_PROJECT_DIR/.git/hermesd/agent-hook ]; then hermesd_gd=$GEMINI_PROJECT_DIR/.git; . $GEMINI_PROJECT_DIR/.git/hermesd/agent-hook; fi',
            timeout: 30000,
          },
        ],
      },
    ]);
    // Gemini CLI reads these settings in the directory it runs in and starts servers there.
    expect(json.mcpServers.hermesd).toEqual({ command: 'sh', args: ['.hermes/mcp'] });
  });

  it('refuses with exit 0 and {"decision": "deny", "reason"} (no "hook failed" warning); allows with exit 0 and no output', async () => {
    const w = await hook('BeforeTool', { tool_name: 'write_file', tool_input: { file_path: 'src/generated/api.ts', content: 'x' } });
    expect(denied('gemini', w), JSON.stringify(w)).toContain('repository rule "generated-files"');
    const r = await hook('BeforeTool', {
      tool_name: 'replace',
      tool_input: { file_path: join(repo, 'src/generated/api.ts'), old_string: '1', new_string: '2', instruction: 'bump' },
    });
    expect(denied('gemini', r)).toBeDefined();
    const sh = await hook('BeforeTool', {
      tool_name: 'run_shell_command',
      tool_input: { command: 'echo 2 > api.ts', description: 'overwrite', dir_path: 'src/generated' },
    });
    expect(denied('gemini', sh)).toContain('src/generated/api.ts');
    const env = await hook('BeforeTool', { tool_name: 'read_many_files', tool_input: { include: ['.env', 'src/**/*.ts'] } });
    expect(denied('gemini', env)).toContain('(hermesd rule: secret-file)');
    for (const [tool_name, tool_input] of [
      ['run_shell_command', { command: 'git status', description: 'status' }],
      ['read_file', { file_path: 'src/generated/api.ts' }],
      ['write_file', { file_path: 'src/app.ts', content: 'ok' }],
      ['glob', { pattern: '**/*.ts' }],
    ] as const) {
      const ok = await hook('BeforeTool', { tool_name, tool_input });
      // A shell command comes back to run confined (bubblewrap, protected paths read-only); every other call gets no answer.
      if (tool_name === 'run_shell_command') expect(rewritten('gemini', ok), JSON.stringify(ok)).toContain(tool_input.command);
      else expect({ tool_name, code: ok.code, stdout: ok.stdout, stderr: ok.stderr }).toEqual({ tool_name, code: 0, stdout: '', stderr: '' });
    }
  });

  it('hands out context at SessionStart and recall at BeforeAgent as hookSpecificOutput.additionalContext', async () => {
    await t.cli(['memory', 'add', 'Backoff helpers live in src/net.'], { cwd: repo });
    const s = await hook('SessionStart', { source: 'startup' });
    const out = JSON.parse(s.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out.hookSpecificOutput.additionalContext).toContain('Backoff helpers live in src/net.');
    const none = await hook('BeforeAgent', { prompt: 'zzqx nothing matches this' });
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('ingests the chat recording: re-appended records once, tool results, $set lines; a malformed line counted', async () => {
    const file = base().transcript_path;
    copyFileSync(join(FIXTURES, 'gemini-session.jsonl'), file);
    await hook('AfterTool', { tool_name: 'grep_search', tool_input: { pattern: 'retryFlaky' }, tool_response: { llmContent: 'x', returnDisplay: '1 match' } });
    await hook('AfterAgent', { prompt: 'Rename', prompt_response: 'done', stop_hook_active: false });
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === file && e.lines === 8),
      )
    ).find((e) => e.path === file)!;
    expect(row.skipped).toBe(1);
    const show = (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json();
    expect(show.session.source).toBe('gemini');
    expect(show.session.model).toBe('gemini-2.5-pro');
    expect(show.messages.map((m: any) => [m.role, m.content, m.toolCalls?.[0]?.function?.name ?? m.toolName ?? null])).toEqual([
      ['user', 'Rename the flaky retry helper and update its callers', null],
      ['assistant', 'I will look for the helper first.', null],
      ['assistant', '', 'grep_search'],
      ['tool', 'src/net/retry.ts:12: export function retryFlaky(', 'grep_search'],
      ['assistant', 'The helper is in src/net/retry.ts; renaming it to retryWithBackoff.', null],
    ]);
    // Recall in a later session finds what Gemini did.
    const recall = await hook('BeforeAgent', { session_id: 'other', transcript_path: join(chats, 'other.jsonl'), prompt: 'where is retryWithBackoff' });
    expect(JSON.parse(recall.stdout).hookSpecificOutput.additionalContext).toContain('retryWithBackoff');
    await hook('SessionEnd', { reason: 'exit' });
    await until(
      async () => (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json().session,
      (s) => s.endReason === 'exit',
    );
  });
});
