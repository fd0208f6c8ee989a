import { z } from 'zod';
import { configServiceOf } from '../services/config.js';
import { redacted } from '../../config/load.js';
import { checkStaged, checkWorktree } from '../../rules/engine.js';
import { checkRequestSchema } from '../../rules/schema.js';
import type { Route } from '../route.js';

export const rulesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/check',
    body: checkRequestSchema,
    handler: async ({ daemon, body, signal }) => {
      const { staged, indexFile } = body as z.infer<typeof checkRequestSchema>;
      const { config } = configServiceOf(daemon).loaded();
      const opts = { indexFile, signal };
      const result = staged ? await checkStaged(daemon.root, config, opts) : await checkWorktree(daemon.root, config, opts);
      return { violations: result.violations, warnings: result.warnings, staged: Boolean(staged) };
    },
  },
  {
    method: 'GET',
    path: '/v1/config',
    handler: ({ daemon }) => {
      const { config, files, origins } = configServiceOf(daemon).loaded();
      return { config: redacted(config), files, origins };
    },
  },
];
