/**
 * Post-task review: after hermesd's agent delivers a task, a background job reads the
 * session (bounded: max_tokens, a strict json_schema) and records what it finds as pending
 * proposals — never writing an owner. It starts only after the answer was delivered, waits
 * while the daemon is busy with another task, and is skipped when that lasts past
 * review.deferMs. Without a model, the rule-based review reads what the user said.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { makeEnv, repoMemoryFiles, type TestEnv, waitFor } from '../helpers/env.js';
import { startFakeModel, type ChatRequest, type FakeModel, type FakeStep } from '../helpers/fake-model.js';

const reviewName = (req: ChatRequest) => (req.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
const candidates = {
  candidates: [
    {
      owner: 'repo-memory',
      text: 'The README is the only documentation of this repository.',
      reasons: { scope: 'this repository', lifetime: 'until it changes', type: 'fact', readTiming: 'every session here' },
    },
    {
      owner: 'user',
      text: 'User prefers answers that quote file names.',
      reasons: { scope: 'the user', lifetime: 'durable', type: 'preference', readTiming: 'every session' },
    },
  ],
};

type Proposals = { proposals: Array<{ id: string; source: string; owner: string; summary: string }> };

/** For the checks that something does NOT happen: a bounded wait is the only way to look. */
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the daemon's pending proposals until there are `n`, or the deadline passes. */
async function proposalsWhen(c: DaemonClient, n: number, ms = 20_000): Promise<Proposals['proposals']> {
  const end = Date.now() + ms;
  for (;;) {
    const list = (await c.call<Proposals>('GET', '/v1/proposals')).proposals;
    if (list.length >= n || Date.now() > end) return list;
    await quietFor(50);
  }
}

describe('post-task review', () => {
  let t: TestEnv;
  let repo: string;
  let model: FakeModel;
  let client: DaemonClient;
  const reviewAt: number[] = [];
  const reviewStep: FakeStep = (req) => {
    if (reviewName(req) !== 'review') return { status: 500, body: { error: { message: `expected the review request, got ${reviewName(req)}` } } };
    reviewAt.push(Date.now());
    return { content: JSON.stringify(candidates) };
  };
  const proposals = () => client.call<Proposals>('GET', '/v1/proposals');
  const runTask = async (task: string, signal?: AbortSignal) => {
    const events: Array<Record<string, unknown>> = [];
    const result = await client.stream<{ sessionId: string; status: string; answer: string }>('POST', '/v1/tasks', { task }, (e) => events.push(e), { signal });
    return { result, answeredAt: Date.now(), events };
  };

  beforeAll(async () => {
    t = makeEnv();
    model = await startFakeModel([], { reviews: 'script' });
    writeFileSync(join(t.home, 'config.yaml'), 'review:\n  minToolCalls: 1\n  maxOutputTokens: 300\n');
    repo = t.repo({ 'README.md': '# demo\nEverything is documented here.\n' });
    const started = await t.cli(['start', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(started.code, started.stderr).toBe(0);
    client = new DaemonClient((await t.cli(['status', '--json'], { cwd: repo })).json().socket);
  });
  afterAll(async () => {
    await t.cleanup();
    await model.close();
  });

  it('runs after the answer is delivered, bounded, and records pending proposals only', async () => {
    model.push({ tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] }, { content: 'The README documents everything.' }, reviewStep);
    const { result, answeredAt } = await runTask('Where is this project documented?');
    expect(result).toMatchObject({ status: 'completed', answer: 'The README documents everything.' });
    await waitFor(() => reviewAt.length === 1, 20_000);
    expect(reviewAt[0]!).toBeGreaterThanOrEqual(answeredAt);

    const req = model.requests.at(-1)!;
    expect(req.max_tokens).toBe(300);
    expect(req.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'review', strict: true } });
    const evidence = String(req.messages.find((m) => m.role === 'user')!.content);
    expect(evidence).toContain('Where is this project documented?');
    expect(evidence).toContain('read_file');

    const list = await proposalsWhen(client, 2);
    expect(list.map((p) => [p.source, p.owner])).toEqual([
      ['review', 'repo-memory'],
      ['review', 'user'],
    ]);
    const p = await client.call<{ sessionId: string; status: string }>('GET', `/v1/proposals/${list[0]!.id}`);
    expect(p).toMatchObject({ sessionId: result.sessionId, status: 'pending' });
    // Proposed, not written.
    expect(existsSync(join(t.home, 'memories', 'USER.md'))).toBe(false);
    expect(repoMemoryFiles(t.home)).toEqual([]);
  });

  it('waits while another task runs, and starts once the daemon is idle again', async () => {
    const before = model.requests.length;
    model.push({ hang: true });
    const abort = new AbortController();
    const busy = runTask('A long task', abort.signal).catch(() => undefined);
    await waitFor(() => model.requests.length === before + 1, 10_000);
    const sessionId = (await client.call<{ proposals: Array<{ id: string }> }>('GET', '/v1/proposals')).proposals[0]!.id;
    const firstSession = (await client.call<{ sessionId: string }>('GET', `/v1/proposals/${sessionId}`)).sessionId;
    await client.call('POST', '/v1/review', { session_id: firstSession });
    // Well past the queue's poll: the review is still waiting, the model saw nothing new.
    await quietFor(1_500);
    expect(model.requests.length).toBe(before + 1);
    expect(await client.call('GET', '/v1/review')).toMatchObject({ queued: 1, running: 0 });

    model.push(reviewStep);
    const endedAt = Date.now();
    abort.abort();
    await busy;
    await waitFor(() => reviewAt.length === 2, 20_000);
    expect(reviewAt[1]!).toBeGreaterThanOrEqual(endedAt);
    // The same candidates again: already pending, nothing new.
    const end = Date.now() + 10_000;
    while ((await client.call<{ done: number }>('GET', '/v1/review')).done < 2 && Date.now() < end) await quietFor(50);
    expect((await client.call<{ done: number }>('GET', '/v1/review')).done).toBe(2);
    expect((await proposals()).proposals).toHaveLength(2);
  });

  it('is skipped when the daemon stays busy past review.deferMs', async () => {
    writeFileSync(join(t.home, 'config.yaml'), 'review:\n  minToolCalls: 1\n  deferMs: 500\n');
    const before = model.requests.length;
    model.push({ hang: true });
    const abort = new AbortController();
    const busy = runTask('Another long task', abort.signal).catch(() => undefined);
    await waitFor(() => model.requests.length === before + 1, 10_000);
    const counts = await client.call<{ skipped: number }>('GET', '/v1/review');
    await client.call('POST', '/v1/review', { session_id: 'any-session' });
    const end = Date.now() + 10_000;
    while ((await client.call<{ skipped: number }>('GET', '/v1/review')).skipped === counts.skipped && Date.now() < end) await quietFor(50);
    expect(await client.call('GET', '/v1/review')).toMatchObject({ queued: 0, skipped: counts.skipped + 1 });
    abort.abort();
    await busy;
    await quietFor(800);
    expect(model.requests.length).toBe(before + 1);
  });

  it('without a model, the rule-based review proposes what the user stated as durable', async () => {
    const t2 = makeEnv();
    try {
      writeFileSync(join(t2.home, 'config.yaml'), 'review:\n  minToolCalls: 1\nplacement:\n  classifier: rules\n');
      const repo2 = t2.repo();
      model.push({ tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] }, { content: 'Done.' });
      const r = await t2.cli(['run', 'Check the README. Note that the integration tests in this repository need Docker running.', '--json'], {
        cwd: repo2,
        env: { OPENAI_BASE_URL: model.url },
      });
      expect(r.code, r.stderr).toBe(0);
      const c2 = new DaemonClient((await t2.cli(['status', '--json'], { cwd: repo2 })).json().socket);
      const list = await proposalsWhen(c2, 1);
      expect(list).toEqual([expect.objectContaining({ source: 'review', owner: 'repo-memory', summary: expect.stringContaining('need Docker running') })]);
    } finally {
      await t2.cleanup();
    }
  });
});
