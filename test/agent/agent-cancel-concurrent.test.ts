/**
 * Tasks as a shared resource of the daemon: two clients at once, cancellation by Ctrl-C and
 * through the API, and a client that vanishes mid-task (the daemon stays, the task stops).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { CLI, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type ChatRequest, type FakeModel } from '../helpers/fake-model.js';

function spawnCli(
  t: TestEnv,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...t.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

const userText = (req: ChatRequest) => String(req.messages.find((m) => m.role === 'user')?.content ?? '').split('\n')[0]!;

describe('tasks: concurrency and cancellation', () => {
  let t: TestEnv;
  let model: FakeModel;
  beforeEach(async () => {
    t = makeEnv();
    model = await startFakeModel();
  });
  afterEach(async () => {
    await t.cleanup();
    await model.close();
  });

  it('two clients run tasks at the same time, each gets its own session and answer', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    await t.cli(['start'], { cwd: repo, env });
    // Each first request waits until both tasks have called the model: only concurrent tasks pass.
    const both = async (req: ChatRequest) => {
      await waitFor(() => model.requests.length >= 2);
      return { tool_calls: [{ name: 'terminal', arguments: { command: `echo ${userText(req).replace(/\W/g, '')}` } }] };
    };
    const answer = (req: ChatRequest) => ({ content: `answer to ${userText(req)}` });
    model.push(both, both, answer, answer);
    const [a, b] = await Promise.all([t.cli(['run', 'task alpha', '--json'], { cwd: repo, env }), t.cli(['run', 'task beta', '--json'], { cwd: repo, env })]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.json().answer).toBe('answer to task alpha');
    expect(b.json().answer).toBe('answer to task beta');
    expect(a.json().sessionId).not.toBe(b.json().sessionId);
    // Each task's second request carries its own tool result, not the other's.
    for (const req of model.requests.slice(2)) {
      const word = userText(req).replace(/\W/g, '');
      expect(String(req.messages.at(-1)!.content)).toContain(word);
    }
  });

  it('Ctrl-C cancels the task: status cancelled, exit 1, the daemon stays up', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    await t.cli(['start'], { cwd: repo, env });
    model.push({ hang: true });
    const run = spawnCli(t, ['run', 'a slow task', '--json'], repo, env);
    await waitFor(() => model.requests.length === 1);
    const started = Date.now();
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'cancelled', sessionId: expect.any(String) });
    const status = await t.cli(['status', '--json'], { cwd: repo });
    expect(status.code).toBe(0);
  });

  it('the API lists running tasks and cancels one; a vanished client cancels its task', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    const st = (await t.cli(['start', '--json'], { cwd: repo, env })).json();
    const client = new DaemonClient(st.socket);
    model.push({ hang: true });
    const events: Array<Record<string, unknown>> = [];
    const streamed = client.stream<Record<string, unknown>>('POST', '/v1/tasks', { task: 'wait forever', source: 'editor' }, (e) => events.push(e));
    await waitFor(() => model.requests.length === 1);
    const list = await client.call<{ tasks: Array<Record<string, unknown>> }>('GET', '/v1/tasks');
    expect(list.tasks).toHaveLength(1);
    expect(list.tasks[0]).toMatchObject({ state: 'running', source: 'editor', task: 'wait forever', sessionId: expect.any(String) });
    await client.call('POST', `/v1/tasks/${list.tasks[0]!.id}/cancel`);
    const result = await streamed;
    expect(result).toMatchObject({ type: 'result', status: 'cancelled', sessionId: list.tasks[0]!.sessionId });
    expect(events.find((e) => e.type === 'session')).toMatchObject({ sessionId: list.tasks[0]!.sessionId, taskId: list.tasks[0]!.id });
    await expect(client.call('POST', '/v1/tasks/task-nope/cancel')).rejects.toThrow(/No running or queued task/);

    // A client killed mid-task: the task is cancelled, the daemon keeps serving.
    model.push({ hang: true });
    const run = spawnCli(t, ['run', 'another slow task'], repo, env);
    await waitFor(() => model.requests.length === 2);
    expect((await client.call<{ tasks: unknown[] }>('GET', '/v1/tasks')).tasks).toHaveLength(1);
    run.child.kill('SIGKILL');
    await run.done;
    const end = Date.now() + 5_000;
    let left = 1;
    while (Date.now() < end && left > 0) {
      left = (await client.call<{ tasks: unknown[] }>('GET', '/v1/tasks')).tasks.length;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(left).toBe(0);
    expect((await t.cli(['status', '--json'], { cwd: repo })).code).toBe(0);
  });

  it('a daemon killed mid-task leaves the story so far in SessionDB', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    const st = (await t.cli(['start', '--json'], { cwd: repo, env })).json();
    model.push({ content: 'Looking first.', tool_calls: [{ name: 'terminal', arguments: { command: 'echo evidence-42' } }] }, { hang: true });
    const run = spawnCli(t, ['run', 'investigate the crash', '--json'], repo, env);
    await waitFor(() => model.requests.length === 2);
    process.kill(st.pid, 'SIGKILL');
    await run.done;
    const { SessionDB } = await import('../../src/sessions/db.js');
    const db = new SessionDB(`${t.home}/state.db`);
    try {
      const [session] = db.listSessions({ repo });
      const messages = db.getMessages(session!.id);
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(messages[0]!.content).toBe('investigate the crash');
      expect(messages[1]!.toolCalls![0]!.function.arguments).toContain('evidence-42');
      expect(messages[2]!.content).toContain('evidence-42');
    } finally {
      db.close();
    }
  });

  it('a task body is validated: an empty task is a 400 with the field named', async () => {
    const repo = t.repo();
    const st = (await t.cli(['start', '--json'], { cwd: repo })).json();
    const client = new DaemonClient(st.socket);
    await expect(client.stream('POST', '/v1/tasks', { task: '  ' }, () => {})).rejects.toThrow(/task/);
  });
});
