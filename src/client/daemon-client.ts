/**
 * The client side of the local API: plain HTTP over the Unix socket. The CLI is built on
 * this and nothing else; editors can do the same with curl --unix-socket.
 */
import { Agent, request, type RequestOptions as HttpRequestOptions } from 'node:http';
import { bodyTooLargeMessage, MAX_BODY_BYTES } from '../protocol/limits.js';
import { DaemonUnavailable, PayloadTooLarge, RemoteError, type ErrorWire } from '../errors/index.js';

export type RequestOptions = { timeoutMs?: number; signal?: AbortSignal };

/**
 * A request's connection: the socket, and no TLS server name (there is no TLS). Without
 * `servername`, Node's agent works one out from the host, testing whether it is an IP address;
 * the first such test compiles Node's IPv6 pattern, on the first request of every CLI
 * command and of every MCP server's first resource list. (`servername` is an agent option the
 * http types do not list.)
 */
const onSocket = (socketPath: string): HttpRequestOptions => ({ socketPath, servername: '' }) as HttpRequestOptions;

/** Default bound on a plain API call; streaming calls are bounded by their own work. */
export const CLIENT_TIMEOUT_MS = 30_000;

export class DaemonClient {
  private readonly agent?: Agent;
  /** `keepAlive` reuses one connection across calls (editors, long-lived clients); the CLI makes one call and exits. */
  constructor(
    readonly socket: string,
    opts: { keepAlive?: boolean } = {},
  ) {
    if (opts.keepAlive) this.agent = new Agent({ keepAlive: true, maxSockets: 16 });
  }

  close(): void {
    this.agent?.destroy();
  }

  /** Sends a JSON request; resolves with the parsed JSON body, or throws the daemon's error. */
  async call<T = unknown>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    const { status, text } = await this.raw(method, path, body, opts);
    let parsed: unknown;
    try {
      parsed = text.length ? JSON.parse(text) : {};
    } catch {
      throw new DaemonUnavailable(`The daemon answered ${method} ${path} with something that is not JSON (HTTP ${status}).`);
    }
    if (status >= 400) {
      const wire = (parsed as { error?: ErrorWire }).error ?? { code: 'internal', message: `HTTP ${status}` };
      throw new RemoteError(wire, status);
    }
    return parsed as T;
  }

  /**
   * One request, its status and body. A kept-alive connection the daemon closed just as this
   * request went out on it (an idle connection at a restart)
   * never reached the daemon: the request is sent once more, on a new connection.
   */
  raw(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<{ status: number; text: string }> {
    return this.send(method, path, body, opts, true);
  }

  private send(method: string, path: string, body: unknown, opts: RequestOptions, retry: boolean): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      // Refused here as the daemon would refuse it: it answers 413 and closes at once, and a client
      // still writing the body would see EPIPE instead of that answer.
      const bytes = payload === undefined ? 0 : Buffer.byteLength(payload);
      if (bytes > MAX_BODY_BYTES) {
        reject(new PayloadTooLarge(bodyTooLargeMessage(bytes)));
        return;
      }
      let answered = false;
      const req = request(
        {
          ...onSocket(this.socket),
          agent: this.agent,
          method,
          path,
          headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
          timeout: opts.timeoutMs ?? CLIENT_TIMEOUT_MS,
          signal: opts.signal,
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () =>
        req.destroy(new DaemonUnavailable(`The daemon did not answer ${method} ${path} within ${opts.timeoutMs ?? CLIENT_TIMEOUT_MS} ms.`)),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (retry && req.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) resolve(this.send(method, path, body, opts, false));
        else if (err instanceof DaemonUnavailable || err.name === 'AbortError') reject(err);
        else reject(new DaemonUnavailable(`Could not reach the daemon at ${this.socket}: ${err.code ?? err.message}.`));
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  /**
   * Sends a request to a streaming route and calls `onEvent` for each NDJSON line. Resolves
   * with the last line of type "result"; throws the daemon's error for a line of type "error".
   * `silenceMs` fails the call when the daemon sends nothing for that long (routes that
   * heartbeat while they work, e.g. the git hooks); unbounded without it.
   */
  stream<T = Record<string, unknown>>(
    method: string,
    path: string,
    body: unknown,
    onEvent: (event: Record<string, unknown>) => void,
    opts: { signal?: AbortSignal; silenceMs?: number } = {},
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const payload = JSON.stringify(body ?? {});
      const req = request(
        {
          ...onSocket(this.socket),
          method,
          path,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          signal: opts.signal,
        },
        (res) => {
          if ((res.statusCode ?? 0) >= 400) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              try {
                const wire = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error: ErrorWire }).error;
                reject(new RemoteError(wire, res.statusCode ?? 500));
              } catch {
                reject(new DaemonUnavailable(`The daemon answered HTTP ${res.statusCode} to ${path}.`));
              }
            });
            return;
          }
          let buf = '';
          let result: T | undefined;
          let failure: Error | undefined;
          const line = (l: string) => {
            if (!l.trim()) return;
            let ev: Record<string, unknown>;
            try {
              ev = JSON.parse(l) as Record<string, unknown>;
            } catch {
              return;
            }
            if (ev.type === 'result') result = ev as T;
            else if (ev.type === 'error') failure = new RemoteError(ev.error as ErrorWire, 500);
            else onEvent(ev);
          };
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let i: number;
            while ((i = buf.indexOf('\n')) >= 0) {
              line(buf.slice(0, i));
              buf = buf.slice(i + 1);
            }
          });
          res.on('end', () => {
            line(buf);
            if (failure) reject(failure);
            else if (result !== undefined) resolve(result);
            else reject(new DaemonUnavailable(`The daemon closed the stream of ${path} before sending a result. See hermesd logs.`, { reason: 'lost' }));
          });
          // The connection broke mid-answer (the daemon died): not the same as never reaching it.
          res.on('error', () => reject(new DaemonUnavailable(`The daemon's answer to ${path} broke off. See hermesd logs.`, { reason: 'lost' })));
          res.on('aborted', () => reject(new DaemonUnavailable(`The daemon's answer to ${path} broke off. See hermesd logs.`, { reason: 'lost' })));
        },
      );
      const silenceMs = opts.silenceMs;
      if (silenceMs !== undefined)
        req.setTimeout(silenceMs, () =>
          req.destroy(new DaemonUnavailable(`The daemon did not answer within ${silenceMs} ms (hung or stopped?).`, { reason: 'silent' })),
        );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof DaemonUnavailable || err.name === 'AbortError') reject(err);
        else if (err.code === 'ECONNRESET' || err.code === 'EPIPE')
          reject(new DaemonUnavailable(`The daemon's answer to ${path} broke off (${err.code}). See hermesd logs.`, { reason: 'lost' }));
        else reject(new DaemonUnavailable(`Could not reach the daemon at ${this.socket}: ${err.code ?? err.message}.`, { reason: 'unreachable' }));
      });
      req.write(payload);
      req.end();
    });
  }
}
