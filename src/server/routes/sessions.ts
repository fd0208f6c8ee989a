/**
 * SessionDB over the local API. Reads default to this daemon's repository (`all=1` for every
 * repository); writes let local clients and hooks record evidence next to the agent's own.
 */
import { z } from 'zod';
import { NotFound, UsageError } from '../../errors/index.js';
import { SEARCH_LIMIT_MAX } from '../../sessions/db.js';
import { newMessageSchema, newSessionSchema, ROLES, type Message } from '../../sessions/records.js';
import { sessionSearchArgsSchema } from '../../sessions/search-tool.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

const LIST_LIMIT_DEFAULT = 20;
const LIST_LIMIT_MAX = 1000;
/** One POST may append at most this many messages: a whole transcript, not a bulk import. */
const APPEND_BATCH_MAX = 1000;

const appendSchema = z.union([newMessageSchema, z.strictObject({ messages: z.array(newMessageSchema).min(1).max(APPEND_BATCH_MAX) })]);

const endSchema = z.object({ reason: z.string().max(200).optional() }).strict();

function flag(query: URLSearchParams, name: string): boolean {
  if (!query.has(name)) return false;
  const v = (query.get(name) ?? '').toLowerCase();
  return v === '' || v === '1' || v === 'true' || v === 'yes';
}

function limitOf(query: URLSearchParams, fallback: number, max: number): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`limit must be a positive integer, not "${raw}".`);
  return Math.min(n, max);
}

export type MessageView = Pick<Message, 'id' | 'role' | 'content' | 'apiContent' | 'toolCalls' | 'toolName' | 'toolCallId' | 'createdAt'>;

function messageView(m: Message): MessageView {
  const { sessionId: _s, ...rest } = m;
  return rest;
}

export function sessionsRoutes(services: Services): Route[] {
  const { root } = services.daemon;
  /** Repository filter of a read: `all=1` → none; `repo=<root>` → that one; else this daemon's. */
  const repoOf = (query: URLSearchParams): string | undefined => (flag(query, 'all') ? undefined : query.get('repo') || root);
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/sessions',
      handler: ({ query }) => {
        const sessions = services.sessions.listSessions({
          repo: repoOf(query),
          source: query.get('source') || undefined,
          limit: limitOf(query, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX),
        });
        return { sessions };
      },
    }),
    // Before /v1/sessions/:id, which would otherwise take "search" for a session id.
    defineRoute({
      method: 'GET',
      path: '/v1/sessions/search',
      handler: ({ query }) => {
        const q = query.get('q') ?? '';
        if (!q.trim()) throw new UsageError('Give the words to search for as q, e.g. /v1/sessions/search?q=failed+test');
        const role = query.get('role') || undefined;
        if (role && !(ROLES as readonly string[]).includes(role)) throw new UsageError(`role must be one of ${ROLES.join(', ')}, not "${role}".`);
        const repo = repoOf(query);
        return services.sessions.search(q, {
          repo,
          all: repo === undefined,
          role,
          source: query.get('source') || undefined,
          limit: limitOf(query, 20, SEARCH_LIMIT_MAX),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sessions/tool',
      body: sessionSearchArgsSchema,
      handler: ({ body, query }) => services.sessions.sessionSearch(body, { repo: root, currentSessionId: query.get('currentSessionId') || undefined }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sessions',
      body: newSessionSchema,
      handler: ({ body: b }) => {
        const session = services.sessions.createSession({
          id: b.id,
          repo: b.repo === undefined ? root : b.repo,
          source: b.source,
          model: b.model,
          systemPrompt: b.systemPrompt,
          parentSessionId: b.parentSessionId,
          title: b.title,
        });
        return { session };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/sessions/:id',
      handler: ({ params, query }) => {
        const db = services.sessions;
        const session = db.getSession(params.id!);
        if (!session) throw new NotFound(`No session ${params.id}. List sessions with: hermesd sessions list --all`);
        const out: Record<string, unknown> = { session, messages: db.getMessages(session.id).map(messageView) };
        if (flag(query, 'prompt') && session.systemPromptSha256) out.systemPrompt = db.getPrompt(session.systemPromptSha256) ?? null;
        return out;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sessions/:id/messages',
      body: appendSchema,
      handler: ({ body: b, params }) => {
        const db = services.sessions;
        if ('messages' in b) return { ids: db.appendMessages(params.id!, b.messages) };
        return { id: db.appendMessage(params.id!, b) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sessions/:id/end',
      body: endSchema,
      handler: ({ body, params }) => ({ session: services.sessions.endSession(params.id!, body.reason ?? 'completed') }),
    }),
  ];
}
