/**
 * Other agents' hooks over the API (docs/agents.md):
 *   POST /v1/agents/:agent/hook            body: the agent's hook payload, as it wrote it on stdin
 *        → AgentHookAnswer {exitCode, stdout, stderr, agent, event, kind, decision, rule?}: what the hook prints and how it exits
 *        ?format=sh → text/plain for the POSIX sh runner: the exit code on the first line, then what to
 *          print (stderr for exit 2, stdout otherwise); `u` on the first line when the daemon cannot judge
 *          (a bad payload, a broken config), then why: the runner applies agents.onUnavailable.
 *   GET  /v1/agents/transcripts            → {transcripts: AgentTranscript[]}
 * The payload is each agent's own shape, read by that agent's adapter (src/integrations/): no schema here.
 */
import { listTranscripts } from '../../integrations/ingest.js';
import { errorToWire } from '../../errors/index.js';
import type { AgentHookAnswer, AgentTranscript } from '../../protocol/agents.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/**
 * The answer as the sh runner reads it (here and through the doorbell): `code` is the exit code,
 * or `u` when the daemon cannot judge; `text` is what to print (stderr for 2, stdout for 0, why for u).
 */
export async function shAnswer(services: Services, agent: string, payload: unknown): Promise<{ code: string; text: string }> {
  try {
    const { answer } = await services.agents.handle(agent, payload);
    return { code: String(answer.exitCode), text: answer.exitCode === 2 ? answer.stderr : answer.stdout };
  } catch (err) {
    const { status, wire } = errorToWire(err);
    if (status >= 500) services.daemon.log.error('agent hook failed', { agent, error: String((err as Error)?.stack ?? err) });
    return { code: 'u', text: `${wire.message}\n` };
  }
}

export function agentsRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agents/:agent/hook',
      handler: async ({ params, body, query, res }): Promise<AgentHookAnswer | undefined> => {
        if (query.get('format') !== 'sh') {
          const h = await services.agents.handle(params.agent!, body);
          return { ...h.answer, agent: h.event.agent, event: h.event.event, kind: h.event.kind, decision: h.decision, ...(h.rule ? { rule: h.rule } : {}) };
        }
        const sh = await shAnswer(services, params.agent!, body);
        const text = `${sh.code}\n${sh.text}`;
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
        res.end(text);
        return undefined;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/agents/transcripts',
      handler: (): { transcripts: AgentTranscript[] } => ({ transcripts: listTranscripts(services.sessions, services.daemon.root) }),
    }),
  ];
}
