/**
 * The tool registry: each tool declared once, its JSON schema derived from its zod schema,
 * and one `runToolCall` that parses, validates, executes, serialises and caps — so every
 * tool answers the model the same way: a JSON string, `{"error": …}` on failure.
 */
import { z } from 'zod';
import { HermesError } from '../../errors/index.js';
import { redactSecrets } from '../../security/redact.js';
import type { ToolSpec } from '../../model/client.js';
import { memory } from './memory.js';
import { patch } from './patch.js';
import { readFile } from './read-file.js';
import { remember } from './remember.js';
import { searchFiles } from './search-files.js';
import { sessionSearch } from './session-search.js';
import { skillManage, skillsList, skillView } from './skills.js';
import { terminal } from './terminal.js';
import type { Tool, ToolContext } from './types.js';
import { writeFile } from './write-file.js';

export type { Tool, ToolContext } from './types.js';

/** The tool set, in the order of DESIGN.md §6 (names and parameters are a public contract), then remember. */
export const TOOLS: readonly Tool[] = [
  readFile,
  writeFile,
  patch,
  searchFiles,
  terminal,
  memory,
  sessionSearch,
  skillsList,
  skillView,
  skillManage,
  remember,
] as Tool[];

/** Largest tool result handed to the model (chars of JSON); bigger results are cut and say so. */
export const TOOL_RESULT_MAX_CHARS = 60_000;
/** Length of an argument string shown in a progress event. */
const EVENT_ARG_CHARS = 120;

const specCache = new WeakMap<Tool, ToolSpec>();

/** The OpenAI `tools` entry of a tool: the zod schema rendered as JSON Schema. */
export function toolSpec(tool: Tool): ToolSpec {
  let spec = specCache.get(tool);
  if (!spec) {
    const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>;
    spec = { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
    specCache.set(tool, spec);
  }
  return spec;
}

export function toolSpecs(tools: readonly Tool[] = TOOLS): ToolSpec[] {
  return tools.map(toolSpec);
}

export type ToolOutcome = {
  ok: boolean;
  /** The JSON string the model receives. */
  content: string;
  /** One line for progress events. */
  summary: string;
  /** The repository rule that refused the call, when one did (and the path it protects). */
  refusedBy?: { rule: string; path?: string };
};

function issues(err: z.ZodError): string {
  return err.issues
    .map((i) => {
      const at = i.path.length ? i.path.join('.') : '(arguments)';
      return `${at}: ${i.message}`;
    })
    .join('; ');
}

function serialise(value: unknown): string {
  const text = JSON.stringify(value ?? { ok: true });
  if (text.length <= TOOL_RESULT_MAX_CHARS) return text;
  return JSON.stringify({
    truncated: true,
    note: `The result was ${text.length} chars; only the first ${TOOL_RESULT_MAX_CHARS} are shown. Narrow the request (offset/limit, a more specific pattern or path).`,
    partial: text.slice(0, TOOL_RESULT_MAX_CHARS),
  });
}

function genericSummary(value: unknown): string {
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.error === 'string') return v.error;
    if (typeof v.message === 'string') return v.message;
    const parts = Object.entries(v)
      .filter(([, x]) => typeof x === 'number' || typeof x === 'boolean' || (typeof x === 'string' && x.length <= 60))
      .slice(0, 4)
      .map(([k, x]) => `${k}=${x}`);
    for (const [k, x] of Object.entries(v)) if (Array.isArray(x)) parts.push(`${x.length} ${k}`);
    return parts.join(', ') || 'ok';
  }
  return String(value).slice(0, 80);
}

/** Arguments shortened for a progress event: long strings (file contents) cut. */
export function shortArgs(raw: string): Record<string, unknown> | string {
  try {
    const v = JSON.parse(raw) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return raw.slice(0, EVENT_ARG_CHARS);
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [
        k,
        typeof x === 'string' && x.length > EVENT_ARG_CHARS ? `${x.slice(0, EVENT_ARG_CHARS)}… (${x.length} chars)` : x,
      ]),
    );
  } catch {
    return raw.slice(0, EVENT_ARG_CHARS);
  }
}

/** Whether a returned value still reports a failure (a memory refusal, a terminal command that timed out). */
/** A progress line is one line: the line breaks of a command's output shown as ⏎. */
function oneLine(text: string): string {
  return text.replace(/[ \t]*\r?\n\s*/g, ' ⏎ ').trim();
}

/** The rule named by a refusal (a ToolRefused's details, or a tool's refused value), if any. */
function refusedBy(details: unknown): Pick<ToolOutcome, 'refusedBy'> {
  const d = details && typeof details === 'object' ? (details as { rule?: unknown; path?: unknown }) : {};
  return typeof d.rule === 'string' ? { refusedBy: { rule: d.rule, ...(typeof d.path === 'string' ? { path: d.path } : {}) } } : {};
}

function refusedValue(value: unknown): boolean {
  return Boolean(
    value && typeof value === 'object' && ((value as { success?: unknown }).success === false || typeof (value as { error?: unknown }).error === 'string'),
  );
}

/** Runs one tool call from the model; never throws (a failure is a result the model can read). */
export async function runToolCall(tools: readonly Tool[], call: { name: string; arguments: string }, ctx: ToolContext): Promise<ToolOutcome> {
  // hermesd guard: known secret values (in any simple encoding), then secret-shaped
  // ones, never reach the model or SessionDB through a tool result.
  const byValue = ctx.services.redactValues ?? ((t: string) => t);
  const redact = (text: string) => redactSecrets(byValue(text)).text;
  const fail = (error: string, extra: Record<string, unknown> = {}): ToolOutcome => ({
    ok: false,
    content: redact(JSON.stringify({ error, ...extra })),
    summary: redact(oneLine(error).slice(0, 200)),
    ...refusedBy(extra),
  });
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return fail(`Unknown tool "${call.name}". Available tools: ${tools.map((t) => t.name).join(', ')}.`);
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (err) {
    return fail(`The arguments of ${tool.name} are not valid JSON (${(err as Error).message}). Send one JSON object matching the tool's parameters.`);
  }
  const parsed = tool.parameters.safeParse(raw);
  if (!parsed.success) {
    return fail(
      `Invalid arguments for ${tool.name}: ${issues(parsed.error)}. Expected parameters: ${JSON.stringify((toolSpec(tool) as { function: { parameters: unknown } }).function.parameters)}`,
    );
  }
  try {
    const value = await tool.execute(parsed.data, ctx);
    const ok = !refusedValue(value);
    let summary: string;
    try {
      summary = tool.summarize ? tool.summarize(value) : genericSummary(value);
    } catch {
      summary = genericSummary(value);
    }
    return { ok, content: redact(serialise(value)), summary: redact(oneLine(summary).slice(0, 200)), ...(ok ? {} : refusedBy(value)) };
  } catch (err) {
    if (err instanceof HermesError) return fail(err.message, err.details && typeof err.details === 'object' ? (err.details as Record<string, unknown>) : {});
    const e = err as NodeJS.ErrnoException;
    return fail(`${tool.name} failed: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`);
  }
}
