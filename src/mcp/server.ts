/**
 * `hermesd mcp`: an MCP server over stdio for one repository, built on the official SDK.
 * It is a client of that repository's daemon (started when needed): every tool call and
 * resource read is an API request, so the MCP tools share the daemon's paths — the same
 * threat scan, budgets, refusals, commits and rollback as hermesd's own agent. stdout carries
 * only the protocol; this process logs to stderr, the daemon to its own log.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resolvePaths } from '../paths/index.js';
import { HermesError, RemoteError } from '../errors/index.js';
import { MCP_SERVER_NAME } from '../protocol/mcp.js';
import { VERSION } from '../version.js';
import { DaemonLink } from './link.js';
import { ALL_FAMILIES, familiesOf, kindOf, RESOURCE_KINDS, ResourceChanges, ResourceMissing, type Contents, type ResourceContext, type ResourceKind } from './resources.js';
import { MCP_MESSAGE_MAX_BYTES, MessageLimit } from './stdio.js';
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
  link: DaemonLink;
  /** The directory the client works in, inside the work tree (the authority chain runs down to it). */
  cwd: string | undefined;
  /** Names the caller in skill commits. */
  sessionId(): string;
  log(message: string): void;
};

function messageOf(err: unknown, log: (m: string) => void): string {
  if (err instanceof HermesError) return err.message;
  log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return `hermesd mcp: internal error: ${(err as Error)?.message ?? String(err)}`;
}

/** The SDK server with hermesd's tools, resources and subscriptions; `changes` takes the daemon's events. */
export function createMcpServer(opts: McpServerOptions): { server: McpServer; changes: ResourceChanges } {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'hermesd', version: VERSION },
    // The SDK declares only listChanged for resources; subscriptions are ours (handlers below).
    { capabilities: { resources: { subscribe: true, listChanged: true } }, instructions: INSTRUCTIONS },
  );
  const resourceCtx: ResourceContext = { link: opts.link, cwd: opts.cwd };
  const changes = new ResourceChanges(resourceCtx, {
    updated: (uri) => server.server.sendResourceUpdated({ uri }).catch(() => undefined),
    listChanged: () => server.sendResourceListChanged(),
    log: opts.log,
  });

  const toolCtx: McpToolContext = { link: opts.link, sessionId: opts.sessionId, cwd: opts.cwd };
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
      if (err instanceof ResourceMissing || (err instanceof RemoteError && err.httpStatus === 404)) throw new McpError(RESOURCE_NOT_FOUND, (err as Error).message, { uri });
      throw new McpError(err instanceof RemoteError && err.httpStatus < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, messageOf(err, opts.log));
    }
  };
  for (const kind of RESOURCE_KINDS) {
    const meta = { title: kind.title, description: kind.description, ...(kind.mimeType ? { mimeType: kind.mimeType } : {}) };
    if (kind.uri) {
      server.registerResource(kind.name, kind.uri, meta, (uri) => read(kind, uri.href, {}));
      continue;
    }
    const fixed = RESOURCE_KINDS.filter((k) => k.family === kind.family && k.uri).map((k) => k.uri!);
    const list = kind.list
      ? async () => {
          try {
            const resources = await kind.list!(resourceCtx);
            changes.recordList(kind.family, [...fixed, ...resources.map((r) => r.uri)]);
            return { resources };
          } catch (err) {
            // The fixed resources are still listed; the daemon's trouble is in the log.
            opts.log(`could not list ${kind.name} resources: ${messageOf(err, opts.log)}`);
            return { resources: [] };
          }
        }
      : undefined;
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
  return { server, changes };
}

/** `mcp:<client name>` as the daemon accepts a session id. */
function sessionIdOf(clientName: string | undefined): string {
  const name = (clientName ?? '').replace(/[^\w.@-]+/g, '-').slice(0, 100);
  return `mcp:${name || 'client'}`;
}

/** The work tree directory the client works in: `--repo` or the current directory, when inside the root. */
function cwdIn(root: string, start: string): string | undefined {
  try {
    const real = realpathSync(start);
    const rel = relative(root, real);
    return rel.startsWith('..') || isAbsolute(rel) ? undefined : real;
  } catch {
    return undefined;
  }
}

/** Runs the server on this process's stdin/stdout until the client closes stdin (or a signal). */
export async function runMcpServer(opts: { repo?: string } = {}): Promise<void> {
  const start = resolve(opts.repo ?? process.cwd());
  const paths = resolvePaths(start);
  const log = (message: string) => {
    process.stderr.write(`hermesd mcp: ${message}\n`);
  };
  let clientName: string | undefined;
  const sessionId = () => sessionIdOf(clientName);
  let changes: ResourceChanges | undefined;
  const link = new DaemonLink(
    paths,
    {
      onChange: (event) => void changes?.changed(familiesOf(event)),
      // Changes made while no stream was open (before the first, during a restart) were not seen.
      onSubscribed: () => void changes?.changed(ALL_FAMILIES),
      log,
    },
    sessionId,
  );
  const built = createMcpServer({ link, cwd: cwdIn(paths.root, start), sessionId, log });
  changes = built.changes;
  const { server } = built;

  // A message over the bound is dropped and answered here; the session goes on.
  const input = new MessageLimit((o) => {
    log(`dropped a message of ${o.bytes} bytes (limit ${MCP_MESSAGE_MAX_BYTES})`);
    if (o.id === undefined) return;
    void transport
      .send({ jsonrpc: '2.0', id: o.id, error: { code: ErrorCode.InvalidRequest, message: `The request is ${o.bytes} bytes; hermesd mcp reads messages up to ${MCP_MESSAGE_MAX_BYTES} bytes.` } })
      .catch(() => undefined);
  });
  const transport = new StdioServerTransport(input, process.stdout, { maxBufferSize: 2 * MCP_MESSAGE_MAX_BYTES });
  transport.onerror = (err) => log(`protocol: ${err.message}`);
  server.server.oninitialized = () => {
    const client = server.server.getClientVersion();
    clientName = client?.name;
    log(`${client?.name ?? 'a client'} ${client?.version ?? ''} connected; serving ${paths.root}`.replace(/\s+/g, ' '));
    // Warm the daemon (and the change events) now rather than on the first call.
    link.connect().catch((err: unknown) => log(`the daemon is not available yet: ${messageOf(err, log)}`));
  };

  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  let closing = false;
  const close = (why: string) => {
    if (closing) return;
    closing = true;
    log(`closing (${why})`);
    link.close();
    server.close().catch(() => undefined);
    finish();
  };
  process.on('uncaughtException', (err) => log(`uncaught: ${err?.stack ?? String(err)}`));
  process.on('unhandledRejection', (err) => log(`unhandled rejection: ${(err as Error)?.stack ?? String(err)}`));
  process.stdout.on('error', () => close('stdout closed'));
  process.stdin.on('end', () => close('stdin ended'));
  process.stdin.on('close', () => close('stdin closed'));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => close(sig));
  process.stdin.pipe(input);
  await server.connect(transport);
  await done;
}
