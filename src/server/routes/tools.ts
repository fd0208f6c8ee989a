/**
 * hermesd's own state tools for local clients (the MCP server, editors):
 *
 *   POST /v1/tools/:name   body: the tool's arguments → {ok, content, error?}
 *
 * The call runs exactly what the agent's call runs (runToolCall): the tool's own schema,
 * threat scan, budgets, refusals, skill commits and rollback, secret redaction and result
 * cap. `content` is the JSON string hermesd's model would read; `ok` is false when the tool
 * refused or failed, and `error` then carries its message. Only the tools over hermesd's
 * state are served: the file and terminal tools belong to hermesd's own sandboxed agent.
 */
import { z } from 'zod';
import { runToolCall, TOOLS, type Tool } from '../../agent/tools/index.js';
import { NotFound } from '../../errors/index.js';
import { SERVED_TOOLS, type ToolAnswer } from '../../protocol/tools.js';
import { parseWith } from '../http.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

const served: ReadonlyMap<string, Tool> = new Map(TOOLS.filter((t) => (SERVED_TOOLS as readonly string[]).includes(t.name)).map((t) => [t.name, t]));

/** Names the caller in skill commits ("(session mcp:claude-code)") and in session_search's own-lineage filter. */
const sessionIdSchema = z.string().regex(/^[\w.:@-]{1,128}$/, 'letters, digits and . _ : @ - only, at most 128');

export function toolsRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/tools',
      handler: () => ({ tools: [...served.keys()] }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/tools/:name',
      handler: async ({ params, query, body, signal }): Promise<ToolAnswer> => {
        const tool = served.get(params.name!);
        if (!tool) throw new NotFound(`No tool ${JSON.stringify(params.name)} is served here. Tools: ${[...served.keys()].join(', ')}.`);
        const sessionId = parseWith(sessionIdSchema, query.get('session_id') ?? 'api', 'query session_id');
        const config = services.config.get();
        const ctx = { root: services.daemon.root, sessionId, signal, config, services: services.agentServices(config) };
        const outcome = await runToolCall([tool], { name: tool.name, arguments: JSON.stringify(body ?? {}) }, ctx);
        if (outcome.ok) return { ok: true, content: outcome.content };
        let error = outcome.summary;
        try {
          const parsed = JSON.parse(outcome.content) as { error?: unknown };
          if (typeof parsed.error === 'string') error = parsed.error;
        } catch {
          // the summary stands in
        }
        return { ok: false, content: outcome.content, error };
      },
    }),
  ];
}
