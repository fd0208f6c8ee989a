/**
 * How this machine starts `hermesd mcp` directly: this install's node and the server's bundle
 * (MCP_ENTRY, which starts faster than the CLI's `hermesd mcp`) by absolute path, and
 * hermesd's variables from the environment. For a client configured on this
 * machine only (an editor's user settings, the tests, the benchmark). It is not what
 * `hermesd init --agents` registers: those entries are committed, so they run the
 * repository's stub `.hermes/mcp`, which finds this clone's hermesd (src/other-agents/install.ts).
 */
import { FORWARDED_ENV } from '../protocol/mcp.js';
import { MCP_ENTRY } from '../version.js';

export type McpLaunch = {
  command: string;
  args: string[];
  /** Variables the server needs that stdio clients do not pass on (the SDK and Codex forward only a few). */
  env?: Record<string, string>;
};

export type McpLaunchOptions = {
  /** The repository to serve (`--repo`); omitted: the directory the client starts the server in. */
  repo?: string;
  /** Where FORWARDED_ENV values are read (default: this process's environment); unset ones are left out. */
  env?: NodeJS.ProcessEnv;
};

export function mcpLaunch(opts: McpLaunchOptions = {}): McpLaunch {
  const source = opts.env ?? process.env;
  const env: Record<string, string> = {};
  for (const name of FORWARDED_ENV) {
    const value = source[name];
    if (value) env[name] = value;
  }
  return {
    command: process.execPath,
    args: [MCP_ENTRY, ...(opts.repo ? ['--repo', opts.repo] : [])],
    ...(Object.keys(env).length > 0 ? { env } : {}),
  };
}
