import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type ChatRequest, type FakeModel } from '../helpers/fake-model.js';

/** The fake model's prompt_tokens for one request (see test/helpers/fake-model.ts). */
const promptTokens = (req: ChatRequest) => Math.max(1, Math.ceil(JSON.stringify(req.messages).length / 4));

describe('token usage: every model call adds to its session row', () => {
  let t: TestEnv;
  let model: FakeModel | undefined;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
    await model?.close();
    model = undefined;
  });

  const showSession = async (repo: string, id: string) => {
    const show = await t.cli(['sessions', 'show', id, '--json'], { cwd: repo });
    expect(show.code, show.stderr).toBe(0);
    return show.json().session as { inputTokens: number; outputTokens: number };
  };

  for (const stream of [true, false]) {
    it(`${stream ? 'streaming' : 'non-streaming'}: input/output tokens of all calls are summed`, async () => {
      const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': `model:\n  stream: ${stream}\n` });
      model = await startFakeModel([{ tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] }, { content: 'It is a demo.' }]);
      const r = await t.cli(['run', 'what is this repo', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
      expect(r.code, r.stderr).toBe(0);
      const { sessionId } = r.json();
      expect(model.requests).toHaveLength(2);
      expect(model.requests[0]!.stream ?? false).toBe(stream);
      if (stream) expect(model.requests[0]!.stream_options).toEqual({ include_usage: true });
      else expect(model.requests[0]!.stream_options).toBeUndefined();

      const session = await showSession(repo, sessionId);
      expect(session.inputTokens).toBe(promptTokens(model.requests[0]!) + promptTokens(model.requests[1]!));
      expect(session.outputTokens).toBeGreaterThanOrEqual(2);
    });
  }

  it('a stream without a usage chunk (an endpoint that ignores stream_options) still completes, with no tokens counted', async () => {
    const repo = t.repo();
    model = await startFakeModel([{ content: 'No usage from me.', usage: false }]);
    const r = await t.cli(['run', 'hello', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'completed', answer: 'No usage from me.' });
    expect(await showSession(repo, r.json().sessionId)).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });

  it('an endpoint that rejects stream_options is asked again without it, and is not sent it again', async () => {
    const repo = t.repo();
    const strict = (req: ChatRequest) =>
      req.stream_options
        ? { status: 400, body: { error: { message: 'Unrecognized request argument supplied: stream_options' } } }
        : { content: 'Fine.', usage: false as const };
    model = await startFakeModel([strict, strict, strict]);
    const env = { OPENAI_BASE_URL: model.url };
    const first = await t.cli(['run', 'hello', '--json'], { cwd: repo, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.json()).toMatchObject({ status: 'completed', answer: 'Fine.' });
    expect(model.requests.map((q) => Boolean(q.stream_options))).toEqual([true, false]);
    const second = await t.cli(['run', 'hello again', '--json'], { cwd: repo, env });
    expect(second.code, second.stderr).toBe(0);
    expect(model.requests.map((q) => Boolean(q.stream_options))).toEqual([true, false, false]);
  });
});
