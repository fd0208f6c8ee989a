/**
 * FROZEN COPY, for comparison only: turn-only recall's ranking as it was before
 * (recall.ts and recallFrom in session-log.ts, then in the agent folder, at commit 8735f55; now src/sessions/recall.ts): the
 * request's rarest words searched with AND, relaxed by dropping the commonest, so every hit
 * holds the rarest word still in play. `npm run bench -- recall` measures it beside the current
 * ranking on the same labelled set. Not used by hermesd itself.
 */
import { isSafeHit, type RecallHit } from '../../src/sessions/recall.js';
import type { SessionDB } from '../../src/sessions/db.js';

const RECALL_MAX_HITS = 3;
const RECALL_MAX_TERMS = 4;
const RECALL_MAX_TERM_DOCS = 5_000;
const RECALL_CANDIDATES = 12;

const STOPWORDS = new Set(
  (
    'the a an and or but not no nor for to of in on at by with from into onto over under about as is are was were be been being ' +
    'do does did done doing have has had having it its this that these those there here then than so such can could should would ' +
    'will shall may might must i me my we our you your he she they them their what which who whom whose when where why how all any ' +
    'each every some more most other only own same too very just also please make sure get got let use using used run runs want need ' +
    'like now again still one two new file files fix task'
  ).split(' '),
);

function recallTerms(text: string): string[] {
  const words =
    text
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const picked: string[] = [];
  for (const w of words) {
    if (w.length < 3 || STOPWORDS.has(w) || /^\d+$/.test(w) || picked.includes(w)) continue;
    picked.push(w);
  }
  return picked;
}

function recallQuery(terms: readonly string[]): string {
  return terms
    .slice(0, RECALL_MAX_TERMS)
    .map((w) => `"${w.replace(/"/g, '')}"`)
    .join(' ');
}

function recallQueries(rarestFirst: readonly string[]): string[] {
  const words = rarestFirst.slice(0, RECALL_MAX_TERMS);
  const out: string[] = [];
  for (let first = 0; first < words.length; first++) {
    for (let end = words.length; end > first; end--) out.push(recallQuery(words.slice(first, end)));
  }
  return out;
}

export function recallFromBefore(db: SessionDB, repo: string): (text: string, exclude: ReadonlySet<string>) => RecallHit[] {
  return (text, exclude) => {
    const rarestFirst = recallTerms(text)
      .map((t) => ({ t, n: db.termFrequency(t, RECALL_MAX_TERM_DOCS) }))
      .filter((x) => x.n > 0 && x.n <= RECALL_MAX_TERM_DOCS)
      .sort((a, b) => a.n - b.n)
      .map((x) => x.t);
    for (const query of recallQueries(rarestFirst)) {
      const usable = db
        .search(query, { repo, limit: RECALL_CANDIDATES })
        .results.filter((h) => !exclude.has(h.sessionId) && h.snippet.trim() !== '' && isSafeHit(h));
      if (usable.length === 0) continue;
      return usable
        .slice(0, RECALL_MAX_HITS)
        .map((h) => ({ sessionId: h.sessionId, messageId: h.messageId, role: h.role, snippet: h.snippet, createdAt: h.createdAt }));
    }
    return [];
  };
}
