/**
 * Classification by the model: a structured-output request (a JSON schema the endpoint holds
 * the answer to, where it supports `response_format: json_schema`) whose answer is parsed
 * strictly — one JSON object, nothing around it but an optional code fence — and validated
 * against the same zod schema. The model is reached through a port, so this module knows
 * nothing of the agent's client.
 */
import { z } from 'zod';
import type { StructuredModel } from '../model/structured.js';
import { ownerSchema, reasonsSchema } from '../protocol/owners.js';

/** The model's answer to `remember`. Every field is required (nullable instead of optional): strict json_schema mode demands it. */
export const modelPlacementSchema = z.strictObject({
  owner: ownerSchema,
  reasons: reasonsSchema,
  entry: z
    .string()
    .nullable()
    .describe(
      'user / repo-memory: the entry, one short declarative fact ("User prefers concise answers", "Project uses pytest with xdist"); authority / config-rule: the rule as one line',
    ),
  rule: z
    .strictObject({
      protect: z.array(z.string()).nullable().describe('repository-relative globs no tool may write, e.g. "src/generated/**"'),
      forbid: z.string().nullable().describe('a JavaScript regex no added line may match'),
    })
    .nullable()
    .describe('config-rule only: how .hermes/config.yaml enforces it'),
  skill: z
    .strictObject({
      name: z.string().describe('kebab-case, at most 64 characters'),
      description: z.string().describe('one sentence: when to use the skill'),
      steps: z.array(z.string()),
    })
    .nullable()
    .describe('skill only: the procedure'),
});
export type ModelPlacement = z.infer<typeof modelPlacementSchema>;

/** JSON Schema of a zod schema, as response_format wants it (no $schema key). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return rest;
}

export const PLACEMENT_SYSTEM = [
  'You decide who owns one piece of information a user wants an agent to remember, for a coding agent working in a git repository.',
  'Walk four questions in this order and answer each with a short reason:',
  '1. scope: who does it constrain — this repository (every contributor and task here), this user in every project, or only the current task?',
  '2. lifetime: until the task ends, or whenever the repository (or any project) is opened?',
  '3. type: a rule, a fact (a preference, or an environment fact), evidence, or a method (a procedure of several steps)?',
  '4. readTiming: at every session start, only when a matching task occurs, or never again?',
  'Then choose one owner:',
  "- authority: a rule every contributor of THIS repository must follow (it goes into the repository's AGENTS.md / CLAUDE.md).",
  '- config-rule: such a rule when the daemon can enforce it mechanically: a ban on editing named paths (protect globs) or on committing a recognisable pattern (forbid regex).',
  '- user: a stable preference of the user that holds in every project (USER.md). Write `entry` as a declarative fact: "User prefers concise responses", never an instruction like "Always respond concisely".',
  '- repo-memory: a fact about this repository\'s environment ("tests need `make db` first", "the API listens on :8080"). Write `entry` declaratively: "Project uses pytest with xdist", not "Run tests with pytest -n 4".',
  '- skill: a reusable procedure of several steps (give name, description and steps).',
  '- none: one-off task state or a request for the current task; the transcript already keeps it.',
  "Choosing a durable owner for one-off state hardens it into policy; putting a repository rule into USER.md leaks it into every project. When unsure between authority and user, a rule about code is the repository's.",
].join('\n');

/** The JSON-in-text instruction for endpoints that refuse json_schema (and a reminder for those that ignore it). */
export function jsonInstruction(schema: Record<string, unknown>): string {
  return `Answer with exactly one JSON object and nothing else, matching this JSON Schema:\n${JSON.stringify(schema)}`;
}

export class ModelAnswerInvalid extends Error {}

/**
 * The model's text as one JSON object: whitespace and one surrounding ``` fence are allowed,
 * nothing else (no prose before or after), then the schema decides.
 */
export function parseStrict<T>(text: string, schema: z.ZodType<T>): T {
  let body = text.trim();
  const fence = /^```(?:json)?\s*\n([\s\S]*?)\n```$/.exec(body);
  if (fence) body = fence[1]!.trim();
  if (!body.startsWith('{') || !body.endsWith('}')) throw new ModelAnswerInvalid('the answer is not one JSON object');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new ModelAnswerInvalid(`the answer is not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ModelAnswerInvalid(`the answer does not match the schema (${issue.path.join('.') || '(root)'}: ${issue.message})`);
  }
  return parsed.data;
}

/** Asks the model where `sentence` belongs; throws ModelAnswerInvalid for an answer that is not the schema's. */
export async function classifyByModel(
  model: StructuredModel,
  sentence: string,
  context: { authorityFile?: string; maxTokens: number; signal?: AbortSignal },
): Promise<{ placement: ModelPlacement; structured: boolean }> {
  const schema = jsonSchemaOf(modelPlacementSchema);
  const where = context.authorityFile
    ? `The repository's authority file in force is ${context.authorityFile}.`
    : 'The repository has no authority file yet (AGENTS.md would be created).';
  const answer = await model.complete({
    system: `${PLACEMENT_SYSTEM}\n\n${jsonInstruction(schema)}`,
    user: `${where}\nThe sentence:\n${sentence}`,
    name: 'placement',
    schema,
    maxTokens: context.maxTokens,
    signal: context.signal,
  });
  return { placement: parseStrict(answer.text, modelPlacementSchema), structured: answer.structured };
}
