/** POST /v1/tools/:name: hermesd's own state tools, served to local clients (the MCP server, editors). */

/** The agent tools a local client may call; the file and terminal tools stay with hermesd's own sandboxed agent. */
export const SERVED_TOOLS = ['memory', 'session_search', 'skills_list', 'skill_view', 'skill_manage', 'remember'] as const;

/** `content` is the JSON string hermesd's model would read; `error` the refusal's message when `ok` is false. */
export type ToolAnswer = { ok: boolean; content: string; error?: string };
