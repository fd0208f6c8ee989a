/**
 * Every route of the local API over the daemon's services. Each noun owns one module, a
 * function of the services it uses; docs/api.md documents each route. The status routes
 * are not here: the daemon serves them before the services load (statusRoutes).
 */
import type { Route } from '../route.js';
import type { Services } from '../services/index.js';
import { contextRoutes } from './context.js';
import { memoryRoutes } from './memory.js';
import { sessionsRoutes } from './sessions.js';
import { skillsRoutes } from './skills.js';
import { rulesRoutes } from './rules.js';
import { tasksRoutes } from './tasks.js';
import { hooksRoutes } from './hooks.js';
import { modelRoutes } from './model.js';
import { guardRoutes } from './guard.js';
import { eventsRoutes } from './events.js';
import { toolsRoutes } from './tools.js';
import { placementRoutes } from './placement.js';
import { agentsRoutes } from './agents.js';

export function serviceRoutes(services: Services): Route[] {
  return [
    ...contextRoutes(services),
    ...memoryRoutes(services),
    ...sessionsRoutes(services),
    ...skillsRoutes(services),
    ...rulesRoutes(services),
    ...tasksRoutes(services),
    ...hooksRoutes(services),
    ...modelRoutes(services),
    ...guardRoutes(services),
    ...eventsRoutes(services),
    ...toolsRoutes(services),
    ...placementRoutes(services),
    ...agentsRoutes(services),
  ];
}
