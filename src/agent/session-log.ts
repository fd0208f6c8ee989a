/**
 * The loop's SessionLog and recall over SessionDB: sessions of this repository, messages
 * written one committed row at a time, continuations as child sessions (parent_session_id)
 * that replay their ancestors' messages and stored prompt.
 */
import { NotFound, UsageError } from '../errors/index.js';
import type { SessionDB } from '../sessions/db.js';
import type { LoggedMessage, SessionLog } from './loop.js';
import { holdsInjected } from '../text/fence.js';
import {
  isSafeHit,
  rankRecall,
  recallQuery,
  recallTerm,
  recallTerms,
  termMatcher,
  termWeight,
  RECALL_CANDIDATES,
  RECALL_MAX_HITS,
  RECALL_MAX_TERM_DOCS,
  RECALL_MAX_TERMS,
  RECALL_MIN_SHARE_OF_BEST,
  type RecallHit,
  type RecallTerm,
} from './recall.js';

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

/**
 * About how many messages a recall term matches, capped past RECALL_MAX_TERM_DOCS. Counted as
 * exact words, the word and its stem, where it can be: FTS5 reads every doclist a prefix covers
 * before it yields a row, so a prefix count of a common word costs ~15 ms at a million messages
 * (a common word is dropped on its exact count, and its prefix never searched). Only a word
 * that occurs in neither exact form ("crash" where the log says "crashed") is counted as the
 * prefix it will be searched as.
 */
function documentCount(db: SessionDB, t: RecallTerm): number {
  const exact = db.termFrequency(t.word, RECALL_MAX_TERM_DOCS) + (t.stem === t.word ? 0 : db.termFrequency(t.stem, RECALL_MAX_TERM_DOCS));
  return exact > 0 || !t.prefix ? exact : db.termFrequency(t.stem, RECALL_MAX_TERM_DOCS, { prefix: true });
}

/**
 * Evidence for a request from earlier sessions of this repository, best first, at most
 * RECALL_MAX_HITS. The request's informative words (stopwords dropped; words found in more than
 * RECALL_MAX_TERM_DOCS messages left out, so a common word costs nothing and points at nothing;
 * the RECALL_MAX_TERMS rarest when there are more) are searched together, any of them matching;
 * the best RECALL_CANDIDATES by bm25 are scored against the request as a whole and chosen to
 * cover it (rankRecall): no single word, however rare, decides what comes back. Hits of the
 * asking lineage are left out, and a hit that fails the threat scan is passed over for the next
 * one, so an unsafe hit never shrinks recall.
 */
export function recallFrom(db: SessionDB, repo: string): (text: string, exclude: ReadonlySet<string>) => RecallHit[] {
  return (text, exclude) => {
    const terms = recallTerms(text)
      .map(recallTerm)
      .map((t) => ({ t, df: documentCount(db, t) }))
      .filter((x) => x.df > 0 && x.df <= RECALL_MAX_TERM_DOCS)
      .sort((a, b) => a.df - b.df)
      .slice(0, RECALL_MAX_TERMS);
    if (terms.length === 0) return [];
    const n = db.messageCountEstimate();
    const weights = terms.map((x) => termWeight(x.df, n));
    const total = weights.reduce((a, b) => a + b, 0);
    const matchers = terms.map((x) => termMatcher(x.t));
    const candidates = db
      .search(recallQuery(terms.map((x) => x.t)), { repo, limit: RECALL_CANDIDATES })
      .results.filter((h) => !exclude.has(h.sessionId) && h.snippet.trim() !== '')
      .flatMap((h) => {
        const content = (db.getMessage(h.messageId)?.content ?? h.snippet).normalize('NFC');
        // A message holding injected blocks (stored before transcripts were stored without them) would hand hermesd's own words back.
        if (holdsInjected(content)) return [];
        const held = matchers.flatMap((m, i) => (m.test(content) ? [i] : []));
        return [{ hit: h, sessionId: h.sessionId, bm25: -h.rank, weight: held.reduce((sum, i) => sum + weights[i]!, 0) / total, terms: held }];
      });
    return rankRecall(candidates, { max: RECALL_MAX_HITS, minShare: RECALL_MIN_SHARE_OF_BEST, shown: isSafeHit }).map((h) => ({
      sessionId: h.sessionId,
      messageId: h.messageId,
      role: h.role,
      snippet: h.snippet,
      createdAt: h.createdAt,
    }));
  };
}
