/**
 * Post-task review for other agents: each agent's stop event (Claude Code and Codex `Stop`,
 * Cursor `stop`, Gemini CLI `AfterAgent`), run through the hook command `hermesd init
 * --agents` wrote, answers at once and queues a review of the session its transcript was
 * ingested into; the review records pending proposals and writes no owner. With a model, a
 * review hanging on the model never delays the next hook's answer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { makeEnv, repoMemoryFiles, type TestEnv } from '../helpers/env.js';
import { denied, geminiExpand, hookCommands, runHook, toolHookCommand, transcripts } from '../helpers/agents.js';
import { startFakeModel, type ChatRequest, type FakeModel } from '../helpers/fake-model.js';

type Listed = { id: string; source: string; owner: string; summary: string };
type Shown = { sessionId?: string; status: string; source: string; change: { kind: string; scope?: string; content?: string } };

const jsonl = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** One session per agent, in each agent's own transcript format; the user states one durable fact. */
const SESSIONS = {
  claude: {
    fact: 'Note that the integration tests in this repository need Docker running.',
    file: 'cc-review-1.jsonl',
    text: (fact: string) =>
      jsonl([
        {
          type: 'user',
          timestamp: '2026-11-30T10:00:00.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'user', content: `Fix the failing integration test. ${fact}` },
          uuid: 'u1',
        },
        {
          type: 'assistant',
          timestamp: '2026-11-30T10:00:01.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } }] },
          uuid: 'a1',
        },
        {
          type: 'user',
          timestamp: '2026-11-30T10:00:02.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Cannot connect to the Docker daemon' }] },
          uuid: 'r1',
        },
        {
          type: 'assistant',
          timestamp: '2026-11-30T10:00:03.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: 'README.md' } }] },
          uuid: 'a2',
        },
        {
          type: 'user',
          timestamp: '2026-11-30T10:00:04.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: '# app' }] },
          uuid: 'r2',
        },
        {
          type: 'assistant',
          timestamp: '2026-11-30T10:00:05.000Z',
          sessionId: 'cc-review-1',
          message: { role: 'assistant', content: [{ type: 'text', text: 'Start Docker, then the test passes.' }] },
          uuid: 'a3',
        },
      ]),
  },
  codex: {
    fact: 'In this repo the e2e suite needs the STRIPE_KEY env var set.',
    file: 'rollout-2026-11-30T10-00-00-22222222-2222-4222-8222-222222222222.jsonl',
    text: (fact: string) =>
      jsonl([
        {
          timestamp: '2026-11-30T10:00:00.000Z',
          type: 'session_meta',
          payload: {
            id: '22222222-2222-4222-8222-222222222222',
            timestamp: '2026-11-30T10:00:00.000Z',
            cwd: '/w',
            originator: 'codex_cli_rs',
            cli_version: '0.0.0-test',
          },
        },
        {
          timestamp: '2026-11-30T10:00:01.000Z',
          type: 'response_item',
          payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Run the e2e suite. ${fact}` }] },
        },
        {
          timestamp: '2026-11-30T10:00:02.000Z',
          type: 'response_item',
          payload: { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"npm run e2e"}', call_id: 'c1' },
        },
        {
          timestamp: '2026-11-30T10:00:03.000Z',
          type: 'response_item',
          payload: { type: 'function_call_output', call_id: 'c1', output: 'STRIPE_KEY missing' },
        },
        {
          timestamp: '2026-11-30T10:00:04.000Z',
          type: 'response_item',
          payload: { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"STRIPE_KEY=x npm run e2e"}', call_id: 'c2' },
        },
        { timestamp: '2026-11-30T10:00:05.000Z', type: 'response_item', payload: { type: 'function_call_output', call_id: 'c2', output: 'ok' } },
        {
          timestamp: '2026-11-30T10:00:06.000Z',
          type: 'response_item',
          payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The suite passes with STRIPE_KEY set.' }] },
        },
      ]),
  },
  cursor: {
    fact: 'Heads up: the snapshot tests in this repo require TZ=UTC.',
    file: 'c0nv-review.jsonl',
    text: (fact: string) =>
      jsonl([
        { role: 'user', message: { content: [{ type: 'text', text: `<user_query>\nUpdate the snapshots. ${fact}\n</user_query>` }] } },
        {
          role: 'assistant',
          message: {
            content: [
              { type: 'text', text: 'Running them.' },
              { type: 'tool_use', name: 'Shell', input: { command: 'TZ=UTC npm test -- -u' } },
            ],
          },
        },
        {
          role: 'assistant',
          message: {
            content: [
              { type: 'text', text: 'Checking the diff.' },
              { type: 'tool_use', name: 'Shell', input: { command: 'git diff --stat' } },
            ],
          },
        },
        { role: 'assistant', message: { content: [{ type: 'text', text: 'Snapshots updated.' }] } },
      ]),
  },
  gemini: {
    fact: 'The dev server here only starts after running make db first.',
    file: 'session-2026-11-30T10-00-7a7a7a7a.jsonl',
    text: (fact: string) =>
      jsonl([
        {
          sessionId: '7a7a7a7a-3b4d-4e6f-8a9b-0c1d2e3f4a5b',
          projectHash: '9c0a3f2e',
          startTime: '2026-11-30T10:00:00.000Z',
          lastUpdated: '2026-11-30T10:00:00.000Z',
          kind: 'main',
        },
        { id: 'm1', timestamp: '2026-11-30T10:00:01.000Z', type: 'user', content: [{ text: `Start the dev server. ${fact}` }] },
        {
          id: 'm2',
          timestamp: '2026-11-30T10:00:02.000Z',
          type: 'gemini',
          content: [{ text: 'Preparing the database.' }],
          model: 'gemini-2.5-pro',
          toolCalls: [
            {
              id: 'call-1',
              name: 'run_shell_command',
              args: { command: 'make db' },
              status: 'success',
              timestamp: '2026-11-30T10:00:02.000Z',
              result: [{ functionResponse: { id: 'call-1', name: 'run_shell_command', response: { output: 'ok' } } }],
            },
            {
              id: 'call-2',
              name: 'run_shell_command',
              args: { command: 'npm run dev' },
              status: 'success',
              timestamp: '2026-11-30T10:00:03.000Z',
              result: [{ functionResponse: { id: 'call-2', name: 'run_shell_command', response: { output: 'listening' } } }],
            },
          ],
        },
        { id: 'm3', timestamp: '2026-11-30T10:00:04.000Z', type: 'gemini', content: [{ text: 'The dev server is up.' }], model: 'gemini-2.5-pro' },
      ]),
  },
} as const;

type Agent = keyof typeof SESSIONS;

/** Polls `fn` until it gives a truthy value (returned), or fails after `ms`. */
async function until<T>(fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('post-task review at other agents’ stop hooks', () => {
  let t: TestEnv;
  let repo: string;
  let dir: string;
  let client: DaemonClient;
  const cmd = {} as Record<Agent, Record<string, string>>;

  /** Each agent's stop event, as the agent runs it: the command from its config, its documented payload and environment. */
  const stop = (agent: Agent, path: string) => {
    switch (agent) {
      case 'claude':
        return runHook(t, cmd.claude.Stop!, {
          cwd: repo,
          env: { CLAUDE_PROJECT_DIR: repo },
          payload: {
            session_id: 'cc-review-1',
            transcript_path: path,
            cwd: repo,
            permission_mode: 'default',
            hook_event_name: 'Stop',
            stop_hook_active: false,
          },
        });
      case 'codex':
        return runHook(t, cmd.codex.Stop!, {
          cwd: repo,
          payload: {
            session_id: '22222222-2222-4222-8222-222222222222',
            turn_id: '1',
            transcript_path: path,
            cwd: repo,
            model: 'gpt-5.5',
            permission_mode: 'default',
            hook_event_name: 'Stop',
            stop_hook_active: false,
            last_assistant_message: 'done',
          },
        });
      case 'cursor':
        return runHook(t, cmd.cursor.stop!, {
          cwd: repo,
          env: { CURSOR_PROJECT_DIR: repo, CURSOR_VERSION: '2.1.32' },
          payload: {
            conversation_id: 'c0nv-review',
            generation_id: 'gen-1',
            model: 'claude-sonnet-4-20250514',
            cursor_version: '2.1.32',
            workspace_roots: [repo],
            user_email: null,
            transcript_path: path,
            hook_event_name: 'stop',
            status: 'completed',
            loop_count: 0,
          },
        });
      case 'gemini':
        return runHook(t, geminiExpand(cmd.gemini.AfterAgent!, repo), {
          cwd: repo,
          env: { GEMINI_PROJECT_DIR: repo, GEMINI_CWD: repo, GEMINI_SESSION_ID: '7a7a7a7a-3b4d-4e6f-8a9b-0c1d2e3f4a5b' },
          payload: {
            session_id: '7a7a7a7a-3b4d-4e6f-8a9b-0c1d2e3f4a5b',
            transcript_path: path,
            cwd: repo,
            timestamp: '2026-11-30T10:00:05.000Z',
            hook_event_name: 'AfterAgent',
            prompt: 'Start the dev server.',
            prompt_response: 'up',
            stop_hook_active: false,
          },
        });
    }
  };

  const listed = async () => (await client.call<{ proposals: Listed[] }>('GET', '/v1/proposals')).proposals;

  beforeAll(async () => {
    t = makeEnv();
    writeFileSync(join(t.home, 'config.yaml'), 'placement:\n  classifier: rules\n');
    repo = t.repo({ 'README.md': '# app\n' });
    dir = join(t.home, '..', 'agent-transcripts');
    mkdirSync(dir, { recursive: true });
    const init = await t.cli(['init', '--agents', 'claude,codex,cursor,gemini'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    for (const a of Object.keys(SESSIONS) as Agent[]) cmd[a] = hookCommands(repo, a);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  for (const agent of Object.keys(SESSIONS) as Agent[]) {
    it(`${agent}: the stop hook answers silently and the session's review proposes the stated fact`, async () => {
      const s = SESSIONS[agent];
      const path = join(dir, s.file);
      writeFileSync(path, s.text(s.fact));
      const answer = await stop(agent, path);
      // Cursor's silent answer is an empty JSON object; the others print nothing.
      expect(answer).toMatchObject({ code: 0, stdout: agent === 'cursor' ? '{}\n' : '', stderr: '' });
      client ??= new DaemonClient((await t.cli(['status', '--json'], { cwd: repo })).json().socket);

      const row = await until(async () => (await transcripts(t, repo)).find((e) => e.path === path && e.stored > 0), 20_000);
      const mine = await until(async () => (await listed()).find((p) => p.summary.includes(s.fact.replace(/\.$/, '').slice(-30))), 20_000);
      expect(mine).toMatchObject({ source: 'review', owner: 'repo-memory' });
      const shown = await client.call<Shown>('GET', `/v1/proposals/${mine.id}`);
      expect(shown).toMatchObject({ sessionId: row.sessionId, status: 'pending', change: { kind: 'memory', scope: 'repo' } });
      // Proposed, not written: the repository's memory is untouched until the user accepts.
      expect(repoMemoryFiles(t.home)).toEqual([]);
    });
  }

  it('a second stop of the same session with nothing new queues no second review', async () => {
    const before = await listed();
    const counts = await client.call<{ done: number }>('GET', '/v1/review');
    const s = SESSIONS.claude;
    expect(await stop('claude', join(dir, s.file))).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // Something NOT happening: a bounded wait, well past the queue's 250 ms poll.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await client.call('GET', '/v1/review')).toMatchObject({ done: counts.done, queued: 0, running: 0 });
    expect(await listed()).toEqual(before);

    // New messages in the same session: reviewed again.
    const path = join(dir, s.file);
    writeFileSync(
      path,
      s.text(s.fact) +
        jsonl([
          {
            type: 'user',
            timestamp: '2026-11-30T10:01:00.000Z',
            sessionId: 'cc-review-1',
            message: { role: 'user', content: 'Thanks, that fixed it.' },
            uuid: 'u9',
          },
        ]),
    );
    expect(await stop('claude', path)).toMatchObject({ code: 0 });
    await until(async () => (await client.call<{ done: number }>('GET', '/v1/review')).done > counts.done);
  });

  it('review.enabled: false queues nothing at a stop', async () => {
    writeFileSync(join(t.home, 'config.yaml'), 'placement:\n  classifier: rules\nreview:\n  enabled: false\n');
    // The daemon stats its config files on every read: the next stop sees this.
    expect((await client.call<{ config: { review: { enabled: boolean } } }>('GET', '/v1/config')).config.review.enabled).toBe(false);
    const s = SESSIONS.claude;
    const path = join(dir, 'cc-review-off.jsonl');
    writeFileSync(path, s.text('I prefer short answers without emoji in every project.'));
    const counts = await client.call<{ done: number; queued: number }>('GET', '/v1/review');
    expect(await stop('claude', path)).toMatchObject({ code: 0 });
    await until(async () => (await transcripts(t, repo)).some((e) => e.path === path && e.stored > 0), 20_000);
    expect(await client.call('GET', '/v1/review')).toMatchObject({ done: counts.done, queued: 0, running: 0 });
    expect((await listed()).some((p) => p.owner === 'user')).toBe(false);
  });
});

describe('a review waiting on the model never delays an agent hook', () => {
  let t: TestEnv;
  let repo: string;
  let model: FakeModel;
  const isReview = (req: ChatRequest) => (req.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === 'review';

  beforeAll(async () => {
    t = makeEnv();
    model = await startFakeModel([], { reviews: 'script' });
    repo = t.repo({
      'README.md': '# app\n',
      '.hermes/config.yaml': 'rules:\n  - id: generated\n    message: Do not edit generated files.\n    protect: ["gen/**"]\n',
    });
    const init = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
  });
  afterAll(async () => {
    await t.cleanup();
    await model.close();
  });

  it('Stop answers, the review hangs on the model, and the next hooks still answer', async () => {
    const cmd = hookCommands(repo, 'claude');
    const env = { CLAUDE_PROJECT_DIR: repo, OPENAI_BASE_URL: model.url };
    const path = join(t.home, '..', 'cc-hang.jsonl');
    writeFileSync(path, SESSIONS.claude.text(SESSIONS.claude.fact));
    model.push({ hang: true });
    const base = { session_id: 'cc-review-1', transcript_path: path, cwd: repo, permission_mode: 'default' };
    // The first hook starts the daemon with the model endpoint in its environment.
    const stopped = await runHook(t, cmd.Stop!, { cwd: repo, env, payload: { ...base, hook_event_name: 'Stop', stop_hook_active: false } });
    expect(stopped).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await until(async () => model.requests.some(isReview));

    const refused = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), {
      cwd: repo,
      env,
      payload: {
        ...base,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: join(repo, 'gen/a.ts'), content: 'x' },
        tool_use_id: 'toolu_9',
      },
    });
    expect(denied('claude', refused), JSON.stringify(refused)).toContain('Do not edit generated files.');
    const again = await runHook(t, cmd.Stop!, { cwd: repo, env, payload: { ...base, hook_event_name: 'Stop', stop_hook_active: false } });
    expect(again).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // The review is still waiting on the model: the hooks did not wait for it.
    const client = new DaemonClient((await t.cli(['status', '--json'], { cwd: repo })).json().socket);
    expect(await client.call('GET', '/v1/review')).toMatchObject({ running: 1 });
  });
});
