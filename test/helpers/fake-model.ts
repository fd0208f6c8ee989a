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
 * answered with errors; `model.push(...steps)` appends steps; GET /v1/models lists one model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeToolCall = { id?: string; name: string; arguments: string | Record<string, unknown> };
export type FakeReply = { content?: string; tool_calls?: FakeToolCall[]; delayMs?: number; finish_reason?: string; usage?: false };
export type FakeError = { status: number; body?: unknown; headers?: Record<string, string> };
export type FakeHang = { hang: true };
export type ChatRequest = {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [k: string]: unknown;
};
export type FakeStep = FakeReply | FakeError | FakeHang | ((req: ChatRequest, index: number) => FakeReply | FakeError | FakeHang | Promise<FakeReply | FakeError | FakeHang>);

export type FakeModel = {
  /** Base URL for OPENAI_BASE_URL, e.g. http://127.0.0.1:40123/v1 */
  url: string;
  port: number;
  requests: ChatRequest[];
  /** Authorization headers received, one per request. */
  authHeaders: Array<string | undefined>;
  push(...steps: FakeStep[]): void;
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

export async function startFakeModel(script: FakeStep[] = []): Promise<FakeModel> {
  const steps = [...script];
  const requests: ChatRequest[] = [];
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
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const id = `chatcmpl-${++counter}`;
    const calls = (reply.tool_calls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
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
        choices: [{ index: 0, message: { role: 'assistant', content: reply.content ?? null, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: finish }],
        ...(usage ? { usage } : {}),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
    chunk({ role: 'assistant', content: '' });
    const content = reply.content ?? '';
    if (content) {
      const half = Math.ceil(content.length / 2);
      chunk({ content: content.slice(0, half) });
      if (content.length > half) chunk({ content: content.slice(half) });
    }
    calls.forEach((c, i) => {
      const args = c.function.arguments;
      const half = Math.ceil(args.length / 2);
      chunk({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.function.name, arguments: args.slice(0, half) } }] });
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] });
    });
    chunk({}, finish);
    const options = body.stream_options as { include_usage?: boolean } | undefined;
    if (usage && options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    authHeaders,
    push: (...more) => steps.push(...more),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
