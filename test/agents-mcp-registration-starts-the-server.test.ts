/**
 * The MCP registrations `hermesd init --agents all` wrote start a working `hermesd mcp`:
 * each entry read back from its file (`.mcp.json`, `.cursor/mcp.json`, `[mcp_servers.hermesd]`
 * in `.codex/config.toml`, `mcpServers` in `.gemini/settings.json`), its placeholders expanded
 * as that agent expands them, started with the agent's working directory and only the
 * environment the entry names (stdio clients pass few variables), then asked through the
 * SDK's own client for its tools and one call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonc } from '../src/agents/json-edit.js';
import { makeEnv, type TestEnv } from './helpers/env.js';

type Entry = { command: string; args: string[]; env?: Record<string, string> };

describe('the MCP servers init --agents registered', () => {
  let t: TestEnv;
  let repo: string;

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': 'rules: []\n', 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  const entries = (): Record<string, Entry> => {
    const json = (f: string) => parseJsonc(readFileSync(join(repo, f), 'utf8')).value as { mcpServers: Record<string, Entry> };
    const codex = parse(readFileSync(join(repo, '.codex/config.toml'), 'utf8')) as unknown as { mcp_servers: Record<string, Entry> };
    return {
      claude: json('.mcp.json').mcpServers.hermesd!,
      cursor: json('.cursor/mcp.json').mcpServers.hermesd!,
      codex: codex.mcp_servers.hermesd!,
      gemini: json('.gemini/settings.json').mcpServers.hermesd!,
    };
  };

  // What each agent puts in place of its placeholders: CLAUDE_PROJECT_DIR is set in the server's environment.
  const expand = (agent: string, arg: string) =>
    agent === 'claude' ? arg.replace('${CLAUDE_PROJECT_DIR:-.}', repo) : agent === 'cursor' ? arg.replace('${workspaceFolder}', repo) : arg;

  it.each(['claude', 'cursor', 'codex', 'gemini'])('%s: the registered command serves the repository', async (agent) => {
    const e = entries()[agent]!;
    const transport = new StdioClientTransport({
      command: e.command,
      args: e.args.map((a) => expand(agent, a)),
      env: { PATH: process.env.PATH ?? '', ...(e.env ?? {}) },
      cwd: repo,
      stderr: 'pipe',
    });
    const client = new Client({ name: `as-${agent}`, version: '1' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((x) => x.name);
      expect(tools).toContain('memory');
      expect(tools).toContain('check');
      const ctx = await client.callTool({ name: 'context', arguments: {} });
      expect(ctx.isError ?? false).toBe(false);
      expect(JSON.stringify(ctx.content)).toContain('AGENTS.md');
    } finally {
      await client.close();
    }
  });
});
