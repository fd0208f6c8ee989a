/**
 * Claude Code's hooks (`.claude/settings.json`; code.claude.com/docs/en/hooks). Stdin: common
 * fields `session_id`, `transcript_path`, `cwd`, `hook_event_name`; `prompt` on
 * UserPromptSubmit; `tool_name` / `tool_input` on PreToolUse and PostToolUse (Bash
 * `{command}`, Write `{file_path, content}`, Edit `{file_path, old_string, new_string}`, the
 * legacy MultiEdit `{file_path, edits}`, NotebookEdit `{notebook_path, …}`, Read
 * `{file_path}`, Grep `{pattern, path?}`).
 *
 * Answers: a denial is exit 0 with `hookSpecificOutput.permissionDecision: "deny"` and
 * `permissionDecisionReason` (the call is not made; Claude reads the reason alone, where exit 2
 * showed it "hook error: [<the whole hook command>]: …"); context at SessionStart and UserPromptSubmit is
 * `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`; otherwise nothing —
 * never `permissionDecision: "allow"`, which would skip the user's permission prompts.
 */
import { eventKind } from './hook-table.js';
import { CommonPayload, jsonAnswer, pathField, toolInput, type Adapter, type AgentEvent } from './event.js';
import type { ToolAction } from '../guard/tool-call.js';

function action(tool: string, ti: Record<string, unknown>, cwd: string): ToolAction {
  switch (tool) {
    case 'Bash':
      return typeof ti.command === 'string' ? { kind: 'shell', command: ti.command, cwd } : { kind: 'other' };
    case 'Write':
      return { kind: 'write', paths: pathField(ti.file_path), verb: 'write' };
    case 'Edit':
    case 'MultiEdit':
      return { kind: 'write', paths: pathField(ti.file_path), verb: 'edit' };
    case 'NotebookEdit':
      return { kind: 'write', paths: pathField(ti.notebook_path), verb: 'edit' };
    case 'Read':
      return { kind: 'read', paths: pathField(ti.file_path) };
    case 'Grep':
      return { kind: 'read', paths: pathField(ti.path) };
    default:
      return { kind: 'other' };
  }
}

export function parseClaudeStyle(
  agent: 'claude' | 'codex',
  raw: Record<string, unknown>,
  toolAction: (tool: string, ti: Record<string, unknown>, cwd: string) => ToolAction,
): AgentEvent {
  const p = CommonPayload.parse(raw);
  const cwd = p.cwd ?? process.cwd();
  const kind = eventKind(agent, p.hook_event_name);
  const ev: AgentEvent = { agent, event: p.hook_event_name, kind, cwd };
  if (p.session_id) ev.sessionId = p.session_id;
  if (p.transcript_path) ev.transcriptPath = p.transcript_path;
  if (p.prompt !== undefined) ev.prompt = p.prompt;
  if (p.reason) ev.reason = p.reason;
  if (p.tool_name) ev.tool = { name: p.tool_name, action: toolAction(p.tool_name, toolInput(p.tool_input), cwd), input: toolInput(p.tool_input) };
  if (p.tool_use_id) ev.toolUseId = p.tool_use_id;
  return ev;
}

/** `hookSpecificOutput` context, for the events that take it. */
export function hookSpecificContext(ev: AgentEvent, text: string, events: readonly string[]) {
  if (!events.includes(ev.event)) return undefined;
  return { exitCode: 0 as const, stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: ev.event, additionalContext: text } }) + '\n', stderr: '' };
}

export const claude: Adapter = {
  agent: 'claude',
  parse: (raw) => parseClaudeStyle('claude', raw, action),
  // PostToolUse and PostToolUseFailure (a command that exited non-zero): what the check after a shell call put back, or which rule kept a path read-only, for the model.
  context: (ev, text) => hookSpecificContext(ev, text, ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure']),
  // updatedInput without a permissionDecision: the call goes through the user's permission rules as before.
  rewrite: (ev, command) => jsonAnswer({ hookSpecificOutput: { hookEventName: ev.event, updatedInput: { ...ev.tool?.input, command } } }),
};
