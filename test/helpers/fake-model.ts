/**
 * The one stand-in of the test suite: a scripted OpenAI-compatible Chat Completions server
 * on 127.0.0.1 (random port), plain JSON and streaming (SSE) both.
 *
 *   const model = await startFakeModel([
 *     { tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
 *     (req) => ({ content: `saw ${req.messages.length} messages` }),
 *     { status: 429, headers: { 'retry-after': '0' } },
 *     { hang: true },                      // never answers until the client goes away
 *   ]);
 *   env.OPENAI_BASE_URL = model.url;       // ends in /v1
 *   …
 *   model.requests[0].messages[0].content  // exact system bytes received
 *   await model.close();
 *
 * Each POST /v1/chat/completions consumes the next step:
 * - a reply `{content?, tool_calls?: [{id?, name, arguments: string | object}], delayMs?, finish_reason?}`,
 *   or a function `(request, index) => reply | error step` (or a Promise of one) computing it from the request;
 * - an error step `{status, body?, headers?}`: answered with that HTTP status and an
 *   OpenAI-shaped error body (`{error: {message, type, code}}` unless `body` is given);
 * - `{hang: true}`: holds the request open (for timeout and cancellation tests).
 * When the request has `stream: true` the reply is sent as SSE chunks (`data: {...}\n\n`): content
 * in two pieces, each tool call's arguments split across two deltas sharing one index, a final
 * chunk with finish_reason, then `data: [DONE]`. Usage (`prompt_tokens` = request messages JSON
 * length / 4, `completion_tokens` = reply JSON length / 4, both at least 1) is in every plain
 * answer, and in a stream as a last `choices: []` chunk only when the request asks for it with
 * `stream_options: {include_usage: true}`; a reply with `usage: false` reports none. A request after the script is exhausted gets a
 * 500 saying so. `requests` records every request body (parsed JSON), in order, including those
 * answered with errors; `model.push(...steps)` appends steps, `model.clear()` drops the unconsumed
 * ones; GET /v1/models lists one model.
 *
 * Post-task reviews: the daemon reviews a delivered task in the background, asking the model
 * with a `review` json_schema. Unless the test is about the review (`{ reviews: 'script' }`),
 * such a request is answered `{"candidates": []}` outside the script and recorded in
 * `reviewRequests`, not `requests`: a test scripting tasks keeps its steps and its indexes.
 *
 * Dialects: real OpenAI-compatible servers stream tool calls in shapes OpenAI does not (see
 * src/model/tool-call-stream.ts for who sends what). A reply's `dialect`, or the default given
 * as `startFakeModel(script, { dialect })`, makes the fake speak one:
 *   { index: 'omit' }                        no `index` on tool-call deltas (Gemini, Ollama < 0.5, mistral.rs)
 *   { index: 'zero' }                        `index: 0` for every call (Ollama parallel calls)
 *   { name: 'every' | 'split' | 'last' }     name on every fragment (MiniMax via NIM) / split in two (Gemini) / after the arguments (SGLang)
 *   { laterId: 'empty' | 'repeat' | 'change' } id on later fragments: "" (Qwen) / repeated (koog) / a different one (Poolside)
 *   { argumentChunks: n }                    arguments in n pieces (1 = whole in one chunk)
 *   { argumentsAsObject: true }              arguments as a JSON object, not a string (llama.cpp, MiniMax; plain answers too)
 *   { resendArguments: 'cumulative' | 'final' } every piece carries the arguments so far (DeepSeek) / the whole arguments again at the end (GLM)
 *   { toolCallsWithFinish: true }            the last tool-call delta carries finish_reason (use with `finish_reason: 'stop'`)
 *   { contentWithToolCalls: true }           the last content piece rides in the first tool-call delta
 *   { reasoning: {field, text} }             reasoning streamed in `reasoning_content` / `reasoning` first (DeepSeek, vLLM)
 *   { omitType: true }                       tool calls without `type` (plain answers and deltas)
 * Without a dialect the stream is OpenAI's: index on every delta, id and name on the first,
 * arguments in two pieces.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeToolCall = { id?: string; name: string; arguments: string | Record<string, unknown> };
export type StreamDialect = {
  index?: 'each' | 'omit' | 'zero';
  laterId?: 'omit' | 'empty' | 'repeat' | 'change';
  name?: 'once' | 'every' | 'split' | 'last';
  argumentChunks?: number;
  argumentsAsObject?: boolean;
  resendArguments?: 'cumulative' | 'final';
  toolCallsWithFinish?: boolean;
  contentWithToolCalls?: boolean;
  reasoning?: { field: 'reasoning_content' | 'reasoning'; text: string };
  omitType?: boolean;
};
export type FakeReply = { content?: string; tool_calls?: FakeToolCall[]; delayMs?: number; finish_reason?: string; usage?: false; dialect?: StreamDialect };
export type FakeError = { status: number; body?: unknown; headers?: Record<string, string> };
export type FakeHang = { hang: true };
export type ChatRequest = {
  model: string;
  stream?: boolean;
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [k: string]: unknown;
};
export type FakeStep =
  | FakeReply
  | FakeError
  | FakeHang
  | ((req: ChatRequest, index: number) => FakeReply | FakeError | FakeHang | Promise<FakeReply | FakeError | FakeHang>);

export type FakeModel = {
  /** Base URL for OPENAI_BASE_URL, e.g. http://127.0.0.1:40123/v1 */
  url: string;
  port: number;
  requests: ChatRequest[];
  /** Post-task review requests answered outside the script (unless `reviews: 'script'`). */
  reviewRequests: ChatRequest[];
  /** Authorization headers received, one per request. */
  authHeaders: Array<string | undefined>;
  push(...steps: FakeStep[]): void;
  /** Drops the steps not yet consumed (a test that failed midway leaves none for the next). */
  clear(): void;
  close(): Promise<void>;
};

const isError = (s: unknown): s is FakeError => typeof s === 'object' && s !== null && 'status' in s;
const isHang = (s: unknown): s is FakeHang => typeof s === 'object' && s !== null && 'hang' in s;

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, step: FakeError): void {
  const body = step.body ?? { error: { message: `fake model error ${step.status}`, type: 'fake_error', code: String(step.status) } };
  const text = JSON.stringify(body);
  res.writeHead(step.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...step.headers });
  res.end(text);
}

export type FakeModelOptions = {
  /** The dialect of every reply that names none. */
  dialect?: StreamDialect;
  /** 'script': review requests take script steps like any other (tests of the review); default: answered with no candidates. */
  reviews?: 'script' | 'none';
};

const isReviewRequest = (r: ChatRequest) => (r.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === 'review';

/** The fragments one tool call is streamed as, in a dialect: which carry the name, which the arguments. */
function fragmentsOf(call: { name: string; args: string; object?: unknown }, d: StreamDialect): Array<{ name?: string; args?: unknown }> {
  let pieces: unknown[];
  if (d.argumentsAsObject && call.object !== undefined) pieces = [call.object];
  else {
    const n = Math.max(1, d.argumentChunks ?? 2);
    const size = Math.ceil(call.args.length / n) || 1;
    const cuts: string[] = [];
    for (let i = 0; i < call.args.length; i += size) cuts.push(call.args.slice(i, i + size));
    if (!cuts.length) cuts.push('');
    pieces = d.resendArguments === 'cumulative' ? cuts.map((_, i) => cuts.slice(0, i + 1).join('')) : cuts;
    if (d.resendArguments === 'final') pieces.push(call.args);
  }
  const frags: Array<{ name?: string; args?: unknown }> = pieces.map((args) => ({ args }));
  const name = d.name ?? 'once';
  if (name === 'once') frags[0]!.name = call.name;
  else if (name === 'every') frags.forEach((f) => (f.name = call.name));
  else if (name === 'split') {
    if (frags.length < 2) frags.unshift({});
    const half = Math.ceil(call.name.length / 2);
    frags[0]!.name = call.name.slice(0, half);
    frags[1]!.name = call.name.slice(half);
  } else frags.push({ name: call.name });
  return frags;
}

export async function startFakeModel(script: FakeStep[] = [], options: FakeModelOptions = {}): Promise<FakeModel> {
  const steps = [...script];
  const requests: ChatRequest[] = [];
  const reviewRequests: ChatRequest[] = [];
  const authHeaders: Array<string | undefined> = [];
  let counter = 0;
  const open = new Set<ServerResponse>();

  const server = createServer(async (req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      sendError(res, { status: 404, body: { error: { message: `no route ${req.method} ${req.url}` } } });
      return;
    }
    const body = (await readJson(req)) as ChatRequest;
    if (options.reviews !== 'script' && isReviewRequest(body)) {
      reviewRequests.push(body);
      const text = JSON.stringify({
        id: 'fake-review',
        object: 'chat.completion',
        created: 0,
        model: 'fake-model',
        choices: [{ index: 0, message: { role: 'assistant', content: '{"candidates":[]}' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const index = requests.length;
    requests.push(body);
    authHeaders.push(req.headers.authorization);
    let step = steps.shift();
    if (typeof step === 'function') step = await step(body, index);
    if (step === undefined) {
      sendError(res, { status: 500, body: { error: { message: `fake model: script exhausted at request ${index}` } } });
      return;
    }
    if (isHang(step)) return; // held open; closed by the client or close()
    if (isError(step)) {
      sendError(res, step);
      return;
    }
    const reply = step;
    const dialect = reply.dialect ?? options.dialect ?? {};
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const id = `chatcmpl-${++counter}`;
    const calls = (reply.tool_calls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      object: typeof c.arguments === 'string' ? undefined : c.arguments,
    }));
    const wireCall = (c: (typeof calls)[number]) => ({
      id: c.id,
      ...(dialect.omitType ? {} : { type: c.type }),
      function: { name: c.function.name, arguments: dialect.argumentsAsObject && c.object !== undefined ? c.object : c.function.arguments },
    });
    const finish = reply.finish_reason ?? (calls.length ? 'tool_calls' : 'stop');
    const created = Math.floor(Date.now() / 1000);
    const prompt_tokens = Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4));
    const completion_tokens = Math.max(1, Math.ceil(JSON.stringify({ content: reply.content ?? '', calls }).length / 4));
    const usage = reply.usage === false ? undefined : { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
    if (!body.stream) {
      const text = JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: reply.content ?? null, ...(calls.length ? { tool_calls: calls.map(wireCall) } : {}) },
            finish_reason: finish,
          },
        ],
        ...(usage ? { usage } : {}),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`,
      );
    chunk({ role: 'assistant', content: '' });
    if (dialect.reasoning) {
      const r = dialect.reasoning;
      const half = Math.ceil(r.text.length / 2);
      chunk({ content: null, [r.field]: r.text.slice(0, half) });
      chunk({ content: null, [r.field]: r.text.slice(half) });
    }
    const content = reply.content ?? '';
    const contentPieces = content ? [content.slice(0, Math.ceil(content.length / 2)), content.slice(Math.ceil(content.length / 2))].filter(Boolean) : [];
    // With contentWithToolCalls the last content piece waits for the first tool-call delta.
    const carried = dialect.contentWithToolCalls && calls.length ? contentPieces.pop() : undefined;
    for (const piece of contentPieces) chunk({ content: piece });
    const deltas: Array<Record<string, unknown>> = [];
    calls.forEach((c, i) => {
      fragmentsOf({ name: c.function.name, args: c.function.arguments, object: c.object }, dialect).forEach((f, k) => {
        const tc: Record<string, unknown> = {};
        if (dialect.index !== 'omit') tc.index = dialect.index === 'zero' ? 0 : i;
        const later = dialect.laterId ?? 'omit';
        if (k === 0) tc.id = c.id;
        else if (later === 'empty') tc.id = '';
        else if (later === 'repeat') tc.id = c.id;
        else if (later === 'change') tc.id = `${c.id}_${k}`;
        if (k === 0 && !dialect.omitType) tc.type = 'function';
        const fn: Record<string, unknown> = {};
        if (f.name !== undefined) fn.name = f.name;
        if (f.args !== undefined) fn.arguments = f.args;
        tc.function = fn;
        deltas.push({ tool_calls: [tc] });
      });
    });
    if (carried !== undefined && deltas[0]) deltas[0] = { content: carried, ...deltas[0] };
    deltas.forEach((d, k) => chunk(d, dialect.toolCallsWithFinish && k === deltas.length - 1 ? finish : null));
    if (!(dialect.toolCallsWithFinish && deltas.length)) chunk({}, finish);
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (usage && streamOptions?.include_usage)
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    reviewRequests,
    authHeaders,
    push: (...more) => steps.push(...more),
    clear: () => {
      steps.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
