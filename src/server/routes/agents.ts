/**
 * Other agents' hooks over the API (docs/agents.md):
 *   POST /v1/agents/:agent/hook            body: the agent's hook payload, as it wrote it on stdin
 *        → AgentHookAnswer {exitCode, stdout, stderr, agent, event, kind, decision, rule?}: what the hook prints and how it exits
 *   GET  /v1/agents/transcripts            → {transcripts: AgentTranscript[]}
 * The payload is each agent's own shape, read by that agent's adapter (src/other-agents/): no schema here.
 */
import { listTranscripts } from '../../other-agents/ingest.js';
import type { AgentHookAnswer, AgentTranscript } from '../../protocol/agents.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

export function agentsRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agents/:agent/hook',
      handler: async ({ params, body }): Promise<AgentHookAnswer> => {
        const h = await services.agents.handle(params.agent!, body, services.config.forJudging());
        return { ...h.answer, agent: h.event.agent, event: h.event.event, kind: h.event.kind, decision: h.decision, ...(h.rule ? { rule: h.rule } : {}) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/agents/transcripts',
      handler: (): { transcripts: AgentTranscript[] } => ({ transcripts: listTranscripts(services.sessions, services.daemon.root) }),
    }),
  ];
}
