import type { Route } from '../types.js';

export const tasksRoutes: Route[] = [];
