import type { Route } from '../types.js';

export const sessionsRoutes: Route[] = [];
