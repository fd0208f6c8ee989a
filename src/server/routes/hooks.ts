/**
 * The git hooks over the API, for local clients (the hook runners ask through POST /v1/ask,
 * src/hook-client/). POST /v1/hooks/:name runs a hook and answers, by `format`: NDJSON (default:
 * progress events, then {"type":"result", ok, exitCode, message, …}) or `json` (one plain
 * JSON answer when done).
 */
import { errorToWire } from '../../errors/index.js';
import { hookRequestSchema } from '../../protocol/hooks.js';
import { defineRoute, endAnswer, type Route } from '../route.js';
import type { HookResult } from '../../githooks/hook-service.js';
import type { Services } from '../services/index.js';

/** A sign of life at least this often while a hook works. */
const HOOK_HEARTBEAT_MS = 500;

function hookRoute(services: Services): Route {
  return defineRoute({
    method: 'POST',
    path: '/v1/hooks/:name',
    body: hookRequestSchema,
    handler: async ({ params, body, query, res, signal }) => {
      const hooks = services.hooks;
      const judging = services.config.forJudging();
      // The notices a result carries are said in its message; which of them is which is the daemon's own.
      if (query.get('format') === 'json') return withoutNotices(await hooks.handle(params.name!, body, () => undefined, signal, judging));
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
      const line = (event: Record<string, unknown>) => {
        if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify(event) + '\n');
      };
      // First byte now: the client knows the daemon is alive and working.
      line({ type: 'started', hook: params.name });
      const beat = setInterval(() => line({ type: 'heartbeat' }), HOOK_HEARTBEAT_MS);
      let last: string;
      let result: HookResult | undefined;
      try {
        result = await hooks.handle(params.name!, body, (message) => line({ type: 'progress', message }), signal, judging);
        last = JSON.stringify({ type: 'result', ...withoutNotices(result) });
      } catch (err) {
        last = JSON.stringify({ type: 'error', error: errorToWire(err).wire });
      } finally {
        clearInterval(beat);
      }
      if (!(await endAnswer(res, last + '\n')) && result) hooks.unread(result);
      return undefined;
    },
  });
}

function withoutNotices({ notices: _said, ...result }: HookResult): Omit<HookResult, 'notices'> {
  return result;
}

export function hooksRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/hooks/backups',
      handler: () => ({
        backups: services.hooks.backups().map((b) => ({
          id: b.id,
          createdAt: b.createdAt,
          reason: b.reason,
          pid: b.pid,
          indexFile: b.indexFile,
          dirty: b.dirty.map((e) => e.path),
          untracked: b.untracked.map((e) => e.path),
        })),
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
    hookRoute(services),
  ];
}
