/**
 * The `session_search` tool (DESIGN.md §6): evidence from earlier sessions, read straight
 * from stored messages — no model summarises anything. Four modes, chosen by the arguments:
 *
 *   discover  {query}                               ranked hits, one per session lineage, each with
 *                                                   the messages around it and the session's bookends
 *   read      {session_id}                          a session's messages (long ones: first 20 + last 10)
 *   scroll    {session_id?, around_message_id, window}  the messages around one message
 *   browse    {}                                    recent sessions
 *
 * Results are plain JSON values; the agent serialises them as the tool result string.
 */
import { z } from 'zod';
import { NotFound, UsageError } from '../errors/index.js';
import { stripAnsi } from '../text/ansi.js';
import type { Message, SearchOptions, SearchResult, Session } from './records.js';

/** The reads session_search makes (SessionDB's). */
export type SessionReader = {
  getSession(id: string): Session | undefined;
  listSessions(opts?: { repo?: string | null; source?: string; limit?: number }): Session[];
  lineageRoot(id: string): string;
  getMessage(id: number): Message | undefined;
  getMessages(sessionId: string, opts?: { afterId?: number; beforeId?: number; limit?: number; last?: number }): Message[];
  search(text: string, opts?: SearchOptions): SearchResult;
};

/** Hits of discover and sessions of browse returned at most (and by default): each discover hit carries up to 17 messages. */
export const SESSION_SEARCH_LIMIT_MAX = 20;
export const DISCOVER_LIMIT_DEFAULT = 5;
export const BROWSE_LIMIT_DEFAULT = 10;
/** Messages on each side of the anchor in scroll mode: 25 + 1 + 25 capped messages is a page, not a dump. */
export const SCROLL_WINDOW_DEFAULT = 5;
export const SCROLL_WINDOW_MAX = 25;

/**
 * The arguments of session_search, declared once for its two callers. Over HTTP (POST
 * /v1/sessions/tool) a value past a bound is refused, naming the bound: a program sent it. A
 * model calling the tool gets the same fields and bounds in its JSON schema, but a value past a
 * maximum is used at the maximum and the result says so (`clamped`): a refusal would cost it a
 * turn to learn what the schema already said, as Hermes Agent decided.
 */
function argsSchema(over: 'refuse' | 'clamp') {
  const atMost = (n: number, min: number) =>
    over === 'refuse' ? z.coerce.number().int().min(min).max(n) : z.coerce.number().int().min(min).meta({ maximum: n });
  const clamped = over === 'clamp' ? '; a larger value is used as the maximum' : '';
  return z
    .object({
      query: z.string().max(2000).optional().describe('words to search for (discover mode)'),
      session_id: z.string().min(1).max(200).optional().describe('a session to read, or to scroll in with around_message_id'),
      around_message_id: z.coerce.number().int().positive().optional().describe('a message id from an earlier result: show the messages around it'),
      window: atMost(SCROLL_WINDOW_MAX, 0)
        .optional()
        .describe(`messages to show on each side of around_message_id (default ${SCROLL_WINDOW_DEFAULT}, at most ${SCROLL_WINDOW_MAX}${clamped})`),
      limit: atMost(SESSION_SEARCH_LIMIT_MAX, 1)
        .optional()
        .describe(
          `hits (discover, default ${DISCOVER_LIMIT_DEFAULT}) or sessions (browse, default ${BROWSE_LIMIT_DEFAULT}) to return, at most ${SESSION_SEARCH_LIMIT_MAX}${clamped}`,
        ),
    })
    .strict();
}

/** The API's parser: a value past a bound is a 400 naming it. */
export const sessionSearchArgsSchema = argsSchema('refuse');
/** The agent tool's parameters: the same fields and bounds, a value past a maximum clamped. */
export const sessionSearchToolArgsSchema = argsSchema('clamp');

export type SessionSearchArgs = z.infer<typeof sessionSearchArgsSchema>;

export type SessionSearchContext = {
  /** The work tree the caller works in; discover and browse look here first. */
  repo?: string | null;
  /** The session asking; its own lineage is left out of discover results (it matches itself). */
  currentSessionId?: string;
  /** A model is calling: a `limit` or `window` past its maximum is used at the maximum and the result says so. */
  clamp?: boolean;
};

/** What a clamped call asked for and what it got. */
type Clamped = Partial<Record<'limit' | 'window', { asked: number; used: number }>>;

/** Messages on each side of a discover hit. */
export const DISCOVER_WINDOW = 5;
/** Messages from the start and from the end of a hit's session, for what it was about and how it ended. */
export const BOOKEND_MESSAGES = 3;
/**
 * Sources whose sessions machinery writes, not a person: hook runs and their fix tasks,
 * scheduled jobs. Their evidence repeats the same words on every run, so bm25 ranks it above
 * the one conversation a person had about the subject; discover lists people's sessions first.
 */
export const AUTOMATED_SOURCES: readonly string[] = ['hook', 'cron'];
/** Content of a message in discover/scroll/browse is cut here: a tool result is prompt space. */
export const MESSAGE_CHARS_MAX = 800;
/** In read mode a message may be longer, but not unbounded (a 1 MB tool output). */
export const READ_MESSAGE_CHARS_MAX = 4_000;
/** A session longer than this is read as its first READ_HEAD and last READ_TAIL messages. */
export const READ_TRIM_OVER = 30;
export const READ_HEAD = 20;
export const READ_TAIL = 10;

export type ToolMessage = {
  id: number;
  role: string;
  content: string;
  toolName?: string;
  toolCalls?: Array<{ name: string; arguments: string }>;
  createdAt: string;
  /** The message the search matched. */
  hit?: true;
};

export type SessionSummary = {
  id: string;
  repo: string | null;
  source: string;
  title: string | null;
  parentSessionId: string | null;
  startedAt: string;
  endedAt: string | null;
  endReason: string | null;
  messageCount: number;
};

/** Stored text as it leaves the tool: terminal escapes stripped, then cut at `max`. */
function cap(raw: string, max: number): string {
  const text = stripAnsi(raw);
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

function view(m: Message, max: number, hitId?: number): ToolMessage {
  const out: ToolMessage = { id: m.id, role: m.role, content: cap(m.content, max), createdAt: m.createdAt };
  if (m.toolName) out.toolName = m.toolName;
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ name: c.function?.name ?? '', arguments: cap(String(c.function?.arguments ?? ''), max) }));
  if (hitId === m.id) out.hit = true;
  return out;
}

function summary(s: Session): SessionSummary {
  return {
    id: s.id,
    repo: s.repo,
    source: s.source,
    title: s.title === null ? null : stripAnsi(s.title),
    parentSessionId: s.parentSessionId,
    startedAt: s.startedAt,
    endedAt: s.endedAt,
    endReason: s.endReason,
    messageCount: s.messageCount,
  };
}

export function sessionSearch(db: SessionReader, rawArgs: unknown, ctx: SessionSearchContext = {}): Record<string, unknown> {
  const parsed = (ctx.clamp ? sessionSearchToolArgsSchema : sessionSearchArgsSchema).safeParse(rawArgs ?? {});
  if (!parsed.success) throw new UsageError(`session_search: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`);
  const args = { ...parsed.data };
  const clamped: Clamped = {};
  for (const [key, max] of [
    ['limit', SESSION_SEARCH_LIMIT_MAX],
    ['window', SCROLL_WINDOW_MAX],
  ] as const) {
    const asked = args[key];
    if (asked !== undefined && asked > max) {
      clamped[key] = { asked, used: max };
      args[key] = max;
    }
  }
  const result = run(db, args, ctx);
  const said = Object.entries(clamped).map(([k, c]) => `${k} ${c.asked} is over its maximum of ${c.used}; ${c.used} was used`);
  if (said.length === 0) return result;
  const note = `${said.join('; ')}.`;
  return { ...result, clamped, note: typeof result.note === 'string' ? `${note} ${result.note}` : note };
}

function run(db: SessionReader, args: SessionSearchArgs, ctx: SessionSearchContext): Record<string, unknown> {
  const query = args.query?.trim();
  if (args.around_message_id !== undefined) return scroll(db, args);
  if (args.session_id) return read(db, args.session_id);
  if (query) return discover(db, query, args.limit, ctx);
  return browse(db, args.limit, ctx);
}

/** Lineage roots, looked up once per session id (a continuation counts as its first session). */
function lineageRoots(db: SessionReader): (id: string) => string {
  const roots = new Map<string, string>();
  return (id) => {
    let r = roots.get(id);
    if (r === undefined) {
      r = db.lineageRoot(id);
      roots.set(id, r);
    }
    return r;
  };
}

function discover(db: SessionReader, query: string, limitArg: number | undefined, ctx: SessionSearchContext): Record<string, unknown> {
  const limit = limitArg ?? DISCOVER_LIMIT_DEFAULT;
  const rootOf = lineageRoots(db);
  const skipRoot = ctx.currentSessionId ? rootOf(ctx.currentSessionId) : undefined;
  // Over-fetch: several hits usually come from one session or one lineage.
  const fetch = limit * 8;
  const find = (scopeOpts: { repo?: string | null; all: boolean }) => {
    // People's sessions first, then what hooks and jobs recorded: demoted, never left out.
    const people = db.search(query, { ...scopeOpts, excludeSources: AUTOMATED_SOURCES, limit: fetch }).results.filter((h) => rootOf(h.sessionId) !== skipRoot);
    if (new Set(people.map((h) => rootOf(h.sessionId))).size >= limit) return people;
    const machines = db
      .search(query, { ...scopeOpts, limit: fetch })
      .results.filter((h) => AUTOMATED_SOURCES.includes(h.source) && rootOf(h.sessionId) !== skipRoot);
    return [...people, ...machines];
  };
  let scope: 'repo' | 'all' = ctx.repo !== undefined ? 'repo' : 'all';
  let hits = find({ repo: ctx.repo, all: scope === 'all' });
  if (hits.length === 0 && scope === 'repo') {
    scope = 'all';
    hits = find({ all: true });
  }
  const seen = new Set<string>();
  const results: Array<Record<string, unknown>> = [];
  for (const hit of hits) {
    const root = rootOf(hit.sessionId);
    if (seen.has(root)) continue;
    seen.add(root);
    const session = db.getSession(hit.sessionId);
    if (!session) continue;
    const before = db.getMessages(session.id, { beforeId: hit.messageId, last: DISCOVER_WINDOW });
    const self = db.getMessage(hit.messageId);
    const after = db.getMessages(session.id, { afterId: hit.messageId, limit: DISCOVER_WINDOW });
    const window = [...before, ...(self ? [self] : []), ...after];
    const first = window[0]!.id;
    const last = window[window.length - 1]!.id;
    const start = db.getMessages(session.id, { beforeId: first, limit: BOOKEND_MESSAGES });
    const end = db.getMessages(session.id, { afterId: last, last: BOOKEND_MESSAGES });
    results.push({
      session: summary(session),
      lineageRootId: root,
      match: { messageId: hit.messageId, role: hit.role, snippet: hit.snippet },
      start: start.map((m) => view(m, MESSAGE_CHARS_MAX)),
      window: window.map((m) => view(m, MESSAGE_CHARS_MAX, hit.messageId)),
      end: end.map((m) => view(m, MESSAGE_CHARS_MAX)),
    });
    if (results.length >= limit) break;
  }
  return {
    mode: 'discover',
    query,
    scope,
    count: results.length,
    results,
    ...(results.length === 0 ? { note: 'No stored message matches. Try fewer or different words, or browse recent sessions with no arguments.' } : {}),
  };
}

function read(db: SessionReader, sessionId: string): Record<string, unknown> {
  const session = db.getSession(sessionId);
  if (!session) throw new NotFound(`session_search: no session ${sessionId}.`);
  const total = session.messageCount;
  if (total <= READ_TRIM_OVER) {
    return { mode: 'read', session: summary(session), messages: db.getMessages(sessionId).map((m) => view(m, READ_MESSAGE_CHARS_MAX)) };
  }
  const head = db.getMessages(sessionId, { limit: READ_HEAD });
  const tail = db.getMessages(sessionId, { afterId: head[head.length - 1]!.id, last: READ_TAIL });
  const omitted = total - head.length - tail.length;
  return {
    mode: 'read',
    session: summary(session),
    messages: head.map((m) => view(m, READ_MESSAGE_CHARS_MAX)),
    omitted: {
      count: omitted,
      afterMessageId: head[head.length - 1]!.id,
      beforeMessageId: tail[0]?.id,
      hint: 'Pass session_id with around_message_id (and window) to read the omitted messages.',
    },
    tail: tail.map((m) => view(m, READ_MESSAGE_CHARS_MAX)),
  };
}

function scroll(db: SessionReader, args: SessionSearchArgs): Record<string, unknown> {
  const anchor = db.getMessage(args.around_message_id!);
  if (!anchor || (args.session_id && anchor.sessionId !== args.session_id)) {
    throw new NotFound(`session_search: no message ${args.around_message_id}${args.session_id ? ` in session ${args.session_id}` : ''}.`);
  }
  const session = db.getSession(anchor.sessionId)!;
  const w = args.window ?? SCROLL_WINDOW_DEFAULT;
  const before = db.getMessages(session.id, { beforeId: anchor.id, last: w });
  const after = db.getMessages(session.id, { afterId: anchor.id, limit: w });
  const messages = [...before, anchor, ...after];
  return {
    mode: 'scroll',
    session: summary(session),
    aroundMessageId: anchor.id,
    window: w,
    messages: messages.map((m) => view(m, MESSAGE_CHARS_MAX, anchor.id)),
    moreBefore: before.length === w && db.getMessages(session.id, { beforeId: before[0]?.id ?? anchor.id, last: 1 }).length > 0,
    moreAfter: after.length === w && db.getMessages(session.id, { afterId: after[after.length - 1]?.id ?? anchor.id, limit: 1 }).length > 0,
  };
}

function browse(db: SessionReader, limitArg: number | undefined, ctx: SessionSearchContext): Record<string, unknown> {
  const limit = limitArg ?? BROWSE_LIMIT_DEFAULT;
  const rootOf = lineageRoots(db);
  const skipRoot = ctx.currentSessionId ? rootOf(ctx.currentSessionId) : undefined;
  // The asking session and its lineage are what the model already has in context: not "recent".
  const list = (repo: string | null | undefined) => {
    const out: Session[] = [];
    for (let fetch = limit + 5; ; fetch *= 4) {
      const page = db.listSessions({ repo, limit: fetch });
      out.length = 0;
      for (const s of page) if (rootOf(s.id) !== skipRoot && out.length < limit) out.push(s);
      if (out.length >= limit || page.length < fetch || fetch >= 1000) return out;
    }
  };
  let scope: 'repo' | 'all' = ctx.repo !== undefined ? 'repo' : 'all';
  let sessions = list(scope === 'repo' ? ctx.repo : undefined);
  if (sessions.length === 0 && scope === 'repo') {
    scope = 'all';
    sessions = list(undefined);
  }
  return {
    mode: 'browse',
    scope,
    sessions: sessions.map((s) => {
      const firstUser = db.getMessages(s.id, { limit: 5 }).find((m) => m.role === 'user');
      return { ...summary(s), preview: firstUser ? cap(firstUser.content.replace(/\s+/g, ' ').trim(), 200) : null };
    }),
  };
}
