/** The arguments of a rule check, declared once: the MCP `check` tool and the body of POST /v1/check. */
import { z } from 'zod';

export const checkArgs = z.strictObject({
  staged: z.boolean().optional().describe('judge exactly the staged snapshot (what pre-commit judges) instead of the work tree changes against HEAD'),
});

export const checkRequestSchema = checkArgs.extend({
  /** The index to judge (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`); default .git/index. */
  indexFile: z.string().min(1).optional(),
});
