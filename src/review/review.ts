/**
 * Post-task review (the seed's next chapter: background review after delivery): the evidence
 * of one finished session is read — bounded in characters, threat-scanned like any text that
 * enters a prompt — and turned into candidate facts and procedures, each placed by the same
 * path as `remember` (duplicates, budgets, scan, enforceability) and recorded as a pending
 * proposal. Nothing is written to an owner: the user accepts or rejects.
 *
 * With a model, one structured request (bounded in tokens and time) proposes up to
 * REVIEW_MAX_CANDIDATES candidates. Without one, the rule-based classifier reads what the
 * user said in the session and keeps the sentences it places with a durable owner.
 */
import { z } from 'zod';
import type { Message, Session } from '../sessions/records.js';
import type { SessionDB } from '../sessions/db.js';
import { scanText } from '../security/scan.js';
import { jsonInstruction, jsonSchemaOf, parseStrict } from '../placement/classify-by-model.js';
import { reasonsSchema } from '../protocol/owners.js';
import { placeSentence, type PlacementAnswer, type PlacementDeps } from '../placement/place.js';
import { classifyByRules } from '../placement/classify-by-rules.js';

/** Candidates one review may propose: a handful the user can judge in a glance, not a dump. */
export const REVIEW_MAX_CANDIDATES = 5;
/** Characters of one tool result shown to the reviewer: what happened, not the whole output. */
const TOOL_RESULT_CHARS = 400;

export type ReviewLimits = { maxInputChars: number; maxOutputTokens: number; timeoutMs: number; minToolCalls: number };

export type ReviewReport = {
  sessionId: string;
  /** Why nothing was reviewed (too little evidence, no session). */
  skipped?: string;
  classifier?: 'model' | 'rules';
  candidates: number;
  /** Proposals recorded by this review (new ones; a pending or rejected twin is not counted). */
  proposals: string[];
  notes: string[];
};

const candidateSchema = z.strictObject({
  owner: z.enum(['authority', 'user', 'repo-memory', 'skill']),
  text: z
    .string()
    .describe(
      'user / repo-memory: one short declarative fact; authority: the rule as one line; skill: the procedure as one sentence ("To X: step, then step")',
    ),
  reasons: reasonsSchema,
});
const reviewSchema = z.strictObject({ candidates: z.array(candidateSchema).max(REVIEW_MAX_CANDIDATES) });

const REVIEW_SYSTEM = [
  'You review one finished session of a coding agent and propose what is worth keeping for future sessions. Propose little: most sessions hold nothing durable.',
  'Candidates, each with the owner it belongs to:',
  '- user: a stable preference the user showed or stated that holds in every project (declarative: "User prefers …").',
  '- repo-memory: a fact about this repository\'s environment the agent had to discover ("tests need `make db` first").',
  '- authority: a rule for every contributor of this repository the user stated.',
  '- skill: a reusable procedure of several steps that worked after errors or corrections.',
  'Never propose one-off task state, guesses, secrets, or anything the session does not show. Answer each of the four questions (scope, lifetime, type, readTiming) for each candidate.',
].join('\n');

/** One message as evidence: role, text, tool calls by name and arguments, tool results cut short. */
function evidenceLine(m: Message): string {
  const text = m.role === 'tool' ? `${m.content.slice(0, TOOL_RESULT_CHARS)}${m.content.length > TOOL_RESULT_CHARS ? ' …' : ''}` : m.content;
  const calls = (m.toolCalls ?? []).map((c) => `→ ${c.function.name}(${c.function.arguments.slice(0, 200)})`).join(' ');
  const who = m.role === 'tool' ? `tool ${m.toolName ?? ''}`.trim() : m.role;
  const line = `[${who}] ${text}${calls ? ` ${calls}` : ''}`.trim();
  // Evidence enters a prompt: text that fails the threat scan is named, not shown.
  const hits = scanText(line, 'recall');
  return hits.length ? `[${who}] [removed: matched the threat scan (${[...new Set(hits.map((h) => h.id))].join(', ')})]` : line;
}

/** The session as the reviewer reads it: the first request and as much of the end as fits in `maxChars`. */
export function evidenceOf(messages: readonly Message[], maxChars: number): string {
  const lines = messages.filter((m) => m.role !== 'system').map(evidenceLine);
  const full = lines.join('\n');
  if (full.length <= maxChars) return full;
  const head = lines[0] ?? '';
  const tail: string[] = [];
  let used = head.length + 40;
  for (let i = lines.length - 1; i > 0; i--) {
    if (used + lines[i]!.length + 1 > maxChars) break;
    tail.unshift(lines[i]!);
    used += lines[i]!.length + 1;
  }
  return `${head.slice(0, maxChars)}\n[… earlier messages left out …]\n${tail.join('\n')}`;
}

/** Sentences the user said in the session (the rule-based review reads only these). */
function userSentences(messages: readonly Message[]): string[] {
  return messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content.split(/(?<=[.!?])\s+|\n+/))
    .map((s) => s.trim())
    .filter((s) => s.length >= 8 && s.length <= 400);
}

export type ReviewDeps = PlacementDeps & { sessions: SessionDB };

/** Reviews one finished session; never writes to an owner, only records proposals. */
export async function reviewSession(deps: ReviewDeps, sessionId: string, limits: ReviewLimits, signal?: AbortSignal): Promise<ReviewReport> {
  const report: ReviewReport = { sessionId, candidates: 0, proposals: [], notes: [] };
  const session: Session | undefined = deps.sessions.getSession(sessionId);
  if (!session) return { ...report, skipped: `no session ${sessionId}` };
  if (session.toolCallCount < limits.minToolCalls) {
    return { ...report, skipped: `${session.toolCallCount} tool call(s), fewer than review.minToolCalls (${limits.minToolCalls}): too little evidence` };
  }
  const messages = deps.sessions.getMessages(sessionId);
  const answers: PlacementAnswer[] = [];
  const deadline = AbortSignal.any([AbortSignal.timeout(limits.timeoutMs), ...(signal ? [signal] : [])]);
  const place = (sentence: string, decided?: Parameters<typeof placeSentence>[2]['decided']) =>
    placeSentence(deps, sentence, { source: 'review', sessionId, signal: deadline, ...(decided ? { decided } : {}) });

  if (deps.model) {
    report.classifier = 'model';
    const schema = jsonSchemaOf(reviewSchema);
    const answer = await deps.model.complete({
      system: `${REVIEW_SYSTEM}\n\n${jsonInstruction(schema)}`,
      user: `The session (${session.source}, ${messages.length} messages):\n${evidenceOf(messages, limits.maxInputChars)}`,
      name: 'review',
      schema,
      maxTokens: limits.maxOutputTokens,
      signal: deadline,
    });
    const { candidates } = parseStrict(answer.text, reviewSchema);
    report.candidates = candidates.length;
    for (const c of candidates) {
      if (deadline.aborted) break;
      answers.push(
        await place(c.text, {
          owner: c.owner,
          reasons: c.reasons,
          classifier: 'model',
          ...(c.owner === 'skill' || c.owner === 'authority' ? {} : { entry: c.text }),
        }),
      );
    }
  } else {
    report.classifier = 'rules';
    for (const sentence of userSentences(messages)) {
      if (report.candidates >= REVIEW_MAX_CANDIDATES || deadline.aborted) break;
      const r = classifyByRules(sentence);
      if (r.owner === 'none') continue;
      report.candidates++;
      answers.push(await place(sentence, { owner: r.owner, reasons: r.reasons, classifier: 'rules' }));
    }
  }
  for (const a of answers) {
    if (a.proposal?.created) report.proposals.push(a.proposal.id);
    else if (a.notes.length) report.notes.push(`${a.owner}: ${a.notes[a.notes.length - 1]}`);
  }
  return report;
}
