/** POST /v1/hooks/:name: what a git hook (the sh runner or `hermesd hook`) tells the daemon. */
import { z } from 'zod';

export const hookRequestSchema = z.strictObject({
  args: z.array(z.string()).default([]),
  /** The hook's GIT_INDEX_FILE (absolute, or relative to the work tree root). */
  indexFile: z.string().optional(),
  /** Lines git gave the hook on stdin (post-rewrite). */
  stdin: z.array(z.string()).optional(),
  /** Where git was when a post-* hook ran (HEAD's commit and branch), as the sh hook read them (it runs in the background). */
  head: z.string().optional(),
  branch: z.string().optional(),
  /** Which client sent it ('sh' or 'node'), for the log. */
  via: z.string().optional(),
  /** The git command the hook runs in: `<git pid>:<its start in clock ticks>` (src/githooks/attempt.ts). */
  attempt: z
    .string()
    .regex(/^\d+:\d+$/)
    .optional(),
  /** pre-commit only: the re-check at the end of the hook chain (rules on what changed since the verdict; no checks). */
  phase: z.literal('final').optional(),
});

/**
 * The request as the daemon handles it; `sandboxed` is set by the daemon (never the client)
 * when the hook came over the agent socket, from a sandboxed command.
 */
export type HookRequest = z.output<typeof hookRequestSchema> & { sandboxed?: boolean };
