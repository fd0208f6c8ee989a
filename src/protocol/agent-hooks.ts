/**
 * The agents hermesd answers, their hook events, and how each one reads an answer — written
 * once, here, as data. Everything that names an agent or an event reads this table: the
 * adapters (other-agents/, which read a payload's event and word a refusal by it:
 * other-agents/hook-table.ts), the ask route, the agents' hook runner (its `case` lines are
 * generated from it when `hermesd init --agents` writes the runner) and the C client (its table
 * is generated into a header when it is compiled, hook-client/build.ts). A refusal made by the
 * client or the curl runner (a daemon that cannot answer) is therefore the same bytes as the
 * daemon's.
 */

import { shQuote } from '../text/sh-quote.js';

export const AGENT_NAMES = ['claude', 'codex', 'cursor', 'gemini'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** What an event is for hermesd, whatever the agent calls it. */
export const EVENT_KINDS = ['session-start', 'prompt', 'pre-tool', 'post-tool', 'stop', 'session-end'] as const;
export type EventKind = (typeof EVENT_KINDS)[number] | 'other';

/** Claude Code's hook events (code.claude.com/docs/en/hooks); Codex sends the same names (its hooks are Claude Code's form). */
const CLAUDE_EVENTS = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre-tool',
  PostToolUse: 'post-tool',
  PostToolUseFailure: 'post-tool',
  Stop: 'stop',
  SubagentStop: 'stop',
  SessionEnd: 'session-end',
} as const satisfies Record<string, EventKind>;

/** Each agent's own event names and what each is for hermesd. */
export const AGENT_EVENTS: Readonly<Record<AgentName, Readonly<Record<string, EventKind>>>> = {
  claude: CLAUDE_EVENTS,
  codex: CLAUDE_EVENTS,
  // cursor.com/docs/hooks
  cursor: {
    sessionStart: 'session-start',
    beforeSubmitPrompt: 'prompt',
    preToolUse: 'pre-tool',
    beforeShellExecution: 'pre-tool',
    beforeReadFile: 'pre-tool',
    beforeMCPExecution: 'pre-tool',
    postToolUse: 'post-tool',
    postToolUseFailure: 'post-tool',
    afterFileEdit: 'post-tool',
    afterShellExecution: 'post-tool',
    afterMCPExecution: 'post-tool',
    afterAgentResponse: 'post-tool',
    stop: 'stop',
    subagentStop: 'stop',
    sessionEnd: 'session-end',
  },
  // Gemini CLI's hooks reference (google-gemini/gemini-cli/docs/hooks/reference.md)
  gemini: {
    SessionStart: 'session-start',
    BeforeAgent: 'prompt',
    BeforeTool: 'pre-tool',
    AfterTool: 'post-tool',
    AfterAgent: 'stop',
    SessionEnd: 'session-end',
  },
};

/** Agents' events that come before a tool call, by any agent's name: a fault refuses them (agents.onUnavailable). */
export const PRE_TOOL_EVENTS: ReadonlySet<string> = new Set(
  AGENT_NAMES.flatMap((a) => Object.keys(AGENT_EVENTS[a]).filter((e) => AGENT_EVENTS[a][e] === 'pre-tool')),
);

/**
 * How each agent reads "refused, because…": JSON on stdout, exit 0, with `$REASON` and
 * `$EVENT` standing for the reason and the event's name as JSON strings. The first row whose
 * agent (and event, where a row names one) matches is the form.
 * - Claude Code and Codex: `hookSpecificOutput.permissionDecision: "deny"` with the reason
 *   (Codex takes exactly these three keys and rejects unknown ones).
 * - Cursor: `permission: "deny"` with a message for the user and one for the agent;
 *   `beforeReadFile` takes the permission and the user's message only.
 * - Gemini CLI: `decision: "deny"` with the reason.
 */
export const DENY_FORMS: readonly { agent: AgentName; event?: string; form: string }[] = [
  { agent: 'claude', form: '{"hookSpecificOutput":{"hookEventName":$EVENT,"permissionDecision":"deny","permissionDecisionReason":$REASON}}' },
  { agent: 'codex', form: '{"hookSpecificOutput":{"hookEventName":$EVENT,"permissionDecision":"deny","permissionDecisionReason":$REASON}}' },
  { agent: 'cursor', event: 'beforeReadFile', form: '{"permission":"deny","user_message":$REASON}' },
  { agent: 'cursor', form: '{"permission":"deny","user_message":$REASON,"agent_message":$REASON}' },
  { agent: 'gemini', form: '{"decision":"deny","reason":$REASON}' },
];

/**
 * What each agent is told when hermesd has nothing to say (no decision, no context): nothing,
 * exit 0 — never an explicit "allow", which would skip the user's own permission prompts —
 * except Cursor, which is said to want JSON on every path: `{}` holds no `permission`.
 */
export const SILENT_FORMS: Readonly<Record<AgentName, string>> = { claude: '', codex: '', cursor: '{}\n', gemini: '' };

const cString = (s: string) => JSON.stringify(s);

/** The C client's copy of the agents and their answers (build.ts writes it into the header client.c includes). */
export function agentHooksHeader(): string {
  const deny = DENY_FORMS.map((r) => `  {${cString(r.agent)}, ${r.event === undefined ? 'NULL' : cString(r.event)}, ${cString(r.form)}},`);
  const silent = AGENT_NAMES.map((a) => `  {${cString(a)}, ${cString(SILENT_FORMS[a])}},`);
  return [
    '/* Generated from src/protocol/agent-hooks.ts when the client is compiled; edit that file instead. */',
    '#define HERMESD_AGENTS "' + AGENT_NAMES.join('|') + '"',
    'static const struct { const char *agent, *event, *form; } DENY_FORMS[] = {',
    ...deny,
    '  {NULL, NULL, NULL},',
    '};',
    'static const struct { const char *agent, *text; } SILENT_FORMS[] = {',
    ...silent,
    '  {NULL, NULL},',
    '};',
    '',
  ].join('\n');
}

/**
 * The agents' hook runner's copy (sh, sourced before curl.sh): `hermesd_is_agent <name>`,
 * `hermesd_is_pre_tool <event>`, `hermesd_deny <agent> <event> <reason as JSON>` and
 * `hermesd_silent <agent>`.
 */
export function agentHooksSh(): string {
  const pieces = (form: string) =>
    form
      .split(/(\$REASON|\$EVENT)/)
      .filter(Boolean)
      .map((p) => (p === '$REASON' ? '"$3"' : p === '$EVENT' ? '"$hermesd_ev"' : shQuote(p)))
      .join('');
  const denyCases = DENY_FORMS.map((r) => `    ${r.agent}:${r.event ?? '*'}) printf '%s\\n' ${pieces(r.form)} ;;`);
  const silentCases = AGENT_NAMES.filter((a) => SILENT_FORMS[a] !== '').map((a) => `    ${a}) printf '%s' ${shQuote(SILENT_FORMS[a])} ;;`);
  return [
    '# Generated from src/protocol/agent-hooks.ts when this runner is written; edit that file instead.',
    `hermesd_is_agent() { case $1 in ${AGENT_NAMES.join(' | ')}) return 0 ;; esac; return 1; }`,
    `hermesd_is_pre_tool() { case $1 in ${[...PRE_TOOL_EVENTS].join(' | ')}) return 0 ;; esac; return 1; }`,
    '# $1 agent, $2 event (letters and -), $3 the reason as a JSON string.',
    'hermesd_deny() {',
    '  hermesd_ev="\\"$2\\""',
    '  case $1:$2 in',
    ...denyCases,
    '  esac',
    '}',
    'hermesd_silent() {',
    '  case $1 in',
    ...silentCases,
    '  esac',
    '}',
    '',
  ].join('\n');
}
