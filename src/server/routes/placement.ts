/**
 * Placement over the API (docs/api.md):
 *
 *   POST /v1/placement                 {sentence, dry_run?, session_id?} → {owner, reasons, classifier, proposal?, notes}
 *   GET  /v1/proposals[?all=1]         {proposals: [{id, owner, summary, source, createdAt, kind, repo}]}
 *   GET  /v1/proposals/:id             the whole proposal (its patch or content)
 *   POST /v1/proposals/:id/accept      applies it through its owner's write path → {proposal}
 *   POST /v1/proposals/:id/reject      {reason?} → {proposal}; the same change is not proposed again
 *   POST /v1/review                    {session_id} → {queued: true}: a post-task review of that session
 *   GET  /v1/review                    the review queue's counts
 */
import { placementRequestSchema, rejectRequestSchema, reviewRequestSchema } from '../../protocol/placement.js';
import { summaryOf } from '../../proposals/schema.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

export function placementRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/placement',
      body: placementRequestSchema,
      handler: ({ body, signal }) =>
        services.placement.place(body.sentence, { propose: !body.dry_run, signal, ...(body.session_id ? { sessionId: body.session_id } : {}) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/proposals',
      handler: ({ query }) => ({ proposals: services.placement.list(query.get('all') === '1').map(summaryOf) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/proposals/:id',
      handler: ({ params }) => services.placement.proposals.get(params.id!),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/proposals/:id/accept',
      handler: async ({ params }) => ({ proposal: await services.placement.accept(params.id!) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/proposals/:id/reject',
      body: rejectRequestSchema,
      handler: async ({ params, body }) => ({ proposal: await services.placement.reject(params.id!, body.reason) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/review',
      body: reviewRequestSchema,
      handler: ({ body }) => {
        services.placement.enqueueReview(body.session_id, 'api');
        return { queued: true, sessionId: body.session_id };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/review',
      handler: () => services.placement.queue.counts(),
    }),
  ];
}
