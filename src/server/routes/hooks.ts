/**
 * The git hooks over the API. POST /v1/hooks/:name runs a hook and answers, by `format`:
 * NDJSON (default: progress events, then {"type":"result", ok, exitCode, message, …}),
 * `json` (one plain JSON answer when done), or `text` — what the POSIX sh hook reads with
 * curl: the lines to show, then `hermesd-exit <code>`. Every format sends a first byte at
 * once and a heartbeat while the hook works, so a client can tell a busy daemon from a
 * hung one by silence alone.
 */
import { errorToWire } from '../../errors/index.js';
import { hookRequestSchema } from '../../protocol/hooks.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/** A sign of life at least this often while a hook works (the sh client's silence bound is ≥ 1 s). */
export const HOOK_HEARTBEAT_MS = 500;

/** The sh client finds its exit code by the first "hermesd-exit "; no message may contain one. */
const unmarked = (s: string) => s.replace(/hermesd-(exit|curl) /g, 'hermesd $1 ');

const exitFor = (status: number, code: string) => (code === 'config-error' || status === 400 ? 2 : 1);

/** A hook the daemon could not run, as the sh runner shows it (here and through the doorbell): the line to print and the exit code. */
export function hookFailure(services: Services, name: string, err: unknown): { exitCode: number; message: string } {
  const { status, wire } = errorToWire(err);
  if (status >= 500) services.daemon.log.error('hook failed', { hook: name, error: String((err as Error)?.stack ?? err) });
  return { exitCode: exitFor(status, wire.code), message: `hermesd: the ${name} hook failed: ${unmarked(wire.message)}` };
}

/**
 * POST /v1/hooks/:name, running every hook as `sandboxed` or not: the main socket serves it
 * as sent, the agent socket marks each request as coming from a sandboxed command.
 */
export function hookRoute(services: Services, opts: { sandboxed: boolean }): Route {
  return defineRoute({
    method: 'POST',
    path: '/v1/hooks/:name',
    body: hookRequestSchema,
    handler: async ({ params, body, query, res, signal }) => {
      const format = query.get('format') ?? 'ndjson';
      const req = opts.sandboxed ? { ...body, sandboxed: true } : body;
      const hooks = services.hooks;
      if (format === 'json') return hooks.handle(params.name!, req, () => undefined, signal);

      const text = format === 'text';
      // A sh client that bounds the whole answer (rules only) reads it at once; one that bounds
      // silence (checks, generators: minutes) asks for a first byte and heartbeats with live=1.
      const live = !text || query.get('live') === '1';
      res.writeHead(200, { 'content-type': text ? 'text/plain; charset=utf-8' : 'application/x-ndjson', 'cache-control': 'no-store' });
      const write = (s: string) => {
        if (!res.writableEnded && !res.destroyed) res.write(s);
      };
      const line = (event: Record<string, unknown>) => write(JSON.stringify(event) + '\n');
      // First byte now: the client knows the daemon is alive and working.
      if (text && live) write('\n');
      else if (!text) line({ type: 'started', hook: params.name });
      const beat = live ? setInterval(() => (text ? write('\n') : line({ type: 'heartbeat' })), HOOK_HEARTBEAT_MS) : undefined;
      const progress = (msg: string) => {
        if (text) write(unmarked(msg) + '\n');
        else line({ type: 'progress', message: msg });
      };
      try {
        const result = await hooks.handle(params.name!, req, progress, signal);
        if (text) write((result.message ? unmarked(result.message) + '\n' : '') + `hermesd-exit ${result.exitCode}\n`);
        else line({ type: 'result', ...result });
      } catch (err) {
        if (text) {
          const failed = hookFailure(services, params.name!, err);
          write(`${failed.message}\nhermesd-exit ${failed.exitCode}\n`);
        } else line({ type: 'error', error: errorToWire(err).wire });
      } finally {
        if (beat) clearInterval(beat);
        res.end();
      }
      return undefined;
    },
  });
}

export function hooksRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/hooks/backups',
      handler: () => ({
        backups: services.hooks
          .backups()
          .map((b) => ({ id: b.id, createdAt: b.createdAt, reason: b.reason, pid: b.pid, indexFile: b.indexFile, dirty: b.dirty.map((e) => e.path), untracked: b.untracked.map((e) => e.path) })),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/hooks/backups/:id/restore',
      handler: ({ params }) => services.hooks.restore(params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/hooks/restore',
      handler: () => services.hooks.restore(),
    }),
    hookRoute(services, { sandboxed: false }),
  ];
}
