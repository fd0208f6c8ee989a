/**
 * Scripted model servers for the real agent CLIs: each listens on 127.0.0.1 (random port),
 * speaks one client's API as the real service streams it, plays a script and records every
 * request, so a test can say what reached the model (the memory snapshot, recall, a tool
 * result naming a rule) and what the model did (a tool call the client then ran).
 *
 *   const model = await startAgentModel('anthropic', [
 *     { tools: [{ name: 'Write', input: { file_path: '/abs/gen/a.ts', content: 'x' } }] },
 *     (req) => ({ text: `saw ${req.toolResults.length} results` }),
 *   ]);
 *   env.ANTHROPIC_BASE_URL = model.url;
 *   …
 *   model.requests[1].toolResults[0].output   // what the client sent back for the Write
 *
 * Dialects (what each client speaks):
 * - `anthropic`, Claude Code: POST /v1/messages (`stream: true`: SSE `message_start`, `ping`,
 *   `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
 *   `content_block_stop` per block, `message_delta` with the stop reason and usage,
 *   `message_stop`; a plain JSON message otherwise), POST /v1/messages/count_tokens.
 * - `responses`, Codex: POST …/responses, SSE `response.created`, `response.in_progress`, per
 *   output item `response.output_item.added`, then for a message `response.content_part.added`,
 *   `response.output_text.delta`…, `response.output_text.done`, `response.content_part.done`,
 *   for a function call `response.function_call_arguments.delta`…,
 *   `response.function_call_arguments.done` (a tool the request declares as `custom`, such as
 *   Codex's freeform apply_patch, is a `custom_tool_call` with `response.custom_tool_call_input.delta`),
 *   `response.output_item.done`, and `response.completed` with the whole output and usage.
 * - `gemini`, Gemini CLI: POST /v1beta/models/<model>:streamGenerateContent?alt=sse (SSE of
 *   GenerateContentResponse chunks: text parts, `functionCall` parts, the last with
 *   `finishReason` and `usageMetadata`), :generateContent (one JSON response), :countTokens.
 *
 * Which requests play the script: the agent loop's, recognised by the tools they declare
 * (every client sends its tool list with each turn of the loop). The clients also ask the
 * model on the side — a session title, a routing or next-speaker classifier, a quota probe —
 * without tools; those get a short text (where the request asks for JSON, a value of its
 * schema's shape) and are recorded in `side`, so the script's turns stay in order. A turn of the
 * loop after the script ran out is answered with EXHAUSTED_TEXT (an answer, not an error: the
 * clients retry errors with back-off) and counted in `exhausted`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Dialect = 'anthropic' | 'responses' | 'gemini';

/**
 * A tool call. `namespace`: Codex puts an MCP server's tools in a namespace tool
 * (`mcp__<server>`) and the model names it beside the function's own name.
 */
export type ToolCall = { name: string; input: Record<string, unknown>; id?: string; namespace?: string };
/** One answer of the model: words, or tool calls (with words before them, if any). */
export type Turn = { text: string } | { tools: ToolCall[]; text?: string };
/** A turn, or one computed from the request (a Promise holds the answer back: a model that is still thinking). */
export type Step = Turn | ((req: ModelRequest, index: number) => Turn | Promise<Turn>);

/** What the client sent back for one tool call, read from the request that carries it. */
export type ToolResult = { id?: string; name?: string; output: string; isError?: boolean };

export type ModelRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** Every string the body carries, one per line: for "did X reach the model". */
  text: string;
  /** Names of the tools the request declares. */
  tools: string[];
  /** Tool results in the request's last turn (the answers to the previous turn's calls). */
  toolResults: ToolResult[];
  /** When the request arrived, and when its answer was sent whole (performance.now(), ms). */
  at: number;
  answeredAt?: number;
};

export type AgentModel = {
  dialect: Dialect;
  /** The base URL the client is pointed at (Anthropic: origin; Responses: …/v1; Gemini: origin). */
  url: string;
  port: number;
  /** The agent loop's requests, in order: the script's turns answered them. */
  requests: ModelRequest[];
  /** Requests outside the loop (titles, classifiers, token counts), answered without the script. */
  side: ModelRequest[];
  /** Loop requests answered after the script ran out. */
  exhausted: number;
  push(...steps: Step[]): void;
  /** Drops the steps not yet played (a session that failed midway leaves none for the next). */
  clear(): void;
  close(): Promise<void>;
};

/** What the loop gets once the script has run out: a plain answer that ends the client's turn. */
export const EXHAUSTED_TEXT = 'The scripted model has nothing more to say.';

/** Every string leaf of a JSON value, in document order. */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

/** Splits a string into `n` non-empty pieces (fewer when it is shorter): the stream carries each as a delta. */
function pieces(s: string, n = 2): string[] {
  if (s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** The text of a tool result's content: a string, text parts (`{type, text}`), or any JSON (its strings). */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c) && c.every((p) => p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'))
    return c.map((p) => (p as { text: string }).text).join('\n');
  return strings(c).join('\n');
}

/** A value of a JSON schema's shape (Gemini's upper-case types too): what a side request asking for JSON gets. */
function sample(schema: any): unknown {
  const type = String(schema?.type ?? (schema?.properties ? 'object' : 'string')).toLowerCase();
  if (Array.isArray(schema?.enum) && schema.enum.length) return schema.enum[0];
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, v]) => [k, sample(v)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    default:
      return 'ok';
  }
}

// ---- the three dialects ------------------------------------------------------------------

type Wire = {
  /** Whether this request is the agent loop's (plays the script); undefined: not a model call (answered by `other`). */
  isLoop(req: ModelRequest): boolean | undefined;
  toolsOf(body: any): string[];
  toolResultsOf(body: any): ToolResult[];
  /** Answers a model call with a turn. */
  answer(req: ModelRequest, res: ServerResponse, turn: Turn, n: number): void;
  /** Answers what is not a model call (token counts, model lists); false: 404. */
  other(req: ModelRequest, res: ServerResponse): boolean;
  /** The JSON schema a side request asks its answer to follow (undefined: it asks for text). */
  jsonSchema(req: ModelRequest): unknown;
};

function sse(res: ServerResponse): (event: string | undefined, data: unknown) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return (event, data) => res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const usageOf = (req: ModelRequest, turn: Turn) => ({
  input: Math.max(1, Math.ceil(req.text.length / 4)),
  output: Math.max(1, Math.ceil(JSON.stringify(turn).length / 4)),
});

const callsOf = (turn: Turn, n: number, prefix: string) => ('tools' in turn ? turn.tools.map((c, i) => ({ ...c, id: c.id ?? `${prefix}${n}_${i}` })) : []);

/** Anthropic Messages, as api.anthropic.com answers Claude Code. */
const anthropic: Wire = {
  isLoop(req) {
    if (req.method !== 'POST') return undefined;
    if (/\/v1\/messages(\?|$)/.test(req.path)) return req.tools.length > 0;
    return undefined;
  },
  toolsOf: (body) => (Array.isArray(body?.tools) ? body.tools.map((t: { name?: string }) => String(t.name ?? '')) : []),
  toolResultsOf(body) {
    const last = Array.isArray(body?.messages) ? body.messages[body.messages.length - 1] : undefined;
    if (!last || last.role !== 'user' || !Array.isArray(last.content)) return [];
    return last.content
      .filter((b: { type?: string }) => b?.type === 'tool_result')
      .map((b: { tool_use_id?: string; content?: unknown; is_error?: boolean }) => ({
        id: b.tool_use_id,
        output: contentText(b.content),
        ...(b.is_error ? { isError: true } : {}),
      }));
  },
  jsonSchema: () => undefined,
  other(req, res) {
    if (req.method === 'POST' && req.path.includes('/v1/messages/count_tokens')) {
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(req.text.length / 4)) });
      return true;
    }
    return false;
  },
  answer(req, res, turn, n) {
    const id = `msg_fake${n}`;
    const calls = callsOf(turn, n, 'toolu_fake');
    const text = 'text' in turn && turn.text ? turn.text : '';
    const usage = usageOf(req, turn);
    const stop = calls.length ? 'tool_use' : 'end_turn';
    const blocks = [...(text ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }))];
    if (!req.body?.stream) {
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: req.body?.model,
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      });
      return;
    }
    const send = sse(res);
    const ev = (type: string, data: Record<string, unknown>) => send(type, { type, ...data });
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: req.body?.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    });
    ev('ping', {});
    let index = 0;
    if (text) {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(text)) ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
      ev('content_block_stop', { index });
      index++;
    }
    for (const c of calls) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const p of pieces(JSON.stringify(c.input))) ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
      ev('content_block_stop', { index });
      index++;
    }
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } });
    ev('message_stop', {});
    res.end();
  },
};

/** OpenAI Responses, as api.openai.com streams it to Codex. */
const responses: Wire = {
  isLoop(req) {
    if (req.method === 'POST' && /\/responses(\?|$)/.test(req.path)) return req.tools.length > 0;
    return undefined;
  },
  // A namespace's functions are listed as `<namespace>__<name>` (an MCP server's tools: mcp__hermesd__check).
  toolsOf: (body) =>
    (Array.isArray(body?.tools) ? body.tools : []).flatMap((t: { name?: string; type?: string; tools?: Array<{ name: string }> }) => [
      String(t.name ?? t.type ?? ''),
      ...(t.type === 'namespace' && Array.isArray(t.tools) ? t.tools.map((f) => `${t.name}__${f.name}`) : []),
    ]),
  toolResultsOf(body) {
    const input: any[] = Array.isArray(body?.input) ? body.input : [];
    // The outputs after the model's last turn (Codex may put its own developer messages between them).
    const said = (it: any) => /_call$/.test(String(it?.type ?? '')) || (it?.type === 'message' && it.role === 'assistant');
    let from = input.length;
    while (from > 0 && !said(input[from - 1])) from--;
    const names = new Map<string, string>();
    for (const it of input) if (/_call$/.test(String(it?.type ?? '')) && it.call_id) names.set(it.call_id, it.name);
    return input
      .slice(from)
      .filter((it) => /_output$/.test(String(it?.type ?? '')))
      .map((it) => ({ id: it.call_id, name: names.get(it.call_id), output: contentText(it.output ?? it.tools) }));
  },
  jsonSchema: (req) => (req.body?.text?.format?.type === 'json_schema' ? (req.body.text.format.schema ?? {}) : undefined),
  other(req, res) {
    if (req.method === 'GET' && /\/models(\?|$)/.test(req.path)) {
      sendJson(res, 200, { object: 'list', data: [], models: [] });
      return true;
    }
    return false;
  },
  answer(req, res, turn, n) {
    const send = sse(res);
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>) => send(type, { type, sequence_number: seq++, ...data });
    const respId = `resp_fake${n}`;
    const model = req.body?.model;
    const created_at = Math.floor(Date.now() / 1000);
    const declared: Array<{ type?: string; name?: string }> = Array.isArray(req.body?.tools) ? req.body.tools : [];
    const custom = new Set(declared.filter((t) => t?.type === 'custom').map((t) => t.name));
    const toolSearch = declared.some((t) => t?.type === 'tool_search');
    const output: Array<Record<string, unknown>> = [];
    ev('response.created', { response: { id: respId, object: 'response', created_at, status: 'in_progress', model, output: [] } });
    ev('response.in_progress', { response: { id: respId, object: 'response', created_at, status: 'in_progress', model, output: [] } });
    const text = 'text' in turn && turn.text ? turn.text : '';
    if (text) {
      const item_id = `msg_fake${n}`;
      const output_index = output.length;
      ev('response.output_item.added', { output_index, item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      ev('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const p of pieces(text)) ev('response.output_text.delta', { item_id, output_index, content_index: 0, delta: p });
      ev('response.output_text.done', { item_id, output_index, content_index: 0, text });
      const part = { type: 'output_text', text, annotations: [] };
      ev('response.content_part.done', { item_id, output_index, content_index: 0, part });
      const item = { id: item_id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
      ev('response.output_item.done', { output_index, item });
      output.push(item);
    }
    for (const c of callsOf(turn, n, 'call_fake')) {
      const output_index = output.length;
      const item_id = `fc_fake${n}_${output_index}`;
      if (c.name === 'tool_search' && toolSearch) {
        // Codex's client-side tool discovery: it answers with tool_search_output and exposes what it found.
        const item = { id: item_id, type: 'tool_search_call', status: 'completed', call_id: c.id, execution: 'client', arguments: c.input };
        ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
        ev('response.output_item.done', { output_index, item });
        output.push(item);
        continue;
      }
      if (custom.has(c.name)) {
        // A freeform tool: its input is the raw text (`input.input`), not JSON arguments.
        const input = typeof c.input.input === 'string' ? c.input.input : JSON.stringify(c.input);
        ev('response.output_item.added', {
          output_index,
          item: { id: item_id, type: 'custom_tool_call', status: 'in_progress', call_id: c.id, name: c.name, input: '' },
        });
        for (const p of pieces(input)) ev('response.custom_tool_call_input.delta', { item_id, output_index, delta: p });
        ev('response.custom_tool_call_input.done', { item_id, output_index, input });
        const item = { id: item_id, type: 'custom_tool_call', status: 'completed', call_id: c.id, name: c.name, input };
        ev('response.output_item.done', { output_index, item });
        output.push(item);
        continue;
      }
      const args = JSON.stringify(c.input);
      const ns = c.namespace ? { namespace: c.namespace } : {};
      ev('response.output_item.added', {
        output_index,
        item: { id: item_id, type: 'function_call', status: 'in_progress', arguments: '', call_id: c.id, name: c.name, ...ns },
      });
      for (const p of pieces(args)) ev('response.function_call_arguments.delta', { item_id, output_index, delta: p });
      ev('response.function_call_arguments.done', { item_id, output_index, arguments: args });
      const item = { id: item_id, type: 'function_call', status: 'completed', arguments: args, call_id: c.id, name: c.name, ...ns };
      ev('response.output_item.done', { output_index, item });
      output.push(item);
    }
    const u = usageOf(req, turn);
    ev('response.completed', {
      response: {
        id: respId,
        object: 'response',
        created_at,
        status: 'completed',
        model,
        output,
        usage: {
          input_tokens: u.input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: u.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: u.input + u.output,
        },
      },
    });
    res.end();
  },
};

/** Gemini API (generativelanguage.googleapis.com), as Gemini CLI calls it with an API key. */
const gemini: Wire = {
  isLoop(req) {
    if (req.method !== 'POST') return undefined;
    if (/:(stream)?generateContent(\?|$)/i.test(req.path)) return req.tools.length > 0;
    return undefined;
  },
  toolsOf(body) {
    const tools: any[] = Array.isArray(body?.tools) ? body.tools : Array.isArray(body?.config?.tools) ? body.config.tools : [];
    return tools.flatMap((t) => (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations.map((f: { name: string }) => f.name) : []));
  },
  toolResultsOf(body) {
    const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
    const last = contents[contents.length - 1];
    if (!last || !Array.isArray(last.parts)) return [];
    return last.parts
      .filter((p: { functionResponse?: unknown }) => p?.functionResponse)
      .map((p: { functionResponse: { id?: string; name?: string; response?: unknown } }) => ({
        id: p.functionResponse.id,
        name: p.functionResponse.name,
        output: contentText(p.functionResponse.response),
      }));
  },
  jsonSchema(req) {
    const g = req.body?.generationConfig;
    return g?.responseJsonSchema ?? g?.responseSchema ?? (g?.responseMimeType === 'application/json' ? {} : undefined);
  },
  other(req, res) {
    if (req.method === 'POST' && /:countTokens(\?|$)/.test(req.path)) {
      sendJson(res, 200, { totalTokens: Math.max(1, Math.ceil(req.text.length / 4)) });
      return true;
    }
    return false;
  },
  answer(req, res, turn, n) {
    const u = usageOf(req, turn);
    const usageMetadata = { promptTokenCount: u.input, candidatesTokenCount: u.output, totalTokenCount: u.input + u.output };
    const modelVersion = /models\/([^:]+):/.exec(req.path)?.[1] ?? 'gemini';
    const chunk = (parts: unknown[], last: boolean) => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion,
      responseId: `fake${n}`,
    });
    const text = 'text' in turn && turn.text ? turn.text : '';
    const calls = callsOf(turn, n, 'fc_fake').map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.input } }));
    const textParts = text ? pieces(text).map((t) => ({ text: t })) : [];
    if (!/:streamGenerateContent/i.test(req.path)) {
      sendJson(res, 200, chunk([...(text ? [{ text }] : []), ...calls], true));
      return;
    }
    const chunks: unknown[][] = [...textParts.map((p) => [p]), ...(calls.length ? [calls] : [])];
    if (!chunks.length) chunks.push([{ text: '' }]);
    if (new URL(req.path, 'http://x').searchParams.get('alt') !== 'sse') {
      sendJson(
        res,
        200,
        chunks.map((c, i) => chunk(c, i === chunks.length - 1)),
      );
      return;
    }
    const send = sse(res);
    chunks.forEach((c, i) => send(undefined, chunk(c, i === chunks.length - 1)));
    res.end();
  },
};

const WIRES: Record<Dialect, Wire> = { anthropic, responses, gemini };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startAgentModel(dialect: Dialect, script: Step[] = []): Promise<AgentModel> {
  const wire = WIRES[dialect];
  const steps = [...script];
  const open = new Set<ServerResponse>();
  let served = 0;
  const model = {
    dialect,
    requests: [] as ModelRequest[],
    side: [] as ModelRequest[],
    exhausted: 0,
  };

  const server = createServer(async (req, res) => {
    const at = performance.now();
    open.add(res);
    res.on('close', () => open.delete(res));
    const raw = await readBody(req);
    let body: any = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = { raw };
    }
    const request: ModelRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      text: strings(body).join('\n'),
      tools: wire.toolsOf(body),
      toolResults: wire.toolResultsOf(body),
      at,
    };
    res.on('finish', () => (request.answeredAt = performance.now()));
    const loop = wire.isLoop(request);
    if (loop === undefined) {
      model.side.push(request);
      if (!wire.other(request, res)) sendJson(res, 404, { error: { message: `scripted ${dialect} model: no route ${request.method} ${request.path}` } });
      return;
    }
    const n = ++served;
    if (!loop) {
      model.side.push(request);
      const schema = wire.jsonSchema(request);
      const text = schema !== undefined ? JSON.stringify(sample(schema)) : 'OK';
      wire.answer(request, res, { text }, n);
      return;
    }
    const index = model.requests.length;
    model.requests.push(request);
    let step = steps.shift();
    if (typeof step === 'function') step = await step(request, index);
    if (res.destroyed) return;
    if (step === undefined) {
      model.exhausted++;
      step = { text: EXHAUSTED_TEXT };
    }
    wire.answer(request, res, step, n);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return Object.assign(model, {
    url: dialect === 'responses' ? `${origin}/v1` : origin,
    port,
    push: (...more: Step[]) => void steps.push(...more),
    clear: () => void (steps.length = 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  });
}
