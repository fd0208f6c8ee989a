/**
 * Codex CLI's hooks (`.codex/hooks.json`; developers.openai.com/codex/hooks). The payload
 * has Claude Code's form (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus
 * `turn_id`, `model`, `permission_mode`); `tool_input` is `{command}` for both `Bash` (the
 * shell and `exec_command`) and `apply_patch` (the raw patch text, file paths relative to
 * the session's cwd).
 *
 * Answers: a denial is exit 0 with `hookSpecificOutput` `{hookEventName, permissionDecision:
 * "deny", permissionDecisionReason}` (Codex 0.171's PreToolUse output parser, codex-rs/hooks
 * output_parser.rs: a deny needs a non-empty reason, which the model reads). Context at SessionStart and UserPromptSubmit is `hookSpecificOutput` with exactly
 * `hookEventName` and `additionalContext`: Codex's output parser rejects unknown keys, and
 * a rejected output lets the call go ahead. Never `permissionDecision: "allow"`, which Codex
 * treats as an error without `updatedInput`.
 */
import { shWord } from '../text/sh-quote.js';
import { resolve } from 'node:path';
import { jsonAnswer, type Adapter } from './event.js';
import type { ToolAction } from '../guard/tool-call.js';
import { hookSpecificContext, parseClaudeStyle } from './claude.js';

/** The files an apply_patch patch adds, updates, deletes or moves to (`*** Add File: <path>` …). */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const line of patch.split('\n')) {
    const m = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/.exec(line);
    if (m && !out.includes(m[1]!)) out.push(m[1]!);
  }
  return out;
}

/** A command given as a string, or as argv (older Codex builds), as one shell line. */
function commandText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return (v as string[]).map(shWord).join(' ');
  return undefined;
}

function action(tool: string, ti: Record<string, unknown>, cwd: string): ToolAction {
  if (tool === 'apply_patch') {
    const patch = typeof ti.command === 'string' ? ti.command : typeof ti.input === 'string' ? ti.input : '';
    return { kind: 'write', paths: patchPaths(patch), verb: 'patch' };
  }
  if (tool === 'Bash' || tool === 'shell' || tool === 'exec_command' || tool === 'local_shell') {
    const command = commandText(ti.command ?? ti.cmd);
    const dir = typeof ti.workdir === 'string' ? resolve(cwd, ti.workdir) : cwd;
    return command !== undefined ? { kind: 'shell', command, cwd: dir } : { kind: 'other' };
  }
  return { kind: 'other' };
}

export const codex: Adapter = {
  agent: 'codex',
  parse: (raw) => parseClaudeStyle('codex', raw, action),
  context: (ev, text) => hookSpecificContext(ev, text, ['SessionStart', 'UserPromptSubmit', 'PostToolUse']),
  // Codex 0.171 takes updatedInput only with permissionDecision "allow" and a string `command`; the call then goes on
  // through Codex's own approval and sandbox.
  rewrite: (ev, command) => jsonAnswer({ hookSpecificOutput: { hookEventName: ev.event, permissionDecision: 'allow', updatedInput: { command } } }),
};
