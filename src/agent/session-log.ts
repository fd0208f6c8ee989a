/**
 * The loop's SessionLog and recall over SessionDB: sessions of this repository, messages
 * written one committed row at a time, continuations as child sessions (parent_session_id)
 * that replay their ancestors' messages and stored prompt.
 */
import { NotFound, UsageError } from '../errors/index.js';
import type { SessionDB } from '../sessions/db.js';
import type { LoggedMessage, SessionLog } from './loop.js';
import { holdsInjected } from '../text/fence.js';
import { isSafeHit, recallQueries, recallTerms, RECALL_MAX_HITS, RECALL_MAX_TERM_DOCS, type RecallHit } from './recall.js';

/** Ancestors replayed by a continuation at most: a chain longer than this is a loop in the data. */
const MAX_LINEAGE = 100;
/** Candidates fetched for recall before excluding the current lineage. */
const RECALL_CANDIDATES = 12;

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

/**
 * Evidence for a request from earlier sessions of this repository, best first. Only the
 * request's rarest words are searched (message counts from SessionDB.termFrequency, capped at
 * RECALL_MAX_TERM_DOCS so a common word costs no more than a rare one), so a request made of
 * common words recalls nothing rather than noise, and recall stays fast.
 *
 * Every hit holds the rarest of those words: messages with all of them are asked for first,
 * then with fewer (the commonest dropped first), and only a query that finds nothing usable is
 * relaxed — a word as rare as the subject cannot pull in unrelated messages by itself. Hits of
 * the asking lineage and hits that fail the threat scan are dropped before the best are
 * taken, so an unsafe hit lets the next one in instead of shrinking recall.
 */
export function recallFrom(db: SessionDB, repo: string): (text: string, exclude: ReadonlySet<string>) => RecallHit[] {
  return (text, exclude) => {
    const rarestFirst = recallTerms(text)
      .map((t) => ({ t, n: db.termFrequency(t, RECALL_MAX_TERM_DOCS) }))
      .filter((x) => x.n > 0 && x.n <= RECALL_MAX_TERM_DOCS)
      .sort((a, b) => a.n - b.n)
      .map((x) => x.t);
    for (const query of recallQueries(rarestFirst)) {
      const usable = db
        .search(query, { repo, limit: RECALL_CANDIDATES })
        // A message holding injected blocks (stored before transcripts were stored without them) would hand hermesd's own words back.
        .results.filter((h) => !exclude.has(h.sessionId) && h.snippet.trim() !== '' && isSafeHit(h) && !holdsInjected(db.getMessage(h.messageId)?.content ?? ''));
      if (usable.length === 0) continue;
      return usable
        .slice(0, RECALL_MAX_HITS)
        .map((h) => ({ sessionId: h.sessionId, messageId: h.messageId, role: h.role, snippet: h.snippet, createdAt: h.createdAt }));
    }
    return [];
  };
}
