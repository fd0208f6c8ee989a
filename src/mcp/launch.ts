/**
 * How an agent starts `hermesd mcp`: what `hermesd init --agents` writes into each agent's
 * MCP config (`.mcp.json`, `.cursor/mcp.json`, `.codex/config.toml`, `.gemini/settings.json`).
 * The command is this install's node and CLI by absolute path, as the git hooks bake them in:
 * an agent started from a GUI may not have `hermesd` (or this node) on its PATH.
 */
import { CLI_ENTRY } from '../version.js';

export type McpLaunch = {
  command: string;
  args: string[];
  /** Variables the server needs that stdio clients do not pass on (the SDK and Codex forward only a few). */
  env?: Record<string, string>;
};

/** hermesd's own variables an MCP server must see to reach the same state and daemon as the shell that registered it. */
export const FORWARDED_ENV = ['HERMES_HOME', 'HERMESD_SOCKET_DIR'] as const;

export type McpLaunchOptions = {
  /**
   * The repository to serve (`--repo`): an absolute path, or an agent's placeholder such as
   * `${CLAUDE_PROJECT_DIR:-.}` or `${workspaceFolder}`. Omitted: the server serves the
   * directory the agent starts it in.
   */
  repo?: string;
  /** Where FORWARDED_ENV values are read (default: this process's environment); unset ones are left out. */
  env?: NodeJS.ProcessEnv;
  nodePath?: string;
  cliPath?: string;
};

export function mcpLaunch(opts: McpLaunchOptions = {}): McpLaunch {
  const source = opts.env ?? process.env;
  const env: Record<string, string> = {};
  for (const name of FORWARDED_ENV) {
    const value = source[name];
    if (value) env[name] = value;
  }
  return {
    command: opts.nodePath ?? process.execPath,
    args: [opts.cliPath ?? CLI_ENTRY, 'mcp', ...(opts.repo ? ['--repo', opts.repo] : [])],
    ...(Object.keys(env).length > 0 ? { env } : {}),
  };
}
