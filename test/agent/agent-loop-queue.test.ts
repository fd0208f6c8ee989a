/**
 * The loop and the task runner without the daemon: the hook's in-process path (turn
 * context fenced into the API copy), the queue behind a full runner, and the replay of a
 * session that ended between a tool call and its result.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTask, replayMessages, type AgentDeps } from '../../src/agent/loop.js';
import { createModelClient, modelSettings } from '../../src/model/client.js';
import { TURN_CONTEXT_OPEN } from '../../src/sessions/recall.js';
import { sessionLog } from '../../src/agent/session-log.js';
import { recallFrom } from '../../src/sessions/recall.js';
import { createAgentServices } from '../../src/agent/standalone.js';
import { TaskRunner, type TaskEvent } from '../../src/agent/task-runner.js';
import { TOOLS } from '../../src/agent/tools/index.js';
import type { AgentServices } from '../../src/agent/services.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';

describe('agent loop and task runner', () => {
  let t: TestEnv;
  let model: FakeModel;
  let repo: string;
  let services: AgentServices;
  let deps: AgentDeps;
  beforeEach(async () => {
    t = makeEnv();
    model = await startFakeModel();
    repo = t.repo();
    services = createAgentServices({ root: repo, home: t.home });
    deps = {
      model: createModelClient(modelSettings({ baseUrl: model.url, apiKey: 'k', name: 'fake', stream: true }, {})),
      tools: TOOLS,
      log: sessionLog(services.sessions, repo),
      buildPrompt: () => ({ system: 'SYSTEM PROMPT', sha256: 'x' }),
      recall: recallFrom(services.sessions, repo),
      toolContext: (sessionId, signal) => ({ root: repo, sessionId, signal, config: services.config, services }),
      maxTurns: 5,
    };
  });
  afterEach(async () => {
    services.sessions.close();
    await model.close();
    await t.cleanup();
  });

  it('a hook task: turn context fenced into the API copy only, streamed text events, source recorded', async () => {
    model.push({ content: 'Fixed the test.' });
    const events: string[] = [];
    const r = await runTask(deps, {
      task: 'Fix the failing check "tests".',
      source: 'hook',
      turnContext: 'FAIL test/a.test.ts > adds\nexpected 3, got 4',
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e.type),
    });
    expect(r).toMatchObject({ status: 'completed', answer: 'Fixed the test.', turns: 1 });
    const sent = model.requests[0]!.messages;
    expect(sent[0]).toEqual({ role: 'system', content: 'SYSTEM PROMPT' });
    expect(String(sent[1]!.content)).toContain(`Fix the failing check "tests".\n\n${TURN_CONTEXT_OPEN}`);
    expect(String(sent[1]!.content)).toContain('expected 3, got 4');
    const stored = services.sessions.getMessages(r.sessionId);
    expect(stored[0]!.content).toBe('Fix the failing check "tests".');
    expect(stored[0]!.apiContent).toBe(sent[1]!.content);
    expect(services.sessions.getSession(r.sessionId)!.source).toBe('hook');
    expect(events[0]).toBe('session');
    expect(events).toContain('text');
    expect(events.at(-1)).toBe('assistant');
  });

  it('replay answers a tool call that never got its result, so the continuation is a valid conversation', () => {
    const msgs = replayMessages([
      { role: 'user', content: 'do it', apiContent: 'do it\n\n<recalled-context>…</recalled-context>' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', function: { name: 'terminal', arguments: '{"command":"make"}' } }] },
    ]);
    expect(msgs).toEqual([
      { role: 'user', content: 'do it\n\n<recalled-context>…</recalled-context>' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":"make"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: expect.stringContaining('No result was recorded') },
    ]);
  });

  it('a full runner queues the next task; a queued task can be cancelled before it starts', async () => {
    const runner = new TaskRunner((spec) => runTask(deps, { ...spec, continueFrom: spec.sessionId }), 1);
    model.push({ hang: true });
    const firstEvents: TaskEvent[] = [];
    const secondEvents: TaskEvent[] = [];
    const first = runner.run({ task: 'first', source: 'api', onEvent: (e) => firstEvents.push(e) });
    const second = runner.run({ task: 'second', source: 'api', onEvent: (e) => secondEvents.push(e) });
    expect(secondEvents[0]).toMatchObject({ type: 'queued', position: 1 });
    expect(runner.list().map((x) => x.state)).toEqual(['running', 'queued']);
    expect(runner.cancel(runner.list()[1]!.id)).toBe(true);
    expect(await second).toMatchObject({ status: 'cancelled', sessionId: null });
    expect(runner.cancel(runner.list()[0]!.id)).toBe(true);
    expect(await first).toMatchObject({ status: 'cancelled', sessionId: expect.any(String) });
    expect(runner.list()).toEqual([]);
    expect(runner.counts()).toEqual({ running: 0, queued: 0 });
  });
});
