import type { Route } from '../types.js';

export const memoryRoutes: Route[] = [];
