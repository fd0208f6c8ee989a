/**
 * The memory tool's parameters (DESIGN.md §6), declared once: the agent tool, the MCP tool
 * and the API bodies of POST /v1/memory are built from these.
 */
import { z } from 'zod';

export const MEMORY_ACTIONS = ['add', 'replace', 'remove'] as const;

export const memoryTargetSchema = z.enum(['memory', 'user']);
export const memoryScopeSchema = z.enum(['global', 'repo']);

export const memoryToolArgs = z.strictObject({
  action: z.enum(MEMORY_ACTIONS),
  target: memoryTargetSchema,
  scope: memoryScopeSchema
    .optional()
    .describe(
      "target memory only: 'repo' for a fact about this repository's environment (its own MEMORY.md), 'global' (the default) for notes that hold in every repository",
    ),
  content: z.string().optional().describe('the entry text (add, replace)'),
  old_text: z.string().optional().describe('a unique part of the entry to replace or remove'),
});

/** One write without its store, as a batch of POST /v1/memory lists them. */
export const memoryOperationSchema = memoryToolArgs.omit({ target: true, scope: true });
