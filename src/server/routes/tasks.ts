/**
 * Agent tasks over the local API.
 *   POST /v1/tasks              {task, system?, sessionId?, source?} → NDJSON progress, last line the result
 *   GET  /v1/tasks              → {tasks: [{id, state, source, task, sessionId, createdAt, startedAt}]}
 *   POST /v1/tasks/:id/cancel   → {cancelled: true, id} (id: a task id or a running session id)
 * A client that disconnects cancels its task; the daemon carries on.
 */
import { z } from 'zod';
import { tasksOf } from '../services/agent.js';
import { NotFound } from '../../errors/index.js';
import type { Route } from '../route.js';

/** A task text beyond this is a document, not a request; send it as a file the agent can read. */
export const TASK_MAX_CHARS = 100_000;

const TaskBody = z.strictObject({
  task: z.string().trim().min(1, 'say what the agent should do').max(TASK_MAX_CHARS),
  system: z.string().max(TASK_MAX_CHARS).optional(),
  sessionId: z.string().min(1).max(200).optional(),
  source: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'source is a short lowercase name such as "cli" or "editor"').optional(),
});

export const tasksRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/tasks',
    stream: true,
    body: TaskBody,
    handler: async ({ daemon, body, signal }, emit) => {
      const b = body as z.infer<typeof TaskBody>;
      const outcome = await tasksOf(daemon).run({
        task: b.task,
        system: b.system,
        sessionId: b.sessionId,
        source: b.source ?? 'api',
        signal,
        onEvent: (e) => emit(e as Record<string, unknown>),
      });
      return { ...outcome };
    },
  },
  {
    method: 'GET',
    path: '/v1/tasks',
    handler: ({ daemon }) => ({ tasks: tasksOf(daemon).list() }),
  },
  {
    method: 'POST',
    path: '/v1/tasks/:id/cancel',
    handler: ({ daemon, params }) => {
      if (!tasksOf(daemon).cancel(params.id!)) throw new NotFound(`No running or queued task ${params.id}. GET /v1/tasks lists them.`);
      return { cancelled: true, id: params.id };
    },
  },
];
