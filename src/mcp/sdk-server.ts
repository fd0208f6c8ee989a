/**
 * `hermesd mcp`: an MCP server over stdio for one repository, built on the official SDK.
 * It is a client of that repository's daemon (started when needed): every tool call and
 * resource read is an API request, so the MCP tools share the daemon's paths — the same
 * threat scan, budgets, refusals, commits and rollback as hermesd's own agent. stdout carries
 * only the protocol; this process logs to stderr, the daemon to its own log.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  McpError,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { RepoPaths } from '../paths/index.js';
import { HermesError, RemoteError } from '../errors/index.js';
import { MCP_SERVER_NAME } from '../protocol/mcp.js';
import { VERSION } from '../version.js';
import { listKind, metadataOf, openLine, type DaemonLine } from './line.js';
import { kindOf, RESOURCE_KINDS, ResourceMissing, type Contents, type ResourceKind } from './resources.js';
import type { StaticAnswers } from './answers.js';
import { MCP_TOOLS, refusal, type McpToolContext } from './tools.js';

/** MCP's "resource not found" (the spec's -32002; the SDK has no constant for it). */
const RESOURCE_NOT_FOUND = -32002;

/** Sent at `initialize`; Codex shows clients the first 512 characters, so they say it all. */
export const INSTRUCTIONS =
  "hermesd keeps this repository's agent state. memory: durable facts (MEMORY.md) and the user's preferences (USER.md), " +
  'bounded, shown to the next session. session_search: evidence of what happened in earlier sessions. skills_list, skill_view, ' +
  "skill_manage: reusable procedures, versioned. check: the repository's rules on the work tree or staged snapshot; run it " +
  'before committing. context: the authority files and prompt tiers in force.';

export type McpServerOptions = {
  /** The line to the daemon and the resources' change tracking, shared with the front (line.ts). */
  line: DaemonLine;
  log(message: string): void;
};

function messageOf(err: unknown, log: (m: string) => void): string {
  if (err instanceof HermesError) return err.message;
  log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return `hermesd mcp: internal error: ${(err as Error)?.message ?? String(err)}`;
}

/** The SDK server with hermesd's tools, resources and subscriptions (the line's change tracking sends the notifications). */
export function createMcpServer(opts: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'hermesd', version: VERSION },
    // The SDK declares only listChanged for resources; subscriptions are ours (handlers below).
    { capabilities: { resources: { subscribe: true, listChanged: true } }, instructions: INSTRUCTIONS },
  );
  const { line } = opts;
  const resourceCtx = line.ctx;
  const changes = line.changes;

  const toolCtx: McpToolContext = { link: line.link, sessionId: line.sessionId, cwd: resourceCtx.cwd };
  for (const tool of MCP_TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations },
      async (args: Record<string, unknown>): Promise<CallToolResult> => {
        try {
          return await tool.call(args, toolCtx);
        } catch (err) {
          return refusal(messageOf(err, opts.log));
        }
      },
    );
  }

  const read = async (kind: ResourceKind, uri: string, vars: Record<string, string>): Promise<{ contents: Contents }> => {
    try {
      return { contents: await kind.read(resourceCtx, uri, vars) };
    } catch (err) {
      if (err instanceof ResourceMissing || (err instanceof RemoteError && err.httpStatus === 404))
        throw new McpError(RESOURCE_NOT_FOUND, (err as Error).message, { uri });
      throw new McpError(err instanceof RemoteError && err.httpStatus < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, messageOf(err, opts.log));
    }
  };
  for (const kind of RESOURCE_KINDS) {
    const meta = metadataOf(kind);
    if (kind.uri) {
      server.registerResource(kind.name, kind.uri, meta, (uri) => read(kind, uri.href, {}));
      continue;
    }
    // The front answers resources/list the same way while this server is not loaded (line.ts).
    const list = kind.list ? async () => ({ resources: await listKind(line, kind, opts.log) }) : undefined;
    server.registerResource(kind.name, new ResourceTemplate(kind.template!, { list }), meta, (uri, vars) =>
      read(kind, uri.href, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]))),
    );
  }

  const served = (raw: string): string => {
    let uri: string;
    try {
      uri = new URL(raw).href;
    } catch {
      throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(raw)} is not a URI.`);
    }
    if (!kindOf(uri)) throw new McpError(ErrorCode.InvalidParams, `hermesd serves no resource ${uri}; list the resources and templates.`);
    return uri;
  };
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    await changes.subscribe(served(req.params.uri));
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    changes.unsubscribe(served(req.params.uri));
    return {};
  });
  return server;
}

/** What the front hands the SDK server: every message it does not answer itself. */
export type McpStage = { deliver(message: unknown): void };

/** The SDK's transport, fed by the front (which reads stdin) and writing through it (which owns stdout). */
class FrontTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  constructor(private readonly write: (message: JSONRPCMessage) => void) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.write(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
}

/**
 * The SDK server for one repository, behind the front (front.ts): started at the first message
 * the front does not answer itself. The front replays the client's `initialize` into it first,
 * so it holds the client's capabilities; the daemon is reached on the first call that needs it.
 */
export function startMcpStage(opts: { line: DaemonLine; root: string; write(message: unknown): void; log(message: string): void }): McpStage {
  const { log } = opts;
  const server = createMcpServer({ line: opts.line, log });
  const transport = new FrontTransport(opts.write);
  transport.onerror = (err) => log(`protocol: ${err.message}`);
  void server.connect(transport);
  log(`serving ${opts.root}`);
  return {
    deliver(message) {
      const parsed = JSONRPCMessageSchema.safeParse(message);
      if (!parsed.success) return transport.onerror?.(parsed.error);
      transport.onmessage?.(parsed.data);
    },
  };
}

/**
 * The SDK server's answers that need no daemon (answers.ts), as the build records them: each
 * `initialize` it supports, one it does not, `tools/list`, `resources/templates/list`.
 */
export async function recordAnswers(): Promise<StaticAnswers> {
  // A line that is never called: these answers need no daemon.
  const line = openLine({
    paths: { root: process.cwd() } as RepoPaths,
    start: process.cwd(),
    write: () => undefined,
    log: () => undefined,
    clientName: () => 'record',
  });
  const server = createMcpServer({ line, log: () => undefined });
  const [client, side] = InMemoryTransport.createLinkedPair();
  const results = new Map<string | number, unknown>();
  client.onmessage = (m) => {
    if ('id' in m && 'result' in m) results.set(m.id, m.result);
  };
  await server.connect(side);
  await client.start();
  let id = 0;
  const ask = async (method: string, params: Record<string, unknown> = {}): Promise<unknown> => {
    const at = ++id;
    await client.send({ jsonrpc: '2.0', id: at, method, params });
    for (let i = 0; i < 100 && !results.has(at); i++) await new Promise((r) => setImmediate(r));
    if (!results.has(at)) throw new Error(`the MCP server did not answer ${method}`);
    return results.get(at);
  };
  const init = (protocolVersion: string) => ask('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'record', version: '0' } });
  const initialize: Record<string, unknown> = {};
  for (const v of SUPPORTED_PROTOCOL_VERSIONS) initialize[v] = await init(v);
  const answers: StaticAnswers = {
    version: VERSION,
    initialize,
    initializeOther: await init('0000-00-00'),
    tools: await ask('tools/list'),
    templates: await ask('resources/templates/list'),
  };
  await server.close();
  return answers;
}
