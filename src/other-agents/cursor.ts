/**
 * Cursor's hooks (`.cursor/hooks.json`, `{"version": 1, "hooks": {event: [{command}]}}`;
 * cursor.com/docs/hooks). Common stdin fields: `conversation_id`, `generation_id`,
 * `hook_event_name` (camelCase), `cursor_version`, `workspace_roots`, `transcript_path`;
 * `session_id` on sessionStart/sessionEnd; `cwd` on tool events. `preToolUse` carries
 * `tool_name` (`Shell`, `Read`, `Write`, `Delete`, …) and `tool_input`;
 * `beforeShellExecution` `{command, cwd}`, `afterShellExecution` `{command, cwd, output}`;
 * `beforeReadFile` `{file_path}`.
 *
 * Answers: a denial is `{"permission": "deny", "user_message", "agent_message"}` (the
 * documented form that tells the agent why and what to do instead); context is
 * `{"additional_context"}` at sessionStart and postToolUse (beforeSubmitPrompt takes none;
 * afterShellExecution takes no answer: what the check after a shell call puts back is told at the
 * call's postToolUse, whichever of the two comes first; context-mode's Cursor adapter answers
 * postToolUse the same way, npm context-mode 1.0.131 build/adapters/cursor/index.js). No decision
 * is `{}`: Cursor is said to want JSON on every path, and `{}` holds no `permission`, so it
 * is no "allow".
 *
 * Cursor also runs Claude Code's project hooks (third-party configs), with its own payloads:
 * `recognises` tells them apart, so the same call gets the same (Cursor-form) answer twice.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { eventKind } from './hook-table.js';
import { toolInput, type Adapter, type AgentEvent } from './event.js';
import type { ToolAction } from '../guard/tool-call.js';

const Payload = z.looseObject({
  hook_event_name: z.string(),
  conversation_id: z.string().nullish(),
  session_id: z.string().nullish(),
  cursor_version: z.string().nullish(),
  workspace_roots: z.array(z.string()).nullish(),
  transcript_path: z.string().nullish(),
  cwd: z.string().nullish(),
  prompt: z.string().nullish(),
  reason: z.string().nullish(),
  command: z.string().nullish(),
  file_path: z.string().nullish(),
  tool_name: z.string().nullish(),
  tool_input: z.unknown().optional(),
});

/** Cursor's tool input for Write/Read/Delete is not documented: the usual names of a path field. */
function pathsOf(ti: Record<string, unknown>): string[] {
  return ['file_path', 'path', 'target_file', 'filePath'].map((k) => ti[k]).filter((v): v is string => typeof v === 'string' && v !== '');
}

function action(p: z.infer<typeof Payload>, cwd: string): { name: string; action: ToolAction; input: Record<string, unknown> } | undefined {
  if ((p.hook_event_name === 'beforeShellExecution' || p.hook_event_name === 'afterShellExecution') && typeof p.command === 'string')
    return { name: 'Shell', action: { kind: 'shell', command: p.command, cwd }, input: { command: p.command } };
  if (p.hook_event_name === 'beforeReadFile' && p.file_path)
    return { name: 'Read', action: { kind: 'read', paths: [p.file_path] }, input: { file_path: p.file_path } };
  if (p.hook_event_name === 'afterFileEdit' && p.file_path)
    return { name: 'Write', action: { kind: 'write', paths: [p.file_path], verb: 'edit' }, input: { file_path: p.file_path } };
  if (!p.tool_name) return undefined;
  const input = toolInput(p.tool_input);
  const ti = input;
  switch (p.tool_name) {
    case 'Shell': {
      const dir = typeof ti.working_directory === 'string' ? resolve(cwd, ti.working_directory) : cwd;
      return { name: p.tool_name, action: typeof ti.command === 'string' ? { kind: 'shell', command: ti.command, cwd: dir } : { kind: 'other' }, input };
    }
    case 'Write':
    case 'Edit':
      return { name: p.tool_name, action: { kind: 'write', paths: pathsOf(ti), verb: 'write' }, input };
    case 'Delete':
      return { name: p.tool_name, action: { kind: 'write', paths: pathsOf(ti), verb: 'delete' }, input };
    case 'Read':
      return { name: p.tool_name, action: { kind: 'read', paths: pathsOf(ti) }, input };
    default:
      return { name: p.tool_name, action: { kind: 'other' }, input };
  }
}

/** The events whose answer's `additional_context` reaches the model. */
const CONTEXT_EVENTS: ReadonlySet<string> = new Set(['sessionStart', 'postToolUse']);

export const cursor: Adapter = {
  agent: 'cursor',
  recognises: (raw) =>
    typeof raw.cursor_version === 'string' ||
    (typeof raw.hook_event_name === 'string' && /^[a-z]/.test(raw.hook_event_name) && eventKind('cursor', raw.hook_event_name) !== 'other'),
  parse(raw) {
    const p = Payload.parse(raw);
    const cwd = p.cwd ?? p.workspace_roots?.[0] ?? process.cwd();
    const ev: AgentEvent = { agent: 'cursor', event: p.hook_event_name, kind: eventKind('cursor', p.hook_event_name), cwd };
    const session = p.conversation_id ?? p.session_id;
    if (session) ev.sessionId = session;
    if (p.transcript_path) ev.transcriptPath = p.transcript_path;
    if (typeof p.prompt === 'string') ev.prompt = p.prompt;
    if (p.reason) ev.reason = p.reason;
    const tool = action(p, cwd);
    if (tool) ev.tool = tool;
    return ev;
  },
  context: (ev, text) => (CONTEXT_EVENTS.has(ev.event) ? { exitCode: 0, stdout: JSON.stringify({ additional_context: text }) + '\n', stderr: '' } : undefined),
};
