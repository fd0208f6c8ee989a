import type { Route } from '../types.js';

export const hooksRoutes: Route[] = [];
