/**
 * The loop's SessionLog and recall over SessionDB: sessions of this repository, messages
 * written one committed row at a time, continuations as child sessions (parent_session_id)
 * that replay their ancestors' messages and stored prompt.
 */
import { NotFound, UsageError } from '../errors/index.js';
import type { SessionDB } from '../sessions/db.js';
import type { LoggedMessage, SessionLog } from './loop.js';

/** Ancestors replayed by a continuation at most: a chain longer than this is a loop in the data. */
const MAX_LINEAGE = 100;

export function sessionLog(db: SessionDB, repo: string): SessionLog {
  return {
    start: (input) =>
      db.createSession({
        repo,
        source: input.source,
        model: input.model,
        systemPrompt: input.systemPrompt,
        parentSessionId: input.parentSessionId ?? null,
        title: input.title,
      }).id,
    append: (sessionId, m) =>
      db.appendMessage(sessionId, {
        role: m.role,
        content: m.content,
        apiContent: m.apiContent ?? null,
        toolCalls: m.toolCalls ?? null,
        toolName: m.toolName ?? null,
        toolCallId: m.toolCallId ?? null,
      }),
    usage: (sessionId, usage) => db.addUsage(sessionId, usage),
    end: (sessionId, reason) => {
      db.endSession(sessionId, reason);
    },
    promptOf: (sessionId) => {
      const sha = db.getSession(sessionId)?.systemPromptSha256;
      return sha ? db.getPrompt(sha) : undefined;
    },
    history: (sessionId) => {
      const chain: string[] = [];
      let id: string | null = sessionId;
      while (id && chain.length < MAX_LINEAGE && !chain.includes(id)) {
        const s = db.getSession(id);
        if (!s) throw new NotFound(`No session ${id} to continue. List sessions with: hermesd sessions list`);
        if (chain.length === 0 && s.repo !== null && s.repo !== repo) {
          throw new UsageError(`Session ${id} belongs to another repository (${s.repo}); continue it from there.`);
        }
        chain.push(id);
        id = s.parentSessionId;
      }
      chain.reverse();
      const messages: LoggedMessage[] = chain.flatMap((sid) =>
        db.getMessages(sid).map((m) => ({
          role: m.role,
          content: m.content,
          ...(m.apiContent !== undefined ? { apiContent: m.apiContent } : {}),
          ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, function: c.function })) } : {}),
          ...(m.toolName ? { toolName: m.toolName } : {}),
          ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
        })),
      );
      return { sessionIds: chain, messages };
    },
  };
}
