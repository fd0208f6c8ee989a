/** GET /v1/model/check: the model endpoint as this daemon sees it (its config and environment). */
import { probeModel } from '../../agent/probe.js';
import { modelSettings } from '../../agent/model.js';
import { configOf } from '../services/config.js';
import type { Route } from '../route.js';

export const modelRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/model/check',
    handler: async ({ daemon }) => probeModel(modelSettings(configOf(daemon).model, daemon.env)),
  },
];
