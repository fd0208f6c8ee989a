import type { Route } from '../types.js';

export const contextRoutes: Route[] = [];
