/**
 * Gemini CLI's hooks (`hooks` in `.gemini/settings.json`; google-gemini/gemini-cli/docs/hooks/reference.md of
 * google-gemini/gemini-cli). Stdin: `session_id`, `transcript_path`, `cwd`,
 * `hook_event_name`, `timestamp`; `prompt` on BeforeAgent; `tool_name` / `tool_input` on
 * BeforeTool and AfterTool (`run_shell_command {command, dir_path?}`, `write_file
 * {file_path, content}`, `replace {file_path, …}`, `read_file {file_path}`,
 * `read_many_files {include, …}`; paths relative to `cwd` or absolute).
 *
 * Answers: a denial is exit 0 with `{"decision": "deny", "reason"}` (gemini-cli/docs/hooks/reference.md:
 * the reason goes to the agent as the tool's error; exit 2 worked too, but Gemini then warned the
 * user "Hook(s) [hermesd] failed" on every refusal). Context at SessionStart and BeforeAgent is
 * `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`. Never exit with another
 * non-zero code and text: Gemini blocks the call on any exit but 0 and 1.
 */
import { resolve } from 'node:path';
import { eventKind } from './hook-table.js';
import { CommonPayload, jsonAnswer, pathField, toolInput, type Adapter, type AgentEvent } from './event.js';
import type { ToolAction } from '../guard/tool-call.js';
import { hookSpecificContext } from './claude.js';

function action(tool: string, ti: Record<string, unknown>, cwd: string): ToolAction {
  switch (tool) {
    case 'run_shell_command': {
      const dir = typeof ti.dir_path === 'string' && ti.dir_path !== '' ? resolve(cwd, ti.dir_path) : cwd;
      return typeof ti.command === 'string' ? { kind: 'shell', command: ti.command, cwd: dir } : { kind: 'other' };
    }
    case 'write_file':
      return { kind: 'write', paths: pathField(ti.file_path), verb: 'write' };
    case 'replace':
      return { kind: 'write', paths: pathField(ti.file_path), verb: 'edit' };
    case 'read_file':
      return { kind: 'read', paths: pathField(ti.file_path) };
    case 'read_many_files': {
      const include = Array.isArray(ti.include) ? ti.include : Array.isArray(ti.paths) ? ti.paths : [];
      return { kind: 'read', paths: include.filter((p): p is string => typeof p === 'string') };
    }
    default:
      return { kind: 'other' };
  }
}

export const gemini: Adapter = {
  agent: 'gemini',
  parse(raw) {
    const p = CommonPayload.parse(raw);
    const cwd = p.cwd ?? process.cwd();
    const ev: AgentEvent = { agent: 'gemini', event: p.hook_event_name, kind: eventKind('gemini', p.hook_event_name), cwd };
    if (p.session_id) ev.sessionId = p.session_id;
    if (p.transcript_path) ev.transcriptPath = p.transcript_path;
    if (p.prompt !== undefined) ev.prompt = p.prompt;
    if (p.reason) ev.reason = p.reason;
    if (p.tool_name) ev.tool = { name: p.tool_name, action: action(p.tool_name, toolInput(p.tool_input), cwd), input: toolInput(p.tool_input) };
    return ev;
  },
  // AfterTool: appended to the tool's result for the model.
  context: (ev, text) => hookSpecificContext(ev, text, ['SessionStart', 'BeforeAgent', 'AfterTool']),
  // hookSpecificOutput.tool_input is merged over the model's arguments (gemini-cli/docs/hooks/reference.md, BeforeTool).
  rewrite: (ev, command) => jsonAnswer({ hookSpecificOutput: { hookEventName: ev.event, tool_input: { command } } }),
};
