/**
 * The guard's confirmation routes (main socket only; a sandboxed command reaches the agent
 * socket, which does not serve them):
 *   GET  /v1/config/approval  → {pending: [{key, approved, requested}]}: loosenings held back
 *   POST /v1/config/approve {proof} → {approved: [...]}: the files' guard settings apply from now
 *        on; `proof` names a request the caller wrote under $HERMES_HOME/guard/approve/ (approval.ts):
 *        a caller that cannot write there (any confined command) cannot approve
 */
import { z } from 'zod';
import { takeApprovalRequest } from '../../guard/approval.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

const ApproveBody = z.strictObject({ proof: z.string().min(1).max(200) });

export function guardRoutes(services: Services): Route[] {
  const { daemon } = services;
  return [
    defineRoute({ method: 'GET', path: '/v1/config/approval', handler: () => ({ pending: services.config.pending() }) }),
    defineRoute({
      method: 'POST',
      path: '/v1/config/approve',
      body: ApproveBody,
      handler: ({ body }) => {
        takeApprovalRequest(daemon.home, daemon.root, body.proof);
        return { approved: services.config.approve() };
      },
    }),
  ];
}
