/**
 * The local API: HTTP/1.1 on the daemon's Unix socket. One table of routes, one wrapper
 * (`handle`) that parses, validates, times, logs and serialises every request, so that no
 * handler error can reach the process and every failure has the same JSON shape.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ZodError, z } from 'zod';
import { errorToWire, MethodNotAllowed, NotFound, PayloadTooLarge, UsageError } from '../errors/index.js';
import type { DaemonContext } from './daemon-context.js';
import { bodyTooLargeMessage, MAX_BODY_BYTES } from '../protocol/limits.js';
import type { Route, RequestContext } from './route.js';

/** A client must send its headers within this time, or the connection is closed. */
export const HEADERS_TIMEOUT_MS = 5_000;
/** A plain (non-streaming) request must be fully received within this time. */
export const REQUEST_TIMEOUT_MS = 30_000;

type CompiledRoute = { route: Route; parts: string[] };

export function compileRoutes(routes: Route[]): CompiledRoute[] {
  return routes.map((route) => ({ route, parts: route.path.split('/').filter(Boolean) }));
}

function match(routes: CompiledRoute[], method: string, pathname: string): { route: Route; params: Record<string, string> } | 'method' | undefined {
  const segs = pathname.split('/').filter(Boolean);
  let pathMatched = false;
  for (const { route, parts } of routes) {
    if (parts.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (p.startsWith(':')) {
        try {
          params[p.slice(1)] = decodeURIComponent(segs[i]!);
        } catch {
          ok = false;
          break;
        }
      } else if (p !== segs[i]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  return pathMatched ? 'method' : undefined;
}

/** A plain path (most requests: status, lists) as it is; anything else through the URL parser (query, escapes, dots). */
const PLAIN_PATH = /^\/[A-Za-z0-9/_-]*$/;
function requestUrl(raw: string | undefined): { pathname: string; searchParams: URLSearchParams } {
  if (raw && PLAIN_PATH.test(raw)) return { pathname: raw, searchParams: new URLSearchParams() };
  return new URL(raw ?? '/', 'http://hermesd');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) {
      reject(new PayloadTooLarge(bodyTooLargeMessage(declared, limit)));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes.`));
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that goes away mid-body never sends the rest: without this the request would
    // wait, and count as work, for ever.
    req.on('close', () => {
      if (!req.complete) reject(new UsageError('The client went away before its request was whole.'));
    });
  });
}

export function formatZodError(err: ZodError, where: string): string {
  return err.issues
    .map((i) => {
      const path = i.path.length ? i.path.join('.') : '(body)';
      return `${where} ${path}: ${i.message}`;
    })
    .join('; ');
}

export function parseWith<T extends z.ZodType>(schema: T, value: unknown, where = 'request body'): z.infer<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(formatZodError(r.error, where));
  return r.data;
}

export type ApiServer = {
  server: Server;
  /** Aborts streaming handlers and closes idle connections. */
  abortAll(): void;
};

export type ApiServerOptions = { headersTimeoutMs?: number; requestTimeoutMs?: number; maxBodyBytes?: number };

/**
 * A request's abort signal, made when its handler first asks for it: most requests (status,
 * lists) never do, and an AbortController costs more than the rest of a status answer.
 */
class RequestAbort {
  private controller: AbortController | undefined;
  private aborted = false;
  private reason: unknown;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * `routes` answer at once; `more` loads the rest of the table, asked for by the first request
 * that `routes` cannot answer (a request waits for it). The daemon binds with the status routes
 * and the hook questions: the first answer does not wait for modules it does not need.
 */
export function createApiServer(daemon: DaemonContext, routes: Route[], options: ApiServerOptions = {}, more?: () => Promise<Route[]>): ApiServer {
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  let compiled = compileRoutes(routes);
  let loading: Promise<void> | undefined;
  const rest = more
    ? () =>
        (loading ??= more().then((extra) => {
          compiled = compileRoutes([...routes, ...extra]);
        }))
    : undefined;
  const live = new Set<RequestAbort>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const abort = new RequestAbort();
    live.add(abort);
    daemon.busy++;
    let counted = true;
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('client disconnected'));
      live.delete(abort);
    });
    let status = 200;
    // A request may change what status shows, while it runs and when it ends (DaemonContext.changed).
    let changing = false;
    try {
      const url = requestUrl(req.url);
      let found = match(compiled, req.method ?? 'GET', url.pathname);
      if (found === undefined && rest) {
        await rest();
        found = match(compiled, req.method ?? 'GET', url.pathname);
      }
      if (found === undefined) throw new NotFound(`No route ${req.method} ${url.pathname}. See the README for the routes under /v1/.`);
      if (found === 'method') throw new MethodNotAllowed(`Method ${req.method} is not allowed on ${url.pathname}.`);
      // Most calls (GET status, lists) carry no body: skip the stream round trip for them.
      const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
      const raw = hasBody ? await readBody(req, maxBody) : (req.resume(), Buffer.alloc(0));
      let body: unknown = found.route.stream !== true && found.route.rawBody ? raw : undefined;
      if (raw.length > 0 && body === undefined) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new UsageError('Request body is not valid JSON.');
        }
      }
      const { route, params } = found;
      changing = route.stream === true || !route.changesNothing;
      if (changing) daemon.changed();
      if (route.stream && route.background) {
        daemon.busy--;
        counted = false;
      }
      if (route.body) body = parseWith(route.body, body ?? {});
      const ctx: RequestContext = {
        params,
        query: url.searchParams,
        body,
        get signal() {
          return abort.signal;
        },
        req,
        res,
      };
      if (route.stream) {
        res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
        const emit = (event: Record<string, unknown>) => {
          if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify(event) + '\n');
        };
        try {
          const result = await route.handler(ctx, emit);
          emit({ type: 'result', ...result });
        } catch (err) {
          const { wire } = errorToWire(err);
          if (!(err instanceof Error && 'httpStatus' in err))
            daemon.log.error('stream handler failed', { path: url.pathname, error: String((err as Error)?.stack ?? err) });
          emit({ type: 'error', error: wire });
          status = 500;
        }
        res.end();
      } else {
        const result = await route.handler(ctx);
        sendJson(res, 200, result ?? {});
      }
    } catch (err) {
      const { status: s, wire } = errorToWire(err);
      status = s;
      if (s >= 500) daemon.log.error('handler failed', { url: req.url, error: String((err as Error)?.stack ?? err) });
      // The rest of an oversized body is never read: answer, then close the connection.
      if (err instanceof PayloadTooLarge && !res.headersSent) res.setHeader('connection', 'close');
      sendJson(res, s, { error: wire });
    } finally {
      if (changing) daemon.changed();
      if (counted) daemon.busy--;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (ms > 1000 || status >= 500) daemon.log.info('request', { method: req.method, url: req.url, status, ms: Math.round(ms) });
    }
  };

  const server = createServer(
    {
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 500,
      maxHeaderSize: 64 * 1024,
    },
    (req, res) => {
      handle(req, res).catch((err) => {
        daemon.log.error('unhandled request failure', { error: String(err) });
        try {
          sendJson(res, 500, { error: errorToWire(err).wire });
        } catch {
          res.destroy();
        }
      });
    },
  );
  // Streaming routes (tasks, hooks) can run for minutes; their own code bounds them.
  server.setTimeout(0);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const code = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({
      error: {
        code: code === 408 ? 'request-timeout' : 'malformed-request',
        message: code === 408 ? 'The request was not received in time.' : 'The request is not valid HTTP/1.1.',
      },
    });
    socket.end(
      `HTTP/1.1 ${code} ${code === 408 ? 'Request Timeout' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return {
    server,
    abortAll() {
      for (const a of live) a.abort(new Error('daemon shutting down'));
      server.closeIdleConnections?.();
    },
  };
}
