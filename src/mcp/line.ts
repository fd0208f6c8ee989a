/**
 * `hermesd mcp`'s line to its daemon and what its resources were last seen as: one per process,
 * opened by the front at the client's first `resources/list` (which it answers without the SDK:
 * clients list resources before their first model request) or by the SDK server when it loads,
 * whichever comes first, and shared by both. The line follows the daemon's change events from
 * its first call; the notifications they call for (`notifications/resources/updated` and
 * `notifications/resources/list_changed`) are written here, as the SDK server would write them.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import type { RepoPaths } from '../paths/index.js';
import { DaemonLink } from './link.js';
import { ALL_FAMILIES, familiesOf, RESOURCE_KINDS, ResourceChanges, type ResourceContext, type ResourceKind } from './resources.js';

/** How long a resource list waits for the daemon before it answers with the fixed resources alone. */
const LIST_BOUND_MS = 2_000;

export type DaemonLine = {
  link: DaemonLink;
  changes: ResourceChanges;
  ctx: ResourceContext;
  /** The MCP session id the daemon's log and skill commits name. */
  sessionId(): string;
};

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

export function openLine(opts: {
  paths: RepoPaths;
  start: string;
  write(message: unknown): void;
  log(message: string): void;
  clientName(): string | undefined;
}): DaemonLine {
  const { write, log } = opts;
  const sessionId = () => sessionIdOf(opts.clientName());
  let changes: ResourceChanges | undefined;
  const link = new DaemonLink(
    opts.paths,
    {
      onChange: (event) => void changes?.changed(familiesOf(event)),
      // Changes made while no stream was open (before the first, during a restart) were not seen.
      onSubscribed: () => void changes?.changed(ALL_FAMILIES),
      log,
    },
    sessionId,
  );
  const ctx: ResourceContext = { link, cwd: cwdIn(opts.paths.root, opts.start) };
  changes = new ResourceChanges(ctx, {
    updated: (uri) => write({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } }),
    listChanged: () => write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' }),
    log,
  });
  return { link, changes, ctx, sessionId };
}

/** The metadata a kind's resources are listed with (the SDK server registers each kind with it). */
export function metadataOf(kind: ResourceKind): { title: string; description: string; mimeType?: string } {
  return { title: kind.title, description: kind.description, ...(kind.mimeType ? { mimeType: kind.mimeType } : {}) };
}

/**
 * What a template kind lists now, recorded (with its family's fixed URIs) for later
 * list_changed. A daemon that does not answer within LIST_BOUND_MS leaves the list at the fixed
 * resources rather than the client waiting (Claude Code waits for the list before it shows the
 * tools); the daemon's trouble goes to the log.
 */
export async function listKind(line: DaemonLine, kind: ResourceKind, log: (message: string) => void): Promise<Resource[]> {
  if (!kind.list) return [];
  const fixed = RESOURCE_KINDS.filter((k) => k.family === kind.family && k.uri).map((k) => k.uri!);
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`the daemon did not answer within ${LIST_BOUND_MS} ms`)), LIST_BOUND_MS)),
    );
    const resources = await Promise.race([kind.list(line.ctx), late]);
    line.changes.recordList(kind.family, [...fixed, ...resources.map((r) => r.uri)]);
    return resources;
  } catch (err) {
    log(`could not list ${kind.name} resources: ${(err as Error)?.message ?? String(err)}`);
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `resources/list` as the SDK server answers it (its fixed resources in the order registered,
 * then each template's list, each resource over its template's metadata), without the SDK.
 */
export async function listResources(line: DaemonLine, log: (message: string) => void): Promise<{ resources: Resource[] }> {
  const resources: Resource[] = RESOURCE_KINDS.filter((k) => k.uri).map((k) => ({ uri: k.uri!, name: k.name, ...metadataOf(k) }));
  for (const kind of RESOURCE_KINDS) {
    if (!kind.list) continue;
    for (const r of await listKind(line, kind, log)) resources.push({ ...metadataOf(kind), ...r });
  }
  return { resources };
}
