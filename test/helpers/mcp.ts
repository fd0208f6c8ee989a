/**
 * MCP clients for tests: the SDK's own Client over its StdioClientTransport, spawning
 * `hermesd mcp` as a client configured on this machine would from mcpLaunch() (the built module, with the test
 * environment passed explicitly: the stdio transport forwards only HOME, PATH, SHELL, TERM,
 * USER and LOGNAME). Notifications and transport errors are recorded for assertions.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { REPO_ROOT, type TestEnv } from './env.js';

type LaunchModule = typeof import('../../src/mcp/launch.js');

/** The registration function as built (its CLI path is computed from dist/, where an agent finds it). */
export async function builtLaunch(): Promise<LaunchModule> {
  return (await import(join(REPO_ROOT, 'dist', 'src', 'mcp', 'launch.js'))) as LaunchModule;
}

export type McpSession = {
  client: Client;
  /** resources/updated URIs and list_changed events, in order of arrival. */
  updated: string[];
  listChanged: number;
  /** Anything the client transport could not parse (a stray line on stdout would land here). */
  errors: Error[];
  stderr(): string;
  pid(): number | null;
  close(): Promise<void>;
};

/** Variables of the test environment the server needs (the transport passes few of its own). */
export function serverEnv(t: TestEnv, extra: NodeJS.ProcessEnv = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...t.env, ...extra })) if (v !== undefined) env[k] = v;
  return env;
}

export async function connectMcp(t: TestEnv, repo: string, opts: { name?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<McpSession> {
  const { mcpLaunch } = await builtLaunch();
  const launch = mcpLaunch({ repo, env: t.env });
  const transport = new StdioClientTransport({
    command: launch.command,
    args: launch.args,
    env: { ...serverEnv(t, opts.env), ...launch.env },
    cwd: opts.cwd ?? repo,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: opts.name ?? 'hermesd-test', version: '1.0.0' });
  const session: McpSession = {
    client,
    updated: [],
    listChanged: 0,
    errors: [],
    stderr: () => stderr,
    pid: () => transport.pid,
    close: () => client.close(),
  };
  client.onerror = (err) => session.errors.push(err);
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    session.updated.push(n.params.uri);
  });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    session.listChanged++;
  });
  await client.connect(transport);
  return session;
}

/** The text blocks of a tool result. */
export function texts(result: unknown): string[] {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
}

/** The first text block of a successful tool result, parsed as the JSON hermesd answers. */
export function json(result: unknown): any {
  const r = result as { isError?: boolean };
  if (r.isError) throw new Error(`tool call failed: ${texts(result).join('\n')}`);
  return JSON.parse(texts(result)[0] ?? 'null');
}
