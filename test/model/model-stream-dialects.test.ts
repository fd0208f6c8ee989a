/**
 * The stream dialects of OpenAI-compatible servers (who sends which: src/model/tool-call-stream.ts),
 * each spoken by the fake model and read through the real `openai` SDK stream by the model
 * client, then end to end through a real daemon with `hermesd run`: no tool call is dropped,
 * merged, renamed or given arguments nobody sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createModelClient, modelSettings } from '../../src/model/client.js';
import { ToolCallAssembler } from '../../src/model/tool-call-stream.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type ChatRequest, type FakeModel, type FakeReply, type StreamDialect } from '../helpers/fake-model.js';

const messages = [
  { role: 'system' as const, content: 'You are a test.' },
  { role: 'user' as const, content: 'hi' },
];
const fn = (name: string) => ({ type: 'function' as const, function: { name, description: name, parameters: { type: 'object', properties: {} } } });
const tools = [fn('read_file'), fn('search_files'), fn('terminal')];

const ONE = [{ id: 'call_a', name: 'read_file', arguments: { path: 'README.md' } }];
const TWO = [
  { id: 'call_a', name: 'read_file', arguments: { path: 'README.md' } },
  { id: 'call_b', name: 'search_files', arguments: { pattern: 'TODO', path: 'src' } },
];
const SAME_TOOL_TWICE = [
  { id: 'call_a', name: 'read_file', arguments: { path: 'README.md' } },
  { id: 'call_b', name: 'read_file', arguments: { path: 'NOTES.md' } },
];
const expected = (calls: typeof TWO) => calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) }));

type Case = { name: string; dialect: StreamDialect; calls: typeof TWO; reply?: Partial<FakeReply>; content?: string };

const CASES: Case[] = [
  { name: "OpenAI's own stream (index on every delta, name once, arguments in pieces)", dialect: {}, calls: TWO },
  { name: 'deltas without index (Gemini, Ollama < 0.5, mistral.rs): one call', dialect: { index: 'omit' }, calls: ONE },
  { name: 'deltas without index: two calls told apart by id', dialect: { index: 'omit' }, calls: TWO },
  { name: 'deltas without index and with an empty id on later fragments', dialect: { index: 'omit', laterId: 'empty', argumentChunks: 4 }, calls: TWO },
  { name: 'deltas without index, the same tool twice', dialect: { index: 'omit', argumentChunks: 3 }, calls: SAME_TOOL_TWICE },
  { name: 'index 0 for every parallel call (Ollama), told apart by id', dialect: { index: 'zero', argumentChunks: 1 }, calls: SAME_TOOL_TWICE },
  { name: 'the name repeated on every fragment (MiniMax via NVIDIA NIM)', dialect: { name: 'every', argumentChunks: 5 }, calls: TWO },
  { name: 'the name repeated on every fragment, without index', dialect: { name: 'every', index: 'omit', argumentChunks: 5 }, calls: ONE },
  { name: 'the name split across fragments (Gemini: `read_` + `file`)', dialect: { name: 'split' }, calls: TWO },
  { name: 'the name split across fragments, without index', dialect: { name: 'split', index: 'omit' }, calls: ONE },
  { name: 'the name after the arguments (SGLang)', dialect: { name: 'last', argumentChunks: 3 }, calls: TWO },
  { name: 'arguments whole in one chunk', dialect: { argumentChunks: 1 }, calls: TWO },
  { name: 'arguments as a JSON object, not a string (llama.cpp server, MiniMax)', dialect: { argumentsAsObject: true }, calls: TWO },
  { name: 'an empty id on later fragments (Qwen via DashScope)', dialect: { laterId: 'empty', argumentChunks: 4 }, calls: TWO },
  { name: 'the id repeated on every fragment', dialect: { laterId: 'repeat', argumentChunks: 4 }, calls: TWO },
  { name: 'a different id on later fragments of one call (Poolside)', dialect: { laterId: 'change', argumentChunks: 4 }, calls: TWO },
  { name: 'the arguments so far resent on every fragment (DeepSeek, Qianfan)', dialect: { resendArguments: 'cumulative', argumentChunks: 4 }, calls: TWO },
  { name: 'the complete arguments resent after the pieces (GLM, proxies)', dialect: { resendArguments: 'final', argumentChunks: 3 }, calls: TWO },
  { name: 'tool calls in the final chunk with finish_reason "stop"', dialect: { toolCallsWithFinish: true }, calls: TWO, reply: { finish_reason: 'stop' } },
  { name: 'content and tool calls in the same delta', dialect: { contentWithToolCalls: true }, calls: ONE, content: 'Reading it now.' },
  {
    name: 'reasoning_content before the answer (DeepSeek)',
    dialect: { reasoning: { field: 'reasoning_content', text: 'Think: read the file.' } },
    calls: ONE,
    content: 'Reading.',
  },
  {
    name: 'reasoning before the answer (vLLM, Ollama)',
    dialect: { reasoning: { field: 'reasoning', text: 'Think: read the file.' } },
    calls: ONE,
    content: 'Reading.',
  },
  { name: 'tool calls without `type`', dialect: { omitType: true }, calls: TWO },
];

describe('model client: each stream dialect through the real openai SDK stream', () => {
  let model: FakeModel | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  it.each(CASES)('$name', async ({ dialect, calls, reply, content }) => {
    model = await startFakeModel([{ tool_calls: calls, ...(content ? { content } : {}), ...reply, dialect }]);
    const client = createModelClient({ ...modelSettings({ baseUrl: model.url, apiKey: 'k', name: 'fake' }, {}), stream: true });
    const streamed: string[] = [];
    const turn = await client.complete({ messages, tools, onText: (d) => streamed.push(d) });
    expect(turn.toolCalls).toEqual(expected(calls));
    expect(turn.content).toBe(content ?? '');
    expect(streamed.join('')).toBe(content ?? '');
    expect(model.requests[0]!.stream).toBe(true);
  });

  it.each([
    ['arguments as a JSON object (TGI, llama.cpp server)', { argumentsAsObject: true }],
    ['tool calls without `type`', { omitType: true }],
  ] as const)('plain answers: %s', async (_name, dialect) => {
    model = await startFakeModel([{ tool_calls: TWO, dialect }]);
    const client = createModelClient({ ...modelSettings({ baseUrl: model.url, apiKey: 'k', name: 'fake' }, {}), stream: false });
    expect((await client.complete({ messages, tools })).toolCalls).toEqual(expected(TWO));
  });
});

describe('tool-call assembly rules (deltas as servers send them)', () => {
  const assemble = (chunks: unknown[][], known = ['read_file', 'terminal', 'search_files']) => {
    const a = new ToolCallAssembler();
    for (const c of chunks) a.add(c as never);
    return a.result(new Set(known));
  };

  it('a name whose fragments repeat a letter is joined, not mistaken for a repeat, when the tool set says so', () => {
    // "aa" split as "a" + "a": the repeat rule alone would read one "a".
    expect(assemble([[{ index: 0, id: 'x', function: { name: 'a' } }], [{ index: 0, function: { name: 'a', arguments: '{}' } }]], ['aa'])).toEqual([
      { id: 'x', name: 'aa', arguments: '{}' },
    ]);
  });

  it('a cumulative name (`term`, then `terminal`) is taken once', () => {
    expect(
      assemble([[{ index: 0, id: 'x', function: { name: 'term' } }], [{ index: 0, function: { name: 'terminal', arguments: '{"command":"ls"}' } }]]),
    ).toEqual([{ id: 'x', name: 'terminal', arguments: '{"command":"ls"}' }]);
  });

  it('interleaved fragments of two calls sharing index 0 go to the call their id names', () => {
    expect(
      assemble([
        [{ index: 0, id: 'A', function: { name: 'read_file', arguments: '{"path":' } }],
        [{ index: 0, id: 'B', function: { name: 'terminal', arguments: '{"command":' } }],
        [{ index: 0, id: 'A', function: { arguments: '"a"}' } }],
        [{ index: 0, id: 'B', function: { arguments: '"ls"}' } }],
      ]),
    ).toEqual([
      { id: 'A', name: 'read_file', arguments: '{"path":"a"}' },
      { id: 'B', name: 'terminal', arguments: '{"command":"ls"}' },
    ]);
  });

  it('two complete calls in one delta without index or id stay two calls', () => {
    expect(
      assemble([[{ function: { name: 'read_file', arguments: '{"path":"a"}' } }, { function: { name: 'read_file', arguments: '{"path":"b"}' } }]]),
    ).toEqual([
      { id: 'call_0', name: 'read_file', arguments: '{"path":"a"}' },
      { id: 'call_1', name: 'read_file', arguments: '{"path":"b"}' },
    ]);
  });

  it('nested JSON arriving in pieces that start with `{` is appended, not taken for a resend', () => {
    expect(
      assemble([[{ index: 0, id: 'x', function: { name: 'terminal', arguments: '{"env":' } }], [{ index: 0, function: { arguments: '{"A":"1"}}' } }]]),
    ).toEqual([{ id: 'x', name: 'terminal', arguments: '{"env":{"A":"1"}}' }]);
  });

  it('duplicate ids from a server are made unique so tool results can answer each call', () => {
    const r = assemble([
      [{ index: 0, id: 'same', function: { name: 'read_file', arguments: '{}' } }],
      [{ index: 1, id: 'same', function: { name: 'terminal', arguments: '{}' } }],
    ]);
    expect(r.map((c) => c.name)).toEqual(['read_file', 'terminal']);
    expect(new Set(r.map((c) => c.id)).size).toBe(2);
  });
});

describe('hermesd run: a real daemon completes a tool-using task in every dialect', () => {
  let t: TestEnv;
  let repo: string;
  let model: FakeModel;
  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ 'README.md': '# demo readme\n', 'NOTES.md': 'notes of the day\n', 'src/a.ts': '// TODO: ship\n' });
    model = await startFakeModel();
  });
  afterAll(async () => {
    await t.cleanup();
    await model.close();
  });

  /** The answer reports what each tool result said, so the test sees the tools really ran. */
  const answerFrom = (req: ChatRequest): FakeReply => ({
    content: req.messages
      .filter((m) => m.role === 'tool')
      .map(
        (m) =>
          `${m.tool_call_id}=${String(m.content).includes('demo readme') ? 'readme' : String(m.content).includes('notes of the day') ? 'notes' : String(m.content).includes('TODO') ? 'todo' : 'other'}`,
      )
      .join(','),
  });

  it.each(CASES.filter((c) => c.name !== "OpenAI's own stream (index on every delta, name once, arguments in pieces)"))(
    '$name',
    async ({ dialect, calls, reply, content }) => {
      model.clear();
      const before = model.requests.length;
      model.push({ tool_calls: calls, ...(content ? { content } : {}), ...reply, dialect }, answerFrom);
      const r = await t.cli(['run', 'use the tools', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
      expect(r.code, r.stderr).toBe(0);
      const seen = calls.map((c) => `${c.id}=${c.arguments.path === 'README.md' ? 'readme' : c.arguments.path === 'NOTES.md' ? 'notes' : 'todo'}`).join(',');
      expect(r.json()).toMatchObject({ status: 'completed', answer: seen });
      // The assistant turn sent back to the model carries exactly the calls it made.
      const followUp = model.requests[before + 1]!;
      const assistant = followUp.messages.find((m) => m.role === 'assistant' && m.tool_calls);
      expect(assistant!.tool_calls!.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))).toEqual(expected(calls));
    },
  );
});
