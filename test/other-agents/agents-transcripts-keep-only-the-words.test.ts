/**
 * A transcript is stored as the user's and the model's words only. Each agent puts more into a
 * conversation than was said: Gemini CLI's first record is its `<session_context>` (date,
 * platform, the directory tree) and what hooks add comes back as `<hook_context>` parts and
 * tool-result tails; Codex sends its environment, instructions and hook context as messages;
 * Claude Code keeps hook output as attachments and puts `<system-reminder>` blocks into
 * prompts and tool results. Stored as the user's words, they became a session's first message
 * and title, and recall found hermesd's own earlier blocks and handed them out again. Driven
 * through the hooks `init --agents` wrote, against a real daemon and SessionDB.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECALL_CLOSE, RECALL_NOTICE, RECALL_OPEN } from '../../src/sessions/recall.js';
import { SessionDB } from '../../src/sessions/db.js';
import { SESSION_CONTEXT_CLOSE, SESSION_CONTEXT_OPEN } from '../../src/text/fence.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { geminiExpand, hookCommands, runHook, transcripts, until } from '../helpers/agents.js';

const jsonl = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** What hermesd's hooks handed out, as an agent would have kept it. */
const SESSION_CONTEXT = `${SESSION_CONTEXT_OPEN}\nhermesd: this repository's memory and skills, as of the start of this session.\nReleases are cut from the marmalade branch only.\n${SESSION_CONTEXT_CLOSE}`;
const RECALLED = `${RECALL_OPEN}\n${RECALL_NOTICE}\n- session 20260101-abc, message 4 (user): the zebrafish pipeline is flaky\n${RECALL_CLOSE}`;

describe('transcripts are stored with the words of the user and the model only', () => {
  let t: TestEnv;
  let repo: string;
  let dir: string;
  let cmd: { gemini: Record<string, string>; claude: Record<string, string>; codex: Record<string, string> };

  /** Runs the agent's stop hook on `file` and returns the stored session once read. */
  async function stored(agent: 'gemini' | 'claude' | 'codex', file: string): Promise<{ session: any; messages: Array<{ role: string; content: string }> }> {
    const payload = { session_id: `${agent}-1`, transcript_path: file, cwd: repo, stop_hook_active: false };
    if (agent === 'gemini') {
      await runHook(t, geminiExpand(cmd.gemini.AfterAgent!, repo), {
        cwd: repo,
        env: { GEMINI_PROJECT_DIR: repo },
        payload: { ...payload, hook_event_name: 'AfterAgent', prompt: 'x', prompt_response: 'y' },
      });
    } else {
      await runHook(t, cmd[agent].Stop!, { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo }, payload: { ...payload, hook_event_name: 'Stop' } });
    }
    const row = (
      await until(
        () => transcripts(t, repo),
        (x) => x.some((e) => e.path === file && e.offset > 0),
      )
    ).find((e) => e.path === file)!;
    return (await t.cli(['sessions', 'show', row.sessionId, '--json'], { cwd: repo })).json();
  }
  const said = (s: { messages: Array<{ role: string; content: string }> }) => s.messages.map((m) => `${m.role}:${m.content}`);

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ 'README.md': '# app\n' });
    dir = join(t.home, '..', 'transcripts');
    mkdirSync(dir, { recursive: true });
    const init = await t.cli(['init', '--agents', 'gemini,claude,codex'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    cmd = { gemini: hookCommands(repo, 'gemini'), claude: hookCommands(repo, 'claude'), codex: hookCommands(repo, 'codex') };
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("Gemini CLI: no <session_context> record, no <hook_context> parts or tool-result tails; the title is the user's first prompt", async () => {
    const file = join(dir, 'session-gemini.jsonl');
    writeFileSync(
      file,
      jsonl([
        { sessionId: 'gemini-1', projectHash: 'p', startTime: '2026-08-06T10:00:00.000Z', lastUpdated: '2026-08-06T10:00:00.000Z', kind: 'main' },
        {
          id: 'e0',
          timestamp: '2026-08-06T10:00:00.500Z',
          type: 'user',
          content: [
            {
              text: "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Thursday, August 6, 2026.\nMy operating system is: linux\n</session_context>",
            },
          ],
        },
        { id: 'e1', timestamp: '2026-08-06T10:00:00.600Z', type: 'user', content: [{ text: `<hook_context>${SESSION_CONTEXT}</hook_context>` }] },
        {
          id: 'm1',
          timestamp: '2026-08-06T10:00:01.000Z',
          type: 'user',
          content: [{ text: 'Rename the quaternion helper' }, { text: `<hook_context>${RECALLED}</hook_context>` }],
        },
        {
          id: 'm2',
          timestamp: '2026-08-06T10:00:02.000Z',
          type: 'gemini',
          model: 'gemini-2.5-pro',
          content: [{ text: 'Looking for it.' }],
          toolCalls: [
            {
              id: 'c1',
              name: 'run_shell_command',
              args: { command: 'ls src' },
              status: 'success',
              result: [
                {
                  functionResponse: {
                    id: 'c1',
                    name: 'run_shell_command',
                    response: { output: 'quat.ts\n\n<hook_context>hermesd: put back gen/a.ts</hook_context>' },
                  },
                },
              ],
            },
          ],
        },
      ]),
    );
    const s = await stored('gemini', file);
    expect(said(s)).toEqual(['user:Rename the quaternion helper', 'assistant:Looking for it.', 'assistant:', 'tool:quat.ts']);
    expect(s.session.title).toBe('Rename the quaternion helper');
  });

  it("Claude Code: hook attachments and <system-reminder> blocks are not the user's words", async () => {
    const file = join(dir, 'claude.jsonl');
    const base = { sessionId: 'claude-1', cwd: repo, version: '2.1.197', timestamp: '2026-08-06T10:00:00.000Z' };
    writeFileSync(
      file,
      jsonl([
        {
          ...base,
          type: 'attachment',
          uuid: 'a0',
          attachment: {
            type: 'hook_additional_context',
            content: [SESSION_CONTEXT],
            hookName: 'SessionStart',
            toolUseID: 'SessionStart',
            hookEvent: 'SessionStart',
          },
        },
        {
          ...base,
          type: 'user',
          uuid: 'u1',
          message: {
            role: 'user',
            content: [
              { type: 'text', text: '<system-reminder>\nAs you answer the user, use the context below.\n</system-reminder>' },
              { type: 'text', text: 'Tidy the marmalade module' },
            ],
          },
        },
        {
          ...base,
          type: 'attachment',
          uuid: 'a1',
          attachment: { type: 'hook_additional_context', content: [RECALLED], hookName: 'UserPromptSubmit', toolUseID: 'x', hookEvent: 'UserPromptSubmit' },
        },
        {
          ...base,
          type: 'assistant',
          uuid: 'r1',
          message: {
            role: 'assistant',
            model: 'claude-sonnet-5',
            content: [
              { type: 'text', text: 'Reading it.' },
              { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/x' } },
            ],
          },
        },
        {
          ...base,
          type: 'user',
          uuid: 'u2',
          message: {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: 'export {}\n<system-reminder>Whenever you read a file, consider whether it looks malicious.</system-reminder>',
              },
            ],
          },
        },
      ]),
    );
    const s = await stored('claude', file);
    expect(said(s)).toEqual(['user:Tidy the marmalade module', 'assistant:Reading it.', 'tool:export {}']);
    expect(s.session.title).toBe('Tidy the marmalade module');
  });

  it("Codex: its environment and the hooks' context, as developer or user messages, are not stored", async () => {
    const file = join(dir, 'rollout-codex.jsonl');
    const item = (payload: unknown) => ({ timestamp: '2026-08-06T10:00:00.000Z', type: 'response_item', payload });
    const msg = (role: string, text: string) => item({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });
    writeFileSync(
      file,
      jsonl([
        { timestamp: '2026-08-06T10:00:00.000Z', type: 'session_meta', payload: { id: 'codex-1', cwd: repo } },
        msg('user', `<environment_context>\n  <cwd>${repo}</cwd>\n</environment_context>`),
        msg('developer', `<hook_context>${SESSION_CONTEXT}</hook_context>`),
        msg('user', `<hook_context>${RECALLED}</hook_context>`),
        msg('user', 'Bump the kumquat dependency'),
        msg('assistant', 'Bumped.'),
      ]),
    );
    const s = await stored('codex', file);
    expect(said(s)).toEqual(['user:Bump the kumquat dependency', 'assistant:Bumped.']);
  });

  it('finds none of the injected text with sessions search, and recall never hands back a block hermesd wrote', async () => {
    for (const q of ['marmalade branch', 'zebrafish', 'setting up the context']) {
      const found = (await t.cli(['sessions', 'search', q, '--json'], { cwd: repo })).json();
      expect(found.results, q).toEqual([]);
    }
    // A session stored before: a prompt kept with the recall block a hook had added to it.
    const db = new SessionDB(join(t.home, 'state.db'));
    try {
      const old = db.createSession({ repo, source: 'gemini', title: 'old' });
      db.appendMessage(old.id, { role: 'user', content: `Speed up the ingest\n${RECALLED}` });
    } finally {
      db.close();
    }
    const r = await runHook(t, geminiExpand(cmd.gemini.BeforeAgent!, repo), {
      cwd: repo,
      env: { GEMINI_PROJECT_DIR: repo },
      payload: {
        session_id: 'gemini-2',
        transcript_path: join(dir, 'new.jsonl'),
        cwd: repo,
        hook_event_name: 'BeforeAgent',
        prompt: 'why is the zebrafish pipeline flaky',
      },
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // The user's own words are still recalled.
    const words = await runHook(t, cmd.claude.UserPromptSubmit!, {
      cwd: repo,
      env: { CLAUDE_PROJECT_DIR: repo },
      payload: {
        session_id: 'claude-2',
        transcript_path: join(dir, 'claude-2.jsonl'),
        cwd: repo,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'the kumquat dependency again',
      },
    });
    expect(JSON.parse(words.stdout).hookSpecificOutput.additionalContext).toContain('Bump the kumquat dependency');
  });
});
