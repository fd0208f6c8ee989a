/**
 * A route of the local API: method, path, an optional zod schema of the body, and a handler.
 * Route modules are functions of the services they use (`memoryRoutes(services)`), so a
 * handler reaches typed services, never a bag looked up by name. Declare each route with
 * `defineRoute`: the handler's `body` is then typed from the schema the server validates with.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';

export type RequestContext<Body = unknown> = {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON body, parsed by the route's schema when it has one (else as sent; undefined when none was sent). */
  body: Body;
  /** Aborted when the client goes away or the daemon shuts down. */
  signal: AbortSignal;
  req: IncomingMessage;
  /**
   * The raw response, for the rare route that answers in another format (the hook questions'
   * text lines, src/protocol/ask.ts). A handler that writes headers here owns the response;
   * the server then only ends it.
   */
  res: ServerResponse;
};

/**
 * Writes the last bytes of an answer and ends it. Resolves whether they reached a connection
 * its client still held (false: it had closed; a write the kernel refused says so even
 * before the server has read the close).
 */
export function endAnswer(res: ServerResponse, last: string): Promise<boolean> {
  if (res.writableEnded || res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    res.write(last, (err) => resolve(!err));
    res.once('close', () => resolve(false));
    res.end();
  });
}

/** Sends one NDJSON event line to the client of a streaming route. */
export type Emit = (event: Record<string, unknown>) => void;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type JsonRoute<Body = unknown> = {
  method: Method;
  path: string;
  stream?: false;
  /** Validates the body before the handler runs; the error names the field. */
  body?: z.ZodType;
  /** A read that changes nothing a status answer shows (status itself): the next status answer may be the last one again. */
  changesNothing?: true;
  /** The body as the client sent it (a Buffer), not parsed as JSON: the hook questions carry an agent's payload as it is. */
  rawBody?: true;
  handler(ctx: RequestContext<Body>): unknown;
};

export type StreamRoute<Body = unknown> = {
  method: Method;
  path: string;
  stream: true;
  body?: z.ZodType;
  /**
   * A subscription that stays open while its client lives (GET /v1/events): it is not work,
   * so it does not keep the idle timer from stopping the daemon.
   */
  background?: true;
  /** Emits progress events; the returned value becomes the last line, `{"type":"result", ...}`. */
  handler(ctx: RequestContext<Body>, emit: Emit): Promise<Record<string, unknown>>;
};

export type Route = JsonRoute | StreamRoute;

/**
 * Declares a route whose handler gets the body as its schema's output type:
 *
 *   defineRoute({ method: 'POST', path: '/v1/check', body: checkRequestSchema, handler: ({ body }) => body.staged })
 *
 * Without `body` the handler gets the parsed JSON as `unknown`.
 */
export function defineRoute<S extends z.ZodType>(route: Omit<JsonRoute<z.output<S>>, 'body'> & { body: S }): Route;
export function defineRoute<S extends z.ZodType>(route: Omit<StreamRoute<z.output<S>>, 'body'> & { body: S }): Route;
export function defineRoute(route: Omit<JsonRoute, 'body'>): Route;
export function defineRoute(route: Omit<StreamRoute, 'body'>): Route;
export function defineRoute(route: Route): Route {
  return route;
}
