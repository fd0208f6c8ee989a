/**
 * The shape of an agent tool: a name the model calls, a description, a zod schema that is
 * both the validator and (through z.toJSONSchema) the JSON schema sent to the API, and an
 * `execute` that returns a plain value (serialised to the JSON string the model reads).
 */
import type { z } from 'zod';
import { HermesError } from '../../errors/index.js';
import type { AgentServices } from '../services.js';

export type ToolContext = {
  /** Realpath of the work tree: every file tool is confined to it. */
  root: string;
  sessionId: string;
  signal: AbortSignal;
  config: AgentServices['config'];
  services: AgentServices;
};

export type Tool<S extends z.ZodType = z.ZodType> = {
  name: string;
  description: string;
  parameters: S;
  execute(args: z.infer<S>, ctx: ToolContext): unknown | Promise<unknown>;
  /** One line for progress events ("exit 0", "wrote 120 bytes"); the registry has a generic fallback. */
  summarize?: (result: unknown) => string;
};

/** Declares a tool with its argument type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}

/**
 * A tool call failed in a way the model can act on (bad path, no match, refused by a rule).
 * The model receives `{"error": message}` and the task goes on.
 */
export class ToolError extends HermesError {
  override readonly code: string = 'tool-error';
  override readonly httpStatus = 400;
}

/** A tool refused a path or content because of a repository rule; the message quotes the rule. */
export class ToolRefused extends ToolError {
  override readonly code = 'refused';
}
