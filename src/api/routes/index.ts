/** Every route of the local API. Each noun owns one module; the README documents each route. */
import type { Route } from '../types.js';
import { statusRoutes } from './status.js';
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
import { agentsRoutes } from './agents.js';

export const routes: Route[] = [
  ...statusRoutes,
  ...contextRoutes,
  ...memoryRoutes,
  ...sessionsRoutes,
  ...skillsRoutes,
  ...rulesRoutes,
  ...tasksRoutes,
  ...hooksRoutes,
  ...modelRoutes,
  ...guardRoutes,
  ...eventsRoutes,
  ...toolsRoutes,
  ...agentsRoutes,
];
