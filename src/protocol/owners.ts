/**
 * The owners a piece of information can have (seed: "One sentence in five locations produces
 * five behaviors"), as `remember` and the API name them: the repository's authority file, a
 * rule of `.hermes/config.yaml` the daemon enforces, USER.md, the repository's MEMORY.md, a
 * skill, or nobody (the transcript already has it; SessionDB finds it later).
 */
import { z } from 'zod';

export const OWNERS = ['authority', 'config-rule', 'user', 'repo-memory', 'skill', 'none'] as const;
export const ownerSchema = z.enum(OWNERS);
export type Owner = z.infer<typeof ownerSchema>;

/** The four questions, in the seed's order, each answered with a reason a person can check. */
export const reasonsSchema = z.strictObject({
  scope: z.string().describe('Who does it constrain: this repository, this user in every project, or only the current task?'),
  lifetime: z.string().describe('How long should it live: until the task ends, or whenever the repository (or any project) is opened?'),
  type: z.string().describe('Is it a rule, a fact (preference or environment), evidence, or a method (procedure)?'),
  readTiming: z.string().describe('When should it reappear: at every session start, only when a matching task occurs, or never?'),
});
export type Reasons = z.infer<typeof reasonsSchema>;

export type Classifier = 'model' | 'rules';

/** The `remember` tool's parameters (the agent's and the MCP server's). */
export const rememberToolArgs = z.strictObject({
  sentence: z.string().min(1).describe('one statement the user wants kept, in their words, e.g. "Do not edit generated files directly in this repository"'),
});
