/**
 * The model client: the `openai` package's Chat Completions API at any OpenAI-compatible
 * endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio). One call = one assistant
 * turn, streamed or not. Failures become a ModelError that names the endpoint and what to
 * do, within a bounded time: our own small retry loop (the SDK's would honour a Retry-After
 * of up to a minute), a per-attempt timeout that for streams is an idle timeout.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { defaults } from '../config/schema.js';
import { HermesError } from '../errors/index.js';
import { argumentsText, ToolCallAssembler, type ToolCallDelta } from './tool-call-stream.js';

export type ChatMessage = ChatCompletionMessageParam;
export type ToolSpec = ChatCompletionTool;
export type ToolCall = { id: string; name: string; arguments: string };
/** Tokens of one model call, as the endpoint reported them. */
export type TokenUsage = { inputTokens: number; outputTokens: number };
export type AssistantTurn = {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  /** Absent when the endpoint reports no usage (many local servers, or a stream without a usage chunk). */
  usage?: TokenUsage;
};

export type CompleteRequest = {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** Called with each streamed text fragment (streaming mode only). */
  onText?: (delta: string) => void;
  /** Structured output: the endpoint is asked to hold the answer to this JSON schema (response_format json_schema, strict). */
  responseFormat?: { name: string; schema: Record<string, unknown> };
  /** Upper bound on the answer's tokens (max_tokens): background work must stay bounded. */
  maxTokens?: number;
};

/** Anything that turns a conversation into the next assistant turn. The loop depends on this only. */
export interface ModelClient {
  readonly settings: ModelSettings;
  complete(req: CompleteRequest): Promise<AssistantTurn>;
}

export type ModelSettings = {
  /**
   * Whether the user chose an endpoint: a base URL, or a key (for DEFAULT_BASE_URL) — in the
   * environment or in config.yaml. Without one nothing asks a model unasked (doctor, `remember`,
   * the review): nothing reaches the network the user did not configure.
   */
  configured: boolean;
  baseUrl: string;
  apiKey: string;
  name: string;
  /** Per attempt: time to the full answer (plain) or between two stream chunks (streaming). */
  timeoutMs: number;
  stream: boolean;
  maxTurns: number;
};

/** The endpoint when nothing is configured: the OpenAI API itself. */
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Retries after the first attempt, for 429, 5xx and refused/reset connections. */
export const MODEL_RETRIES = 2;
/** Backoff before retry n (ms); short, so a dead endpoint is reported within seconds. */
export const MODEL_BACKOFF_MS = [500, 1_500] as const;
/** A server's Retry-After is honoured up to this; beyond it we report the rate limit instead of waiting. */
export const MODEL_RETRY_AFTER_MAX_MS = 5_000;
/** Local servers (Ollama, llama.cpp) need no key, but the SDK refuses an empty one. */
const NO_KEY = 'no-key';

/** The model endpoint failed in a way the user has to act on; `code` says which way. */
export class ModelError extends HermesError {
  override readonly code: string;
  override readonly httpStatus = 502;
  override readonly exitCode = 1;
  constructor(
    code:
      | 'model-unconfigured'
      | 'model-unreachable'
      | 'model-auth'
      | 'model-rate-limited'
      | 'model-server-error'
      | 'model-timeout'
      | 'model-bad-request'
      | 'model-bad-response',
    message: string,
    readonly retryable = false,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.code = code;
  }
}

/** The caller's AbortSignal fired: the task was cancelled, not failed. */
export class Cancelled extends HermesError {
  override readonly code = 'cancelled';
  override readonly httpStatus = 409;
  override readonly exitCode = 1;
}

type ModelConfig = Partial<{ baseUrl: string; apiKey: string; name: string; timeoutMs: number; maxTurns: number; stream: boolean }>;

/** Settings from config `model.*`, with OPENAI_BASE_URL, OPENAI_API_KEY and HERMESD_MODEL winning. */
export function modelSettings(config: ModelConfig | undefined, env: NodeJS.ProcessEnv = process.env): ModelSettings {
  const c = config ?? {};
  return {
    configured: Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY || c.baseUrl || c.apiKey),
    baseUrl: (env.OPENAI_BASE_URL || c.baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, ''),
    apiKey: env.OPENAI_API_KEY || c.apiKey || NO_KEY,
    name: env.HERMESD_MODEL || c.name || defaults().model.name,
    timeoutMs: c.timeoutMs && c.timeoutMs > 0 ? c.timeoutMs : defaults().model.timeoutMs,
    stream: c.stream ?? defaults().model.stream,
    maxTurns: c.maxTurns && c.maxTurns > 0 ? c.maxTurns : defaults().model.maxTurns,
  };
}

type SdkModule = typeof import('openai');
/** The SDK (about 150 modules) loads with the first model call: a daemon that only answers hooks and tools never holds it. */
let sdkModule: SdkModule | undefined;

async function loadSdk(): Promise<SdkModule> {
  return (sdkModule ??= await import('openai'));
}

export function createModelClient(settings: ModelSettings): ModelClient {
  let client: Promise<OpenAI> | undefined;
  const sdkClient = () =>
    (client ??= loadSdk().then((m) => new m.default({ baseURL: settings.baseUrl, apiKey: settings.apiKey, maxRetries: 0, timeout: settings.timeoutMs })));
  // Streams ask for a final usage chunk; an endpoint that rejects the option (rather than
  // ignoring it) is asked again without it, and this client stops sending it.
  let streamUsage = settings.stream;
  const once = (req: CompleteRequest) =>
    withRetries(settings, req.signal, async (signal) => {
      const sdk = await sdkClient();
      // A cancel while the SDK loaded: the request's abort listener would never hear it.
      if (signal.aborted) throw new Cancelled('The task was cancelled.');
      return attempt(sdk, settings, req, signal, streamUsage);
    });
  return {
    settings,
    complete: async (req) => {
      // Nothing reaches the network unless the user configured it: no endpoint, no request (not even to the default).
      if (!settings.configured)
        throw new ModelError(
          'model-unconfigured',
          'No model endpoint is configured, and hermesd contacts none until one is: set OPENAI_BASE_URL and OPENAI_API_KEY, or model.baseUrl and model.apiKey in config.yaml (hermesd doctor checks it).',
        );
      try {
        return await once(req);
      } catch (err) {
        if (!streamUsage || !rejectsStreamOptions(err)) throw err;
        streamUsage = false;
        return once(req);
      }
    },
  };
}

function rejectsStreamOptions(err: unknown): boolean {
  return err instanceof ModelError && err.code === 'model-bad-request' && /stream_options|include_usage/i.test(err.message);
}

/** Usage in the API's shape → ours; undefined when the endpoint sent none or nothing usable. */
function usageOf(u: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const inputTokens = Number(u.prompt_tokens ?? 0);
  const outputTokens = Number(u.completion_tokens ?? 0);
  if (!Number.isFinite(inputTokens) || !Number.isFinite(outputTokens)) return undefined;
  return { inputTokens, outputTokens };
}

async function withRetries<T>(settings: ModelSettings, signal: AbortSignal | undefined, once: (signal: AbortSignal) => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    if (signal?.aborted) throw new Cancelled('The task was cancelled.');
    try {
      return await once(signal ?? new AbortController().signal);
    } catch (err) {
      const e = classify(err, settings, signal);
      if (!(e instanceof ModelError) || !e.retryable || n >= MODEL_RETRIES) {
        if (e instanceof ModelError && n > 0) throw new ModelError(e.code as never, `${e.message} (after ${n + 1} attempts)`);
        throw e;
      }
      await sleep(Math.max(MODEL_BACKOFF_MS[n] ?? 1_500, e.retryAfterMs ?? 0), signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(t);
      reject(new Cancelled('The task was cancelled.'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One request with its own deadline; the deadline restarts on every stream chunk. */
async function attempt(sdk: OpenAI, settings: ModelSettings, req: CompleteRequest, outer: AbortSignal, streamUsage: boolean): Promise<AssistantTurn> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, settings.timeoutMs);
  };
  const onOuter = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onOuter, { once: true });
  arm();
  try {
    const base = {
      model: settings.name,
      messages: req.messages,
      ...(req.tools?.length ? { tools: req.tools } : {}),
      ...(req.responseFormat
        ? { response_format: { type: 'json_schema' as const, json_schema: { name: req.responseFormat.name, schema: req.responseFormat.schema, strict: true } } }
        : {}),
      ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    };
    if (!settings.stream) {
      const res = await sdk.chat.completions.create({ ...base, stream: false }, { signal: controller.signal });
      const choice = res.choices?.[0];
      if (!choice) throw new ModelError('model-bad-response', `The model endpoint ${settings.baseUrl} answered without any choice.`);
      // Some servers leave out `type` or send `arguments` as an object (TGI, llama.cpp server).
      const calls = (choice.message.tool_calls ?? []).flatMap((c, i) => {
        const fn = (c as { function?: { name?: unknown; arguments?: unknown } }).function;
        if ((c.type !== undefined && c.type !== 'function') || !fn || typeof fn.name !== 'string') return [];
        return [{ id: c.id || `call_${i}`, name: fn.name, arguments: argumentsText(fn.arguments) }];
      });
      const usage = usageOf(res.usage);
      return { content: choice.message.content ?? '', toolCalls: calls, finishReason: choice.finish_reason ?? null, ...(usage ? { usage } : {}) };
    }
    const stream = await sdk.chat.completions.create(
      { ...base, stream: true, ...(streamUsage ? { stream_options: { include_usage: true } } : {}) },
      { signal: controller.signal },
    );
    let content = '';
    let finishReason: string | null = null;
    let usage: TokenUsage | undefined;
    const calls = new ToolCallAssembler();
    for await (const chunk of stream) {
      arm();
      // The usage chunk (choices: []) comes last; servers that repeat running totals on every chunk end with the full count.
      usage = usageOf(chunk.usage) ?? usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      if (delta.content) {
        content += delta.content;
        req.onText?.(delta.content);
      }
      // The SDK does not validate chunks: what the server sent is what arrives, dialects and all.
      calls.add(delta.tool_calls as ToolCallDelta[] | undefined);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    const offered = new Set((req.tools ?? []).flatMap((t) => (t.type === 'function' ? [t.function.name] : [])));
    return { content, toolCalls: calls.result(offered), finishReason, ...(usage ? { usage } : {}) };
  } catch (err) {
    if (timedOut && !outer.aborted) {
      throw new ModelError(
        'model-timeout',
        `The model endpoint ${settings.baseUrl} did not answer within ${settings.timeoutMs} ms (model.timeoutMs). Check that the server is up and the model "${settings.name}" is loaded.`,
      );
    }
    throw err;
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onOuter);
  }
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get?.('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const s = Number(headers?.get?.('retry-after'));
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  return undefined;
}

function serverSays(err: InstanceType<SdkModule['APIError']>): string {
  const body = err.error as { message?: string } | undefined;
  const text = (body && typeof body.message === 'string' ? body.message : err.message).trim();
  return text ? `: ${text.slice(0, 300)}` : '';
}

/** Maps whatever the SDK or fetch threw to a ModelError that says what to check. */
function classify(err: unknown, s: ModelSettings, signal: AbortSignal | undefined): unknown {
  if (err instanceof HermesError) return err;
  // The SDK's errors come from the SDK, so it is loaded whenever one is thrown.
  const sdk = sdkModule;
  if (signal?.aborted || (sdk && err instanceof sdk.APIUserAbortError)) return new Cancelled('The task was cancelled.');
  const where = `The model endpoint ${s.baseUrl}`;
  if (!sdk) return err;
  if (err instanceof sdk.APIError && typeof err.status === 'number') {
    const st = err.status;
    if (st === 401 || st === 403) {
      return new ModelError(
        'model-auth',
        `${where} refused the API key (HTTP ${st})${serverSays(err)}. Set OPENAI_API_KEY or model.apiKey in $HERMES_HOME/config.yaml.`,
      );
    }
    if (st === 429) {
      const after = retryAfterMs(err.headers);
      const tooLong = after !== undefined && after > MODEL_RETRY_AFTER_MAX_MS;
      return new ModelError(
        'model-rate-limited',
        `${where} is rate limiting requests (HTTP 429)${serverSays(err)}${after !== undefined ? `; it asked to retry after ${Math.round(after / 1000)} s` : ''}. Try again later or use another endpoint.`,
        !tooLong,
        after,
      );
    }
    if (st >= 500) {
      return new ModelError(
        'model-server-error',
        `${where} failed with HTTP ${st}${serverSays(err)}. The server is having trouble; check its logs or try again.`,
        true,
        retryAfterMs(err.headers),
      );
    }
    if (st === 404) {
      return new ModelError(
        'model-bad-request',
        `${where} answered 404${serverSays(err)}. Check the base URL (it usually ends in /v1) and that the model "${s.name}" exists (HERMESD_MODEL or model.name).`,
      );
    }
    return new ModelError('model-bad-request', `${where} rejected the request (HTTP ${st})${serverSays(err)}.`);
  }
  if (err instanceof sdk.APIError) {
    // No status: the connection itself failed (refused, reset, DNS, TLS).
    const cause = (err as { cause?: { code?: string; message?: string; cause?: { code?: string } } }).cause;
    const code = cause?.code ?? cause?.cause?.code ?? cause?.message ?? err.message;
    return new ModelError(
      'model-unreachable',
      `Could not reach the model endpoint ${s.baseUrl} (${code}). Check OPENAI_BASE_URL or model.baseUrl, and that the server is running.`,
      true,
    );
  }
  return err;
}
