/**
 * Agent tasks over the local API.
 *   POST /v1/tasks              {task, system?, sessionId?, source?} → NDJSON progress, last line the result
 *   GET  /v1/tasks              → {tasks: [{id, state, source, task, sessionId, createdAt, startedAt}]}
 *   POST /v1/tasks/:id/cancel   → {cancelled: true, id} (id: a task id or a running session id)
 * A client that disconnects cancels its task; the daemon carries on.
 */
import { z } from 'zod';
import { NotFound } from '../../errors/index.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/** A task text beyond this is a document, not a request; send it as a file the agent can read. */
export const TASK_MAX_CHARS = 100_000;

const TaskBody = z.strictObject({
  task: z.string().trim().min(1, 'say what the agent should do').max(TASK_MAX_CHARS),
  system: z.string().max(TASK_MAX_CHARS).optional(),
  sessionId: z.string().min(1).max(200).optional(),
  source: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, 'source is a short lowercase name such as "cli" or "editor"')
    .optional(),
});

export function tasksRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/tasks',
      stream: true,
      body: TaskBody,
      handler: async ({ body: b, signal }, emit) => {
        const outcome = await services.tasks.run({
          task: b.task,
          system: b.system,
          sessionId: b.sessionId,
          source: b.source ?? 'api',
          signal,
          onEvent: (e) => emit(e as Record<string, unknown>),
        });
        return { ...outcome };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/tasks',
      handler: () => ({ tasks: services.tasks.list() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/tasks/:id/cancel',
      handler: ({ params }) => {
        if (!services.tasks.cancel(params.id!)) throw new NotFound(`No running or queued task ${params.id}. GET /v1/tasks lists them.`);
        return { cancelled: true, id: params.id };
      },
    }),
  ];
}
