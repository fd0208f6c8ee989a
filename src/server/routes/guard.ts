/**
 * The guard's confirmation routes (main socket only; a sandboxed command reaches the agent
 * socket, which does not serve them):
 *   GET  /v1/config/approval  → {pending: [{key, approved, requested}]}: loosenings held back
 *   POST /v1/config/approve   → {approved: [...]}: the files' guard settings apply from now on
 */
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

export function guardRoutes(services: Services): Route[] {
  return [
    defineRoute({ method: 'GET', path: '/v1/config/approval', handler: () => ({ pending: services.config.pending() }) }),
    defineRoute({ method: 'POST', path: '/v1/config/approve', handler: () => ({ approved: services.config.approve() }) }),
  ];
}
