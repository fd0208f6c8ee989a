import type { Route } from '../types.js';

export const rulesRoutes: Route[] = [];
