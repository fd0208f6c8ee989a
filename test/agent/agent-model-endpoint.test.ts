/**
 * The model client against the scripted OpenAI-compatible server: streaming and plain
 * answers (tool-call deltas accumulated), and every endpoint failure a clear error within
 * seconds — unreachable port, 401, 429 then success, 500, a server that never answers.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient, modelSettings, ModelError, Cancelled, type ModelSettings } from '../../src/model/client.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';

const messages = [
  { role: 'system' as const, content: 'You are a test.' },
  { role: 'user' as const, content: 'hi' },
];
const tools = [
  { type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

function settings(url: string, over: Partial<ModelSettings> = {}): ModelSettings {
  return { ...modelSettings({ baseUrl: url, apiKey: 'k', name: 'fake' }, {}), ...over };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function timed<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const t = Date.now();
  try {
    const value = await p;
    return { ms: Date.now() - t, value };
  } catch (error) {
    return { ms: Date.now() - t, error };
  }
}

describe('model client', () => {
  let model: FakeModel | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  for (const stream of [true, false]) {
    it(`${stream ? 'streaming' : 'non-streaming'}: text and tool calls come back whole`, async () => {
      model = await startFakeModel([
        {
          content: 'Let me look.',
          tool_calls: [
            { id: 'c1', name: 'read_file', arguments: { path: 'README.md' } },
            { id: 'c2', name: 'read_file', arguments: { path: 'src/a very long name.ts' } },
          ],
        },
        { content: 'All done here.' },
      ]);
      const client = createModelClient(settings(model.url, { stream }));
      const deltas: string[] = [];
      const first = await client.complete({ messages, tools, onText: (d) => deltas.push(d) });
      expect(first.content).toBe('Let me look.');
      expect(first.toolCalls).toEqual([
        { id: 'c1', name: 'read_file', arguments: '{"path":"README.md"}' },
        { id: 'c2', name: 'read_file', arguments: '{"path":"src/a very long name.ts"}' },
      ]);
      expect(first.finishReason).toBe('tool_calls');
      const second = await client.complete({ messages, tools, onText: (d) => deltas.push(d) });
      expect(second).toMatchObject({ content: 'All done here.', toolCalls: [], finishReason: 'stop' });
      expect(model.requests[0]!.stream ?? false).toBe(stream);
      expect(model.requests[0]!.messages).toEqual(messages);
      expect(model.requests[0]!.tools).toEqual(tools);
      if (stream) expect(deltas.length).toBeGreaterThan(2);
      else expect(deltas).toEqual([]);
      if (stream) expect(deltas.join('')).toBe('Let me look.All done here.');
    });
  }

  it('an unreachable endpoint is a clear error within seconds', async () => {
    const port = await freePort();
    const client = createModelClient(settings(`http://127.0.0.1:${port}/v1`));
    const r = await timed(client.complete({ messages }));
    expect(r.ms).toBeLessThan(6_000);
    expect(r.error).toBeInstanceOf(ModelError);
    const e = r.error as ModelError;
    expect(e.code).toBe('model-unreachable');
    expect(e.message).toContain(`http://127.0.0.1:${port}/v1`);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.message).toContain('OPENAI_BASE_URL');
  });

  it('no endpoint configured: fails at once, naming the settings, and contacts nothing (not even the default endpoint)', async () => {
    const unconfigured = modelSettings({ name: 'm' }, {});
    expect(unconfigured.configured).toBe(false);
    // Were it contacted, the default endpoint would be this local server: it must see no request.
    model = await startFakeModel([{ content: 'should never be asked' }]);
    const r = await timed(createModelClient({ ...unconfigured, baseUrl: model.url }).complete({ messages }));
    expect((r.error as ModelError | undefined)?.code, 'a request went out with no endpoint configured').toBe('model-unconfigured');
    expect((r.error as Error).message).toContain('OPENAI_BASE_URL');
    expect(model.requests).toHaveLength(0);
  });

  it('401 fails at once, naming the key settings', async () => {
    model = await startFakeModel([{ status: 401, body: { error: { message: 'Incorrect API key provided' } } }]);
    const r = await timed(createModelClient(settings(model.url)).complete({ messages }));
    expect(r.ms).toBeLessThan(2_000);
    expect((r.error as ModelError).code).toBe('model-auth');
    expect((r.error as Error).message).toContain('Incorrect API key provided');
    expect((r.error as Error).message).toContain('OPENAI_API_KEY');
    expect(model.requests).toHaveLength(1);
  });

  it('429 then success: retried with backoff', async () => {
    model = await startFakeModel([{ status: 429, headers: { 'retry-after': '0' } }, { content: 'ok after retry' }]);
    const r = await timed(createModelClient(settings(model.url)).complete({ messages }));
    expect(r.error).toBeUndefined();
    expect(r.value!.content).toBe('ok after retry');
    expect(model.requests).toHaveLength(2);
    expect(r.ms).toBeLessThan(4_000);
  });

  it('429 with a long Retry-After is reported instead of waited for', async () => {
    model = await startFakeModel([{ status: 429, headers: { 'retry-after': '120' } }]);
    const r = await timed(createModelClient(settings(model.url)).complete({ messages }));
    expect(r.ms).toBeLessThan(2_000);
    expect((r.error as ModelError).code).toBe('model-rate-limited');
    expect((r.error as Error).message).toContain('120 s');
  });

  it('500 every time: a bounded number of retries, then a clear error', async () => {
    model = await startFakeModel([{ status: 500 }, { status: 500 }, { status: 500 }, { content: 'too late' }]);
    const r = await timed(createModelClient(settings(model.url)).complete({ messages }));
    expect(r.ms).toBeLessThan(6_000);
    expect((r.error as ModelError).code).toBe('model-server-error');
    expect((r.error as Error).message).toMatch(/HTTP 500.*after 3 attempts/);
    expect(model.requests).toHaveLength(3);
  });

  it('a server that never answers hits the per-request timeout', async () => {
    model = await startFakeModel([{ hang: true }]);
    const r = await timed(createModelClient(settings(model.url, { timeoutMs: 700 })).complete({ messages }));
    expect(r.ms).toBeLessThan(3_000);
    expect((r.error as ModelError).code).toBe('model-timeout');
    expect((r.error as Error).message).toContain('700 ms');
  });

  it('cancelling the signal ends a pending call as Cancelled', async () => {
    model = await startFakeModel([{ hang: true }]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const r = await timed(createModelClient(settings(model.url)).complete({ messages, signal: abort.signal }));
    expect(r.ms).toBeLessThan(2_000);
    expect(r.error).toBeInstanceOf(Cancelled);
  });

  it('settings: environment variables win over config', () => {
    const s = modelSettings(
      { baseUrl: 'http://config/v1/', name: 'from-config', apiKey: 'c', maxTurns: 7, timeoutMs: 1000, stream: false },
      { OPENAI_BASE_URL: 'http://env/v1', HERMESD_MODEL: 'from-env' },
    );
    expect(s).toEqual({ configured: true, baseUrl: 'http://env/v1', apiKey: 'c', name: 'from-env', timeoutMs: 1000, stream: false, maxTurns: 7 });
  });

  it('settings: an endpoint is configured by a base URL or a key, in the environment or the config; a model name alone configures none', () => {
    const configured = (config: Parameters<typeof modelSettings>[0], env: NodeJS.ProcessEnv) => modelSettings(config, env).configured;
    expect(configured({}, {})).toBe(false);
    expect(configured({ name: 'm' }, { HERMESD_MODEL: 'm' })).toBe(false);
    expect(configured({}, { OPENAI_BASE_URL: 'http://env/v1' })).toBe(true);
    expect(configured({}, { OPENAI_API_KEY: 'k' })).toBe(true);
    expect(configured({ baseUrl: 'http://config/v1' }, {})).toBe(true);
    expect(configured({ apiKey: 'k' }, {})).toBe(true);
  });
});
