import { redacted } from '../../config/load.js';
import { checkStaged, checkWorktree } from '../../rules/engine.js';
import { checkRequestSchema } from '../../rules/schema.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

export function rulesRoutes(services: Services): Route[] {
  const { root } = services.daemon;
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/check',
      body: checkRequestSchema,
      handler: async ({ body, signal }) => {
        const { staged, indexFile } = body;
        const config = services.config.get();
        const opts = { indexFile, signal };
        const result = staged ? await checkStaged(root, config, opts) : await checkWorktree(root, config, opts);
        return { violations: result.violations, warnings: result.warnings, staged: Boolean(staged) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/config',
      handler: () => {
        const { config, files, origins } = services.config.loaded();
        return { config: redacted(config), files, origins };
      },
    }),
  ];
}
