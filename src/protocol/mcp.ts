/** What `hermesd mcp` and the agents' MCP registrations (`init --agents`) agree on. */

/** The server's name in `initialize` and in agents' configs (no underscore: Gemini CLI splits tool names on it). */
export const MCP_SERVER_NAME = 'hermesd';

/**
 * hermesd's own variables the MCP server must see to reach the same state and daemon as the
 * user's shell; stdio clients pass on only a few variables (the SDK's client, Codex), so a
 * registration names these to forward.
 */
export const FORWARDED_ENV = ['HERMES_HOME', 'HERMESD_SOCKET_DIR'] as const;
