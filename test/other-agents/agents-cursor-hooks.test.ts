/**
 * Cursor's hooks, through the commands `hermesd init --agents cursor` wrote into
 * `.cursor/hooks.json` (flat, `version: 1`), run from the project root as Cursor runs
 * project hooks, payloads shaped as cursor.com/docs/hooks shows them. Cursor also runs
 * Claude Code's project hooks with its own payloads: the same call through both configs
 * gets the same answer, and a transcript read through both is stored once.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { hookCommands, runHook, toolHookCommand, transcripts, until } from '../helpers/agents.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'agents');

describe('Cursor hooks written by hermesd init --agents cursor', () => {
  let t: TestEnv;
  let repo: string;
  let cmd: Record<string, string>;
  let claudeCmd: Record<string, string>;
  let transcript: string;
  const common = () => ({
    conversation_id: 'c0nv-1',
    generation_id: 'gen-1',
    model: 'claude-sonnet-4-20250514',
    cursor_version: '2.1.32',
    workspace_roots: [repo],
    user_email: null,
    transcript_path: transcript,
  });
  const env = () => ({ CURSOR_PROJECT_DIR: repo, CLAUDE_PROJECT_DIR: repo, CURSOR_VERSION: '2.1.32' });
  const run = (command: string, payload: Record<string, unknown>) => runHook(t, command, { cwd: repo, env: env(), payload: { ...common(), ...payload } });

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({
      '.hermes/config.yaml':
        'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n',
      'src/generated/api.ts': 'export const api = 1;\n',
      '.cursor/rules/style.mdc': '---\ndescription: style\n---\nUse tabs.\n',
    });
    writeFileSync(join(repo, '.env'), 'DB_PASSWORD=s3cr3t-value-for-tests\n');
    const dir = join(t.home, '..', 'cursor-projects', 'agent-transcripts');
    mkdirSync(dir, { recursive: true });
    transcript = join(dir, 'c0nv-1.jsonl');
    const init = await t.cli(['init', '--agents', 'cursor,claude'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    cmd = hookCommands(repo, 'cursor');
    claudeCmd = hookCommands(repo, 'claude');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('writes the flat version-1 form, the events Cursor documents, and .cursor/mcp.json', () => {
    const hooks = JSON.parse(readFileSync(join(repo, '.cursor/hooks.json'), 'utf8'));
    expect(hooks.version).toBe(1);
    expect(Object.keys(hooks.hooks)).toEqual([
      'sessionStart',
      'beforeSubmitPrompt',
      'preToolUse',
      'beforeShellExecution',
      'afterShellExecution',
      'postToolUse',
      'beforeReadFile',
      'afterFileEdit',
      'stop',
      'sessionEnd',
    ]);
    expect(hooks.hooks.preToolUse[0]).toEqual({
      command:
        'if [ -f .hermes/agent-hook ]; then sh .hermes/agent-hook cursor preToolUse; elif [ -f .git/hermesd/agent-hook ]; then hermesd_root=. hermesd_gd=.git sh .git/hermesd/agent-hook cursor preToolUse; fi',
      timeout: 30,
    });
    const mcp = JSON.parse(readFileSync(join(repo, '.cursor/mcp.json'), 'utf8'));
    expect(mcp.mcpServers.hermesd).toEqual({ command: 'sh', args: ['${workspaceFolder}/.hermes/mcp'] });
  });

  it('denies in the documented JSON form (permission, user_message, agent_message) and answers {} otherwise', async () => {
    const w = await run(cmd.preToolUse!, {
      hook_event_name: 'preToolUse',
      tool_name: 'Write',
      tool_input: { file_path: join(repo, 'src/generated/api.ts') },
      tool_use_id: 'abc123',
      cwd: repo,
    });
    expect(w.code, w.stderr).toBe(0);
    const out = JSON.parse(w.stdout);
    expect(out.permission).toBe('deny');
    expect(out.agent_message).toContain('repository rule "generated-files"');
    expect(out.user_message).toContain('src/generated/api.ts');
    expect(out).not.toHaveProperty('continue');

    const shell = await run(cmd.beforeShellExecution!, {
      hook_event_name: 'beforeShellExecution',
      command: 'git push -f origin main',
      cwd: repo,
      sandbox: false,
    });
    expect(JSON.parse(shell.stdout)).toMatchObject({ permission: 'deny' });

    const read = await run(cmd.beforeReadFile!, {
      hook_event_name: 'beforeReadFile',
      file_path: join(repo, '.env'),
      content: 'DB_PASSWORD=…',
      attachments: [],
    });
    const readOut = JSON.parse(read.stdout);
    expect(readOut).toMatchObject({ permission: 'deny' });
    expect(readOut.user_message).toContain('.env is a secret file');

    const del = await run(cmd.preToolUse!, {
      hook_event_name: 'preToolUse',
      tool_name: 'Delete',
      tool_input: { file_path: join(repo, 'src/generated/api.ts') },
      tool_use_id: 'd1',
      cwd: repo,
    });
    expect(JSON.parse(del.stdout).permission).toBe('deny');

    for (const [command, payload] of [
      [
        cmd.preToolUse!,
        {
          hook_event_name: 'preToolUse',
          tool_name: 'Shell',
          tool_input: { command: 'npm install', working_directory: repo },
          tool_use_id: 'abc123',
          cwd: repo,
          agent_message: 'Installing dependencies...',
        },
      ],
      [cmd.beforeShellExecution!, { hook_event_name: 'beforeShellExecution', command: 'npm test', cwd: repo, sandbox: false }],
      [cmd.beforeReadFile!, { hook_event_name: 'beforeReadFile', file_path: join(repo, 'src/generated/api.ts'), content: '', attachments: [] }],
    ] as const) {
      const r = await run(command, payload);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '{}\n', stderr: '' });
    }
  });

  it('puts back, at afterShellExecution, a protected file a shell call changed that the text did not show (Cursor runs it unconfined)', async () => {
    const command = `python3 -c "open('src/generated/api.ts','w').write('x')"`;
    const before = await run(cmd.beforeShellExecution!, { hook_event_name: 'beforeShellExecution', command, cwd: repo, sandbox: false });
    expect(before.stdout, 'the judge refused a command it cannot read').toBe('{}\n');
    // What Cursor does between its two events: runs the command as written, in its shell.
    execFileSync('sh', ['-c', command], { cwd: repo });
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8')).toBe('x');
    const after = await run(cmd.afterShellExecution!, { hook_event_name: 'afterShellExecution', command, cwd: repo, output: '', duration: 40, sandbox: false });
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8'), 'the protected file was left as the command wrote it').toBe('export const api = 1;\n');
    // afterShellExecution takes no answer the model reads: Cursor gets its "nothing to say"…
    expect({ code: after.code, stdout: after.stdout, stderr: after.stderr }).toEqual({ code: 0, stdout: '{}\n', stderr: '' });
    // …and the same call's postToolUse tells the model what was put back, and why.
    const post = await run(cmd.postToolUse!, { hook_event_name: 'postToolUse', tool_name: 'Shell', tool_input: { command }, tool_output: '', cwd: repo });
    expect(post.code, post.stderr).toBe(0);
    const told = JSON.parse(post.stdout) as { additional_context?: string };
    expect(Object.keys(told), `postToolUse did not tell the model what afterShellExecution put back: ${post.stdout}`).toEqual(['additional_context']);
    expect(told.additional_context).toContain('src/generated/api.ts');
    expect(told.additional_context).toContain('generated-files');
    // Told once: a second post-tool event of the call says nothing more.
    const again = await run(cmd.postToolUse!, { hook_event_name: 'postToolUse', tool_name: 'Shell', tool_input: { command }, tool_output: '', cwd: repo });
    expect(again.stdout, 'the explanation was given twice').toBe('{}\n');
  });

  it('at postToolUse, what afterShellExecution found and put back is told, not only what the output shows was refused', async () => {
    const command = `python3 -c "open('src/generated/api.ts','w').write('z')"`;
    const before = await run(cmd.beforeShellExecution!, { hook_event_name: 'beforeShellExecution', command, cwd: repo, sandbox: false });
    expect(before.stdout, 'the judge refused a command it cannot read').toBe('{}\n');
    execFileSync('sh', ['-c', command], { cwd: repo });
    const after = await run(cmd.afterShellExecution!, { hook_event_name: 'afterShellExecution', command, cwd: repo, output: '', duration: 40, sandbox: false });
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8'), 'the protected file was left as the command wrote it').toBe('export const api = 1;\n');
    expect(after.stdout).toBe('{}\n');
    // The output Cursor reports at postToolUse also names the path beside a read-only refusal.
    const output = "OSError: [Errno 30] Read-only file system: 'src/generated/api.ts'";
    const post = await run(cmd.postToolUse!, { hook_event_name: 'postToolUse', tool_name: 'Shell', tool_input: { command }, tool_output: output, cwd: repo });
    const told = JSON.parse(post.stdout) as { additional_context?: string };
    expect(told.additional_context ?? `(no additional_context: ${post.stdout})`, 'what afterShellExecution put back was not told').toContain(
      'has been restored',
    );
  });

  it('tells the model at postToolUse when it comes before afterShellExecution, and afterShellExecution then has nothing to put back', async () => {
    const command = `perl -e 'open(F,">src/generated/api.ts"); print F "y"'`;
    const before = await run(cmd.preToolUse!, { hook_event_name: 'preToolUse', tool_name: 'Shell', tool_input: { command }, cwd: repo });
    expect(before.stdout, 'the judge refused a command it cannot read').toBe('{}\n');
    execFileSync('sh', ['-c', command], { cwd: repo });
    const post = await run(cmd.postToolUse!, { hook_event_name: 'postToolUse', tool_name: 'Shell', tool_input: { command }, tool_output: '', cwd: repo });
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8'), 'postToolUse left the protected file as the command wrote it').toBe(
      'export const api = 1;\n',
    );
    const told = JSON.parse(post.stdout) as { additional_context?: string };
    expect(told.additional_context ?? `(no additional_context: ${post.stdout})`).toContain('generated-files');
    const after = await run(cmd.afterShellExecution!, { hook_event_name: 'afterShellExecution', command, cwd: repo, output: '', duration: 40, sandbox: false });
    expect({ code: after.code, stdout: after.stdout }).toEqual({ code: 0, stdout: '{}\n' });
  });

  it('gives the memory snapshot as additional_context at sessionStart, and no context at beforeSubmitPrompt', async () => {
    await t.cli(['memory', 'add', 'The parser module is generated from grammar.peg.'], { cwd: repo });
    const s = await run(cmd.sessionStart!, { hook_event_name: 'sessionStart', session_id: 'c0nv-1', is_background_agent: false, composer_mode: 'agent' });
    const out = JSON.parse(s.stdout);
    expect(Object.keys(out)).toEqual(['additional_context']);
    expect(out.additional_context).toContain('generated from grammar.peg');
    const p = await run(cmd.beforeSubmitPrompt!, { hook_event_name: 'beforeSubmitPrompt', prompt: 'fix the parser', attachments: [] });
    expect(p).toMatchObject({ code: 0, stdout: '{}\n' });
  });

  it('gives the same answer to a Cursor payload through the Claude Code hook config (third-party hooks)', async () => {
    const payload = {
      hook_event_name: 'preToolUse',
      tool_name: 'Write',
      tool_input: { file_path: join(repo, 'src/generated/api.ts') },
      tool_use_id: 'abc123',
      cwd: repo,
    };
    const viaCursor = await run(cmd.preToolUse!, payload);
    const viaClaude = await run(toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), payload);
    expect(viaClaude).toMatchObject({ code: viaCursor.code, stdout: viaCursor.stdout, stderr: viaCursor.stderr });
  });

  it('reads the transcript once, whichever hook config ran the hook', async () => {
    copyFileSync(join(FIXTURES, 'cursor-agent-transcript.jsonl'), transcript);
    const stop = { hook_event_name: 'stop', status: 'completed', loop_count: 0 };
    await Promise.all([
      run(cmd.stop!, stop),
      run(claudeCmd.Stop!, stop),
      run(cmd.afterFileEdit!, { hook_event_name: 'afterFileEdit', file_path: join(repo, 'src/app.ts'), edits: [{ old_string: 'a', new_string: 'b' }] }),
    ]);
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === transcript && e.offset > 0),
      )
    ).find((e) => e.path === transcript)!;
    await run(cmd.sessionEnd!, {
      hook_event_name: 'sessionEnd',
      session_id: 'c0nv-1',
      reason: 'completed',
      duration_ms: 1000,
      is_background_agent: false,
      final_status: 'completed',
    });
    const show = await until(
      async () => (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json(),
      (s) => s.session.endReason === 'completed',
    );
    expect(show.session.source).toBe('cursor');
    expect(show.messages.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'fix the failing test in the parser module'],
      ['assistant', 'Running the test suite first.'],
      ['assistant', 'The tokenizer drops the last quote; fixed in src/tokenizer.rs.'],
    ]);
    expect(show.messages[1].toolCalls[0].function.name).toBe('Shell');
    expect((await transcripts(t, repo)).filter((e) => e.path === transcript)).toHaveLength(1);
  });
});
