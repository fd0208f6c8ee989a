/**
 * The blocks put into a conversation that are nobody's words: hermesd's own (turn-only recall,
 * turn context, the session context its hooks hand other agents), each inside a fence of its
 * own, and the wrappers the agents put around what hooks inject (Gemini CLI and Codex
 * `<hook_context>`, Claude Code `<system-reminder>`). Transcripts are stored without them, and
 * recall never hands them out again.
 */

export const RECALL_OPEN = '<recalled-context>';
export const RECALL_CLOSE = '</recalled-context>';
export const TURN_CONTEXT_OPEN = '<turn-context>';
export const TURN_CONTEXT_CLOSE = '</turn-context>';
/** Around the memory snapshot and skill index hermesd's hooks hand other agents at session start. */
export const SESSION_CONTEXT_OPEN = '<hermesd-context>';
export const SESSION_CONTEXT_CLOSE = '</hermesd-context>';

/** Fenced blocks inside a message, hermesd's and the agents' (an unclosed one runs to the end). */
const INJECTED_BLOCK = /<(recalled-context|turn-context|hermesd-context|hook_context|system-reminder)>[\s\S]*?(?:<\/\1>|$)/g;
/**
 * Messages that are an agent's own context as a whole: Gemini CLI's first record
 * (`<session_context>`: date, platform, the directory tree), Codex's environment,
 * instructions and injected fragments (codex-rs/core/src/context).
 */
const INJECTED_MESSAGE =
  /^\s*(?:<(?:session_context|environment_context|user_instructions|permissions instructions|collaboration_mode|turn_aborted|subagent_notification|skill|user_shell_command)>|<external_[\w-]+>|# AGENTS\.md instructions for )/;

/** The text with every injected block taken out ('' when nothing else is left), or '' for a message that is injected as a whole. */
export function ownWords(text: string): string {
  if (INJECTED_MESSAGE.test(text)) return '';
  return text.includes('<')
    ? text
        .replace(INJECTED_BLOCK, '')
        .replace(/\n{3,}/g, '\n\n')
        .trim()
    : text.trim();
}

/** Whether a stored message holds injected material: recall leaves such a message out (sessions stored before ownWords existed hold some). */
export function holdsInjected(text: string): boolean {
  INJECTED_BLOCK.lastIndex = 0;
  return INJECTED_MESSAGE.test(text) || INJECTED_BLOCK.test(text);
}
