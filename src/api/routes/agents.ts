/**
 * Other agents' hooks over the API (docs/agents.md):
 *   POST /v1/agents/:agent/hook            body: the agent's hook payload, as it wrote it on stdin
 *        → {exitCode, stdout, stderr, agent, event, kind, decision, rule?}: what the hook prints and how it exits
 *        ?format=sh → text/plain for the POSIX sh runner: the exit code on the first line, then what to
 *          print (stderr for exit 2, stdout otherwise); `u` on the first line when the daemon cannot judge
 *          (a bad payload, a broken config), then why: the runner applies agents.onUnavailable.
 *   GET  /v1/agents/transcripts            → {transcripts: [{path, agent, sessionId, offset, lines, stored, skipped, updatedAt}]}
 */
import { errorToWire } from '../../errors/index.js';
import { agentHooksOf } from '../../agents/service.js';
import { sessionsOf } from '../../sessions/service.js';
import type { Route } from '../types.js';

export const agentsRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/agents/:agent/hook',
    handler: async ({ daemon, params, body, query, res }) => {
      if (query.get('format') !== 'sh') {
        const h = await agentHooksOf(daemon).handle(params.agent!, body);
        return { ...h.answer, agent: h.event.agent, event: h.event.event, kind: h.event.kind, decision: h.decision, ...(h.rule ? { rule: h.rule } : {}) };
      }
      let text: string;
      try {
        const { answer } = await agentHooksOf(daemon).handle(params.agent!, body);
        text = `${answer.exitCode}\n${answer.exitCode === 2 ? answer.stderr : answer.stdout}`;
      } catch (err) {
        const { status, wire } = errorToWire(err);
        if (status >= 500) daemon.log.error('agent hook failed', { agent: params.agent, error: String((err as Error)?.stack ?? err) });
        text = `u\n${wire.message}\n`;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(text);
      return undefined;
    },
  },
  {
    method: 'GET',
    path: '/v1/agents/transcripts',
    handler: ({ daemon }) => {
      const rows = sessionsOf(daemon)
        .db.prepare('SELECT path, agent, session_id, offset, lines, stored, skipped, updated_at FROM agent_transcripts WHERE repo = ? ORDER BY updated_at DESC')
        .all(daemon.root) as Array<{ path: string; agent: string; session_id: string; offset: number; lines: number; stored: number; skipped: number; updated_at: string }>;
      return { transcripts: rows.map((r) => ({ path: r.path, agent: r.agent, sessionId: r.session_id, offset: r.offset, lines: r.lines, stored: r.stored, skipped: r.skipped, updatedAt: r.updated_at })) };
    },
  },
];
