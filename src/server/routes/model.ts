/** GET /v1/model/check: the model endpoint as this daemon sees it (its config and environment). */
import { probeModel } from '../../model/probe.js';
import { modelSettings } from '../../model/client.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

export function modelRoutes(services: Services): Route[] {
  return [defineRoute({ method: 'GET', path: '/v1/model/check', handler: () => probeModel(modelSettings(services.config.get().model, services.daemon.env)) })];
}
