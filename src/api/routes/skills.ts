import type { Route } from '../types.js';

export const skillsRoutes: Route[] = [];
