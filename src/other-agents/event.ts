/**
 * The one shape every agent's hook payload is read into (each adapter parses its agent's
 * documented fields into it), and the one shape of an answer (exit code, stdout, stderr)
 * each adapter writes in its agent's documented form.
 */
import { z } from 'zod';
import type { AgentName, EventKind } from '../protocol/agent-hooks.js';
import { denyText, silentText } from './hook-table.js';
import type { Denial, ToolAction } from '../guard/tool-call.js';

/** SessionDB `source` of each agent's sessions (what `hermesd sessions list --source …` filters on). */
export const SOURCE_OF: Record<AgentName, string> = { claude: 'claude-code', codex: 'codex', cursor: 'cursor', gemini: 'gemini' };

export type AgentEvent = {
  agent: AgentName;
  /** The agent's own name for the event (`PreToolUse`, `beforeShellExecution`, `BeforeTool`…). */
  event: string;
  kind: EventKind;
  /** The agent's session (conversation) id. */
  sessionId?: string;
  /** Where the agent is working (absolute). */
  cwd: string;
  transcriptPath?: string;
  prompt?: string;
  /** Why a session ended (SessionEnd, sessionEnd). */
  reason?: string;
  /** The tool call; `input` as the agent sent it (a rewrite returns it with the command changed). */
  tool?: { name: string; action: ToolAction; input: Record<string, unknown> };
  /** The agent's id of the tool call, the same at pre-tool and post-tool (Claude Code, Codex). */
  toolUseId?: string;
  /** After a tool call: what it printed or the error it ended with, as the agent reports it (all the payload's text there, one piece a line). */
  output?: string;
};

/** The payload fields that carry a finished call's output: Claude Code's `tool_response` / `error` (PostToolUseFailure), Codex's and Gemini CLI's `tool_response`, Cursor's `output` / `tool_output`. */
const OUTPUT_FIELDS = ['tool_response', 'error', 'output', 'tool_output'] as const;

/** The text of a post-tool payload's output fields, every string found in them, one a line; undefined when there is none. */
export function outputOf(raw: Record<string, unknown>): string | undefined {
  const texts: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === 'string') texts.push(v);
    else if (v && typeof v === 'object' && depth < 4) for (const x of Object.values(v)) walk(x, depth + 1);
  };
  for (const f of OUTPUT_FIELDS) walk(raw[f], 0);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** What the hook command prints and how it exits. */
export type Answer = { exitCode: 0 | 2; stdout: string; stderr: string };

/** Nothing to say, in the agent's form (agent-hooks.ts): never an explicit "allow", which would skip the user's own prompts. */
export function silentAnswer(ev: AgentEvent): Answer {
  return { exitCode: 0, stdout: silentText(ev.agent), stderr: '' };
}

/** What the model reads of a refusal: hermesd's sentence, which names the rule's message, and the rule's id when the sentence does not. */
export function reasonOf(d: Denial): string {
  return d.message.includes(`"${d.rule}"`) ? d.message : `${d.message} (hermesd rule: ${d.rule})`;
}

/** An answer as JSON on stdout, exit 0: the structured deny (and rewrite) Claude Code, Codex, Gemini CLI and Cursor document. */
export function jsonAnswer(answer: Record<string, unknown>): Answer {
  return { exitCode: 0, stdout: JSON.stringify(answer) + '\n', stderr: '' };
}

/** A refusal in the agent's form (agent-hooks.ts): the call is not made, the model reads the reason. */
export function denyAnswer(ev: AgentEvent, d: Denial): Answer {
  return { exitCode: 0, stdout: denyText(ev.agent, ev.event, reasonOf(d)), stderr: '' };
}

/** An agent's hook adapter: its payload into an AgentEvent, hermesd's answers into its documented output. */
export type Adapter = {
  agent: AgentName;
  /** Whether this payload is this agent's (Cursor also runs Claude Code's hooks with its own payloads). */
  recognises?(payload: Record<string, unknown>): boolean;
  parse(payload: Record<string, unknown>): AgentEvent;
  /** Additional context for the model, where this event takes it; undefined where it cannot. */
  context(ev: AgentEvent, text: string): Answer | undefined;
  /** A pre-tool answer that runs `command` instead of the shell command the call carries, where the agent lets a hook rewrite it. */
  rewrite?(ev: AgentEvent, command: string): Answer;
};

/**
 * The payload fields hermesd reads from Claude Code, Codex and Gemini CLI, which send the same
 * common fields (the agents send more; ignored). Cursor's differ (cursor.ts).
 */
export const CommonPayload = z.looseObject({
  hook_event_name: z.string(),
  session_id: z.string().optional(),
  transcript_path: z.string().nullish(),
  cwd: z.string().optional(),
  prompt: z.string().optional(),
  reason: z.string().optional(),
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
});

/** A tool input as an object (anything else reads as empty). */
export const toolInput = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** A path field as a list of one, or none when missing or empty. */
export const pathField = (v: unknown): string[] => (typeof v === 'string' && v !== '' ? [v] : []);
