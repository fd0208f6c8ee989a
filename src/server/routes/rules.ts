import { redacted } from '../../config/load.js';
import { join, resolve } from 'node:path';
import { checkWorktree } from '../../rules/engine.js';
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
        // --staged: the verdict the daemon keeps ready for the pre-commit, when it judged this snapshot.
        const result = staged
          ? await services.hooks.staged.check(config, indexFile ? resolve(root, indexFile) : join(services.daemon.paths.gitDir, 'index'), { signal })
          : await checkWorktree(root, config, opts);
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
