/**
 * The guard's confirmation routes (main socket only; a sandboxed command reaches the agent
 * socket, which does not serve them):
 *   GET  /v1/config/approval  → {pending: [{key, approved, requested}]}: loosenings held back
 *   POST /v1/config/approve   → {approved: [...]}: the files' guard settings apply from now on
 */
import { configServiceOf } from '../services/config.js';
import type { Route } from '../route.js';

export const guardRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/config/approval',
    handler: ({ daemon }) => ({ pending: configServiceOf(daemon).pending() }),
  },
  {
    method: 'POST',
    path: '/v1/config/approve',
    handler: ({ daemon }) => ({ approved: configServiceOf(daemon).approve() }),
  },
];
