import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { DaemonContext } from './context.js';

export type RequestContext = {
  daemon: DaemonContext;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (undefined when none was sent). */
  body: unknown;
  /** Aborted when the client goes away or the daemon shuts down. */
  signal: AbortSignal;
  req: IncomingMessage;
  /**
   * The raw response, for the rare route that answers in another format (the hook route's
   * text/plain for POSIX sh clients). A handler that writes headers here owns the response;
   * the server then only ends it.
   */
  res: ServerResponse;
};

/** Sends one NDJSON event line to the client of a streaming route. */
export type Emit = (event: Record<string, unknown>) => void;

export type JsonRoute = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  stream?: false;
  /** Validates the body before the handler runs; the error names the field. */
  body?: z.ZodType;
  handler: (ctx: RequestContext) => unknown | Promise<unknown>;
};

export type StreamRoute = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  stream: true;
  body?: z.ZodType;
  /**
   * A subscription that stays open while its client lives (GET /v1/events): it is not work,
   * so it does not keep the idle timer from stopping the daemon.
   */
  background?: true;
  /** Emits progress events; the returned value becomes the last line, `{"type":"result", ...}`. */
  handler: (ctx: RequestContext, emit: Emit) => Promise<Record<string, unknown>>;
};

export type Route = JsonRoute | StreamRoute;
