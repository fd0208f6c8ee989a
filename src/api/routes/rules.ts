import { z } from 'zod';
import { configServiceOf } from '../../config/service.js';
import { redacted } from '../../config/load.js';
import { checkStaged, checkWorktree } from '../../rules/engine.js';
import type { Route } from '../types.js';

const CheckBody = z.strictObject({
  /** Judge exactly the staged snapshot (what pre-commit judges) instead of the work tree. */
  staged: z.boolean().optional(),
  /** The index to judge (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`); default .git/index. */
  indexFile: z.string().min(1).optional(),
});

export const rulesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/check',
    body: CheckBody,
    handler: async ({ daemon, body, signal }) => {
      const { staged, indexFile } = body as z.infer<typeof CheckBody>;
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
