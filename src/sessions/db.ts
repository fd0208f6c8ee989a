/**
 * SessionDB: every session of every repository, in one SQLite file (`$HERMES_HOME/state.db`).
 *
 * Several daemons (one per work tree) write the same file at once, so every write is one
 * `BEGIN IMMEDIATE` transaction: the write lock is taken up front, where SQLite's busy
 * handler can wait for it, instead of on a read-to-write upgrade, which fails at once with
 * SQLITE_BUSY. Whatever still comes back busy is retried after a jittered pause.
 *
 * A method that writes returns only after COMMIT. In WAL mode a commit is a write() into the
 * -wal file, and the bytes are then in the kernel's page cache: a process killed with
 * SIGKILL loses nothing it acknowledged. With `durability: 'full'` (the default) the WAL is
 * also fsynced on every commit, so an acknowledged write survives power loss too.
 */
import { randomBytes } from 'node:crypto';
import { sha256 } from '../text/hash.js';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { NotFound, UsageError } from '../errors/index.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { excerpt, phraseQuery, termPattern, toFtsQuery, WORD_PARTS } from './query.js';
import { redactForStorage } from '../security/prefilter.js';
import { stripAnsi } from '../text/ansi.js';
import {
  ROLES,
  type Message,
  type NewMessage,
  type NewSession,
  type Role,
  type SearchHit,
  type SearchOptions,
  type SearchResult,
  type SearchStrategy,
  type Session,
  type ToolCall,
} from './records.js';
import { sessionSearch, type SessionSearchContext } from './search-tool.js';

/** What removes known secret values from a text (src/security/secret-values.ts). */
export type ValueRedactor = { redact(text: string): { text: string } };

/** How long SQLite itself waits for another writer before reporting SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;
/** Extra attempts after SQLITE_BUSY, each after a random pause, so colliding writers spread out. */
export const BUSY_RETRIES = 6;
const BUSY_BACKOFF_BASE_MS = 10;
/**
 * Up to this many matches, a query is ranked by bm25 over all of them (a cost per match).
 * Beyond it, ranking everything costs far more for nearly no relevance (a
 * term in most rows has almost no IDF), so only the newest RECENT_CANDIDATES are ranked.
 */
export const FULL_RANK_MAX_MATCHES = 20_000;
export const RECENT_CANDIDATES = 2_000;
/**
 * A filtered search (repository, role, source) of a very common term looks at the newest
 * this-many matches first and ranks those that pass the filters. Collecting RECENT_CANDIDATES
 * that pass a 1-in-20 filter would mean joining 40,000 matches to messages and sessions
 * (most of such a search's time); one window of 10,000 fills a page for any filter that keeps more
 * than 1 match in 500. When it does not, the window grows ×4 until the page is full or the
 * matches run out, so a small repository still finds its messages, only more slowly.
 */
export const RECENT_FILTER_WINDOW = 10_000;
const RECENT_FILTER_GROWTH = 4;
export const SEARCH_LIMIT_MAX = 200;
/**
 * Page cache per connection, in KiB (SQLite's default is 2 MiB). FTS5 segment merges rewrite
 * large parts of the index; with the default cache a big batch spills them to the WAL
 * mid-transaction and ingest runs ~30% slower. Memory is only taken as pages are used, but
 * it is not given back: glibc keeps what SQLite frees in the daemon's heap (neither
 * `PRAGMA shrink_memory` nor closing the database lowered an idle daemon's RSS), so the cap
 * is what a daemon keeps after searching a large log. Over a million messages 8 MiB ingests as
 * fast as 32 did, and searches are nearly as fast (docs/benchmarks.md#sessions), for 24 MiB less.
 */
export const CACHE_KIB = 8 * 1024;

/** The shapes of sessions and messages are records.ts'; SessionDB's callers import them from here too. */
export { ROLES };
export type { Message, NewMessage, NewSession, SearchHit, SearchOptions, SearchResult, SearchStrategy, Session, ToolCall } from './records.js';

export type DbOptions = {
  /** 'full' fsyncs the WAL on every commit; 'normal' survives a process crash but not power loss. */
  durability?: 'full' | 'normal';
  /** Overrides FULL_RANK_MAX_MATCHES / RECENT_CANDIDATES / RECENT_FILTER_WINDOW (tests use small numbers). */
  fullRankMaxMatches?: number;
  recentCandidates?: number;
  recentFilterWindow?: number;
};

type Row = Record<string, unknown>;

const isBusy = (err: unknown) => typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** `20261129T221500-ab12cd`: sorts by start time, unique enough for one user's sessions. */
export function newSessionId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

function toSession(r: Row): Session {
  return {
    id: r.id as string,
    repo: (r.repo as string | null) ?? null,
    source: r.source as string,
    model: (r.model as string | null) ?? null,
    systemPromptSha256: (r.system_prompt_sha256 as string | null) ?? null,
    parentSessionId: (r.parent_session_id as string | null) ?? null,
    title: (r.title as string | null) ?? null,
    startedAt: r.started_at as string,
    endedAt: (r.ended_at as string | null) ?? null,
    endReason: (r.end_reason as string | null) ?? null,
    messageCount: r.message_count as number,
    toolCallCount: r.tool_call_count as number,
    inputTokens: r.input_tokens as number,
    outputTokens: r.output_tokens as number,
  };
}

function parseToolCalls(json: unknown): ToolCall[] | undefined {
  if (typeof json !== 'string' || !json) return undefined;
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) && v.length ? (v as ToolCall[]) : undefined;
  } catch {
    return undefined;
  }
}

function toMessage(r: Row): Message {
  const m: Message = {
    id: r.id as number,
    sessionId: r.session_id as string,
    role: r.role as Role,
    content: r.content as string,
    createdAt: r.created_at as string,
  };
  if (r.api_content != null) m.apiContent = r.api_content as string;
  const calls = parseToolCalls(r.tool_calls);
  if (calls) m.toolCalls = calls;
  if (r.tool_name != null) m.toolName = r.tool_name as string;
  if (r.tool_call_id != null) m.toolCallId = r.tool_call_id as string;
  return m;
}

/**
 * The searchable text of tool calls (`messages.tool_args`): each call's function name and its
 * `arguments` string, calls joined by spaces; null for no calls. The name is there so that
 * "when did we run terminal" finds the calls, not only their results. The v3 migration's SQL
 * backfill (TOOL_TEXT_SQL in schema.ts) computes the same for older rows.
 */
export function toolArgsText(calls: readonly ToolCall[] | null | undefined): string | null {
  if (!calls || calls.length === 0) return null;
  return calls
    .map((c) => {
      if (typeof c !== 'object' || c === null) return '';
      const fn = c.function as { name?: unknown; arguments?: unknown } | undefined;
      const name = typeof fn?.name === 'string' ? fn.name : (c as { name?: unknown }).name;
      const args = fn?.arguments ?? (c as { arguments?: unknown }).arguments;
      const argText = args == null ? '' : typeof args === 'string' ? args : JSON.stringify(args);
      return [typeof name === 'string' ? name : '', argText].filter((p) => p !== '').join(' ');
    })
    .join(' ');
}

/** Makes sure the file exists with mode 0600 before SQLite creates it with the umask's. */
function preparePrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
}

export class SessionDB {
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly run: Database.Transaction<(fn: () => unknown) => unknown>;
  private insertMessageStmt: Database.Statement;
  private readonly fullRankMax: number;
  private readonly recentCandidates: number;
  private readonly recentFilterWindow: number;

  constructor(
    readonly path: string,
    opts: DbOptions = {},
  ) {
    this.fullRankMax = opts.fullRankMaxMatches ?? FULL_RANK_MAX_MATCHES;
    this.recentCandidates = opts.recentCandidates ?? RECENT_CANDIDATES;
    this.recentFilterWindow = opts.recentFilterWindow ?? RECENT_FILTER_WINDOW;
    if (path !== ':memory:') preparePrivateFile(path);
    this.db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.retryBusy(() => this.db.pragma('journal_mode = WAL'));
      this.db.pragma(`synchronous = ${opts.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
      this.db.pragma('foreign_keys = ON');
      this.db.pragma(`cache_size = -${CACHE_KIB}`);
      this.run = this.db.transaction((fn: () => unknown) => fn());
      this.migrate();
      for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
      this.insertMessageStmt = this.db.prepare(
        'INSERT INTO messages (session_id, role, content, api_content, tool_calls, tool_args, tool_name, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private migrate(): void {
    const current = () => this.db.pragma('user_version', { simple: true }) as number;
    if (current() === SCHEMA_VERSION) return;
    this.write(() => {
      const from = current();
      if (from > SCHEMA_VERSION) {
        throw new UsageError(`${this.path} has schema version ${from}, newer than this hermesd understands (${SCHEMA_VERSION}). Upgrade hermesd.`);
      }
      for (let v = from; v < SCHEMA_VERSION; v++) this.db.exec(MIGRATIONS[v]!);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    });
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private retryBusy<T>(fn: () => T): T {
    for (let attempt = 0; ; attempt++) {
      try {
        return fn();
      } catch (err) {
        if (!isBusy(err) || attempt >= BUSY_RETRIES || this.db.inTransaction) throw err;
        sleepSync(BUSY_BACKOFF_BASE_MS * 2 ** attempt * (0.5 + Math.random()));
      }
    }
  }

  /**
   * Runs `fn` in one BEGIN IMMEDIATE transaction (a savepoint when already inside one) and
   * returns after COMMIT. Batch writes through this: one commit for many messages.
   */
  write<T>(fn: () => T): T {
    if (this.db.inTransaction) return this.run(fn) as T;
    return this.retryBusy(() => this.run.immediate(fn) as T);
  }

  /** Merges the WAL into the database without waiting for readers (cheap; called periodically). */
  checkpoint(): { busy: number; log: number; checkpointed: number } {
    const r = this.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return r[0] ?? { busy: 0, log: 0, checkpointed: 0 };
  }

  /** `PRAGMA integrity_check` plus FTS5's own structure check of both indexes; 'ok' when all pass. */
  integrityCheck(): string {
    const tables = ['messages_fts', 'messages_trigram'];
    // Both checks trust the segment list FTS5 cached in this connection; a query (one token, a
    // plain term to either index) re-reads it when another connection changed the index (a
    // `rebuild` run in sqlite3), so segments that connection removed are not reported as corruption.
    for (const table of tables) this.db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH 'zzq' LIMIT 1`).get();
    const problems = (this.db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).filter((r) => r !== 'ok');
    for (const table of tables) {
      try {
        this.db.prepare(`INSERT INTO ${table}(${table}) VALUES ('integrity-check')`).run();
      } catch (err) {
        problems.push(`${table}: ${(err as Error).message}`);
      }
    }
    return problems.length ? problems.join('\n') : 'ok';
  }

  // ---- sessions -------------------------------------------------------------------------

  createSession(input: NewSession): Session {
    const id = input.id ?? newSessionId();
    const startedAt = input.startedAt ?? new Date().toISOString();
    let promptSha: string | null = null;
    return this.write(() => {
      if (input.systemPrompt !== undefined) {
        promptSha = sha256(input.systemPrompt);
        this.stmt('INSERT OR IGNORE INTO prompts (sha256, text, created_at) VALUES (?, ?, ?)').run(promptSha, input.systemPrompt, startedAt);
      }
      if (input.parentSessionId && !this.stmt('SELECT 1 FROM sessions WHERE id = ?').get(input.parentSessionId)) {
        throw new NotFound(`Parent session ${input.parentSessionId} does not exist.`);
      }
      try {
        this.stmt(
          'INSERT INTO sessions (id, repo, source, model, system_prompt_sha256, parent_session_id, title, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(id, input.repo, input.source, input.model ?? null, promptSha, input.parentSessionId ?? null, this.titleOf(input.title), startedAt);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new UsageError(`Session ${id} already exists.`);
        throw err;
      }
      return this.getSession(id)!;
    });
  }

  /** Sets title / model; ends the session when `endedAt` or `endReason` is given. */
  updateSession(id: string, patch: { title?: string | null; model?: string | null; endedAt?: string; endReason?: string | null }): Session {
    return this.write(() => {
      const s = this.stmt(
        `UPDATE sessions SET title = CASE WHEN @setTitle THEN @title ELSE title END, model = CASE WHEN @setModel THEN @model ELSE model END,
           ended_at = coalesce(@endedAt, ended_at), end_reason = CASE WHEN @setReason THEN @reason ELSE end_reason END WHERE id = @id`,
      ).run({
        setTitle: patch.title !== undefined ? 1 : 0,
        title: this.titleOf(patch.title),
        setModel: patch.model !== undefined ? 1 : 0,
        model: patch.model ?? null,
        endedAt: patch.endedAt ?? null,
        setReason: patch.endReason !== undefined ? 1 : 0,
        reason: patch.endReason ?? null,
        id,
      });
      if (s.changes === 0) throw new NotFound(`No session ${id}.`);
      return this.getSession(id)!;
    });
  }

  /** Adds token usage reported by the model for one call. */
  addUsage(id: string, usage: { inputTokens?: number; outputTokens?: number }): void {
    this.write(() => {
      const s = this.stmt('UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE id = ?').run(
        Math.max(0, Math.trunc(usage.inputTokens ?? 0)),
        Math.max(0, Math.trunc(usage.outputTokens ?? 0)),
        id,
      );
      if (s.changes === 0) throw new NotFound(`No session ${id}.`);
    });
  }

  endSession(id: string, reason = 'completed', endedAt = new Date().toISOString()): Session {
    return this.updateSession(id, { endedAt, endReason: reason });
  }

  getSession(id: string): Session | undefined {
    const r = this.stmt('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
    return r ? toSession(r) : undefined;
  }

  /** The stored text of a system prompt, by the hash sessions refer to it with. */
  getPrompt(sha: string): string | undefined {
    return (this.stmt('SELECT text FROM prompts WHERE sha256 = ?').get(sha) as { text: string } | undefined)?.text;
  }

  /** Newest first. */
  listSessions(opts: { repo?: string | null; source?: string; limit?: number } = {}): Session[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (opts.repo !== undefined) {
      where.push(opts.repo === null ? 'repo IS NULL' : 'repo = ?');
      if (opts.repo !== null) args.push(opts.repo);
    }
    if (opts.source) {
      where.push('source = ?');
      args.push(opts.source);
    }
    const limit = Math.min(Math.max(1, Math.trunc(opts.limit ?? 20)), 1000);
    const sql = `SELECT * FROM sessions ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY started_at DESC, id DESC LIMIT ?`;
    return (this.stmt(sql).all(...args, limit) as Row[]).map(toSession);
  }

  /** The root of a session's lineage (its oldest ancestor through parent_session_id). */
  lineageRoot(id: string): string {
    const r = this.stmt(
      `WITH RECURSIVE up(id, parent, depth) AS (
         SELECT id, parent_session_id, 0 FROM sessions WHERE id = ?
         UNION ALL SELECT s.id, s.parent_session_id, up.depth + 1 FROM sessions s JOIN up ON s.id = up.parent WHERE up.depth < 1000)
       SELECT id FROM up ORDER BY depth DESC LIMIT 1`,
    ).get(id) as { id: string } | undefined;
    return r?.id ?? id;
  }

  // ---- messages -------------------------------------------------------------------------

  /**
   * hermesd guard: the known secret values of the daemon that owns this connection
   * (its secret files, their history, its environment), removed before anything is stored.
   */
  private valueRedactor: ValueRedactor | undefined;

  /** Sets the value-based redaction every stored text goes through (before the shape-based one): the repository's SecretValues. */
  setValueRedactor(redactor: ValueRedactor | undefined): void {
    this.valueRedactor = redactor;
  }

  /** A session's title as stored: redacted as a message is (a title is often a commit's subject or a prompt's first line). */
  private titleOf(title: string | null | undefined): string | null {
    return title == null ? null : this.redactStored(title);
  }

  /** `text` as a message stores it (secrets redacted): what a caller compares with stored content. */
  storedForm(text: string): string {
    return this.redactStored(text);
  }

  private redactStored(text: string): string {
    return redactForStorage(this.valueRedactor ? this.valueRedactor.redact(text).text : text);
  }

  private insertMessage(sessionId: string, m: NewMessage): number {
    if (!(ROLES as readonly string[]).includes(m.role)) throw new UsageError(`Unknown message role "${m.role}"; expected one of ${ROLES.join(', ')}.`);
    // hermesd guard: secret-shaped values are redacted before anything is persisted.
    const content = this.redactStored(m.content ?? '');
    // The common case, the model saw exactly `content`, needs no second redaction pass.
    const apiRaw = m.apiContent == null || m.apiContent === m.content ? null : this.redactStored(m.apiContent);
    const api = apiRaw === null || apiRaw === content ? null : apiRaw;
    const calls = m.toolCalls && m.toolCalls.length ? this.redactStored(JSON.stringify(m.toolCalls)) : null;
    // Redacted as the plain text that gets indexed, not derived from the redacted JSON, whose
    // escaping (\" inside arguments) the secret patterns see differently.
    const argsText = toolArgsText(m.toolCalls);
    const args = argsText === null ? null : this.redactStored(argsText);
    try {
      return Number(
        this.insertMessageStmt.run(
          sessionId,
          m.role,
          content,
          api,
          calls,
          args,
          m.toolName ?? null,
          m.toolCallId ?? null,
          m.createdAt ?? new Date().toISOString(),
        ).lastInsertRowid,
      );
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw new NotFound(`No session ${sessionId}.`);
      throw err;
    }
  }

  /** Appends one message; returns its id once the write is committed. */
  appendMessage(sessionId: string, message: NewMessage): number {
    return this.write(() => this.insertMessage(sessionId, message));
  }

  /**
   * A whole session at once — created, its messages, ended — in one transaction: one commit
   * (one fsync) for the record, which is whole or absent (a git hook's evidence).
   */
  recordSession(input: NewSession, messages: NewMessage[], endReason = 'completed'): Session {
    return this.write(() => {
      const session = this.createSession(input);
      for (const m of messages) this.insertMessage(session.id, m);
      return this.endSession(session.id, endReason);
    });
  }

  /** Appends several messages in one transaction (one commit); returns their ids in order. */
  appendMessages(sessionId: string, messages: NewMessage[]): number[] {
    return this.write(() => messages.map((m) => this.insertMessage(sessionId, m)));
  }

  /**
   * Runs `fn` in one write transaction, with `append` to store messages in it directly:
   * bookkeeping that must commit with the messages (an ingest's read position) without
   * appendMessages' nested savepoint, which journals every page a big batch changes (a
   * quarter of the time of a 15,000-message insert).
   */
  batch<T>(fn: (append: (sessionId: string, messages: NewMessage[]) => number[]) => T): T {
    return this.write(() => fn((sessionId, messages) => messages.map((m) => this.insertMessage(sessionId, m))));
  }

  getMessage(id: number): Message | undefined {
    const r = this.stmt('SELECT * FROM messages WHERE id = ?').get(id) as Row | undefined;
    return r ? toMessage(r) : undefined;
  }

  /**
   * A session's messages in order. `afterId`/`beforeId` bound by message id; `last: n` takes
   * the last n (still returned in order).
   */
  getMessages(sessionId: string, opts: { afterId?: number; beforeId?: number; limit?: number; last?: number } = {}): Message[] {
    const after = opts.afterId ?? -1;
    const before = opts.beforeId ?? Number.MAX_SAFE_INTEGER;
    if (opts.last !== undefined) {
      const rows = this.stmt('SELECT * FROM messages WHERE session_id = ? AND id > ? AND id < ? ORDER BY id DESC LIMIT ?').all(
        sessionId,
        after,
        before,
        opts.last,
      ) as Row[];
      return rows.reverse().map(toMessage);
    }
    const limit = opts.limit ?? -1;
    return (
      this.stmt('SELECT * FROM messages WHERE session_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?').all(sessionId, after, before, limit) as Row[]
    ).map(toMessage);
  }

  // ---- search -------------------------------------------------------------------------

  /** The `session_search` tool: discover / read / scroll / browse (see search-tool.ts). */
  sessionSearch(args: unknown, ctx: SessionSearchContext = {}): Record<string, unknown> {
    return sessionSearch(this, args, ctx);
  }

  /**
   * Ranked full-text search. The query text is sanitised (any input is safe); a term the
   * word index cannot split (CJK) or a substring with no word match goes to the trigram index.
   */
  search(text: string, opts: SearchOptions = {}): SearchResult {
    const q = toFtsQuery(text);
    const limit = Math.min(Math.max(1, Math.trunc(opts.limit ?? 20)), SEARCH_LIMIT_MAX);
    let strategy: SearchStrategy = 'none';
    let ranked: Array<{ id: number; rank: number }> = [];
    let wordMatches = 0;
    if (q.match && !q.cjk) {
      const r = this.rank('messages_fts', q.match, opts, limit, text);
      ranked = r.rows;
      strategy = r.strategy;
      wordMatches = r.matches;
    }
    // Substrings only when no message has the words at all: if the filters excluded every
    // word match, a substring search would find the same messages and be excluded again.
    if (wordMatches === 0 && q.substrings.length) {
      ranked = this.substringSearch(q.substrings, opts, limit);
      strategy = ranked.length ? 'trigram' : 'none';
    }
    return { results: this.hydrateHits(ranked, termPattern(q.terms)), strategy };
  }

  private filterSql(opts: SearchOptions, rowid = 'f.rowid'): { join: string; where: string; args: unknown[] } {
    const where: string[] = [];
    const args: unknown[] = [];
    let needSession = false;
    if (!opts.all && opts.repo !== undefined) {
      needSession = true;
      where.push(opts.repo === null ? 's.repo IS NULL' : 's.repo = ?');
      if (opts.repo !== null) args.push(opts.repo);
    }
    if (opts.source) {
      needSession = true;
      where.push('s.source = ?');
      args.push(opts.source);
    }
    if (opts.excludeSources?.length) {
      needSession = true;
      where.push(`s.source NOT IN (${opts.excludeSources.map(() => '?').join(', ')})`);
      args.push(...opts.excludeSources);
    }
    if (opts.role) {
      where.push('m.role = ?');
      args.push(opts.role);
    }
    if (where.length === 0) return { join: '', where: '', args };
    // CROSS JOIN fixes the loop order: the FTS match drives, each hit is looked up by key. Left
    // to itself the planner may walk a repository's sessions and probe the index per message.
    const join = ` CROSS JOIN messages m ON m.id = ${rowid}` + (needSession ? ' CROSS JOIN sessions s ON s.id = m.session_id' : '');
    return { join, where: ' AND ' + where.join(' AND '), args };
  }

  /**
   * The best `limit` message ids for `match` in `table`. First a probe counts matches up to
   * FULL_RANK_MAX_MATCHES + 1 (cheap: it stops there); a query under that is ranked by bm25
   * over every match, a bigger one by bm25 over its newest RECENT_CANDIDATES matches.
   */
  private rank(
    table: 'messages_fts',
    match: string,
    opts: SearchOptions,
    limit: number,
    fallbackText: string,
  ): { rows: Array<{ id: number; rank: number }>; strategy: SearchStrategy; matches: number } {
    const { join, where, args } = this.filterSql(opts);
    const attempt = (expr: string) => {
      const probe = this.stmt(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH ? LIMIT ${this.fullRankMax + 1})`).get(expr) as {
        n: number;
      };
      const matches = probe.n;
      if (matches === 0) return { rows: [], strategy: 'none' as const, matches };
      if (matches <= this.fullRankMax) {
        const sql = `SELECT f.rowid AS id, f.rank AS rank FROM ${table} f${join} WHERE ${table} MATCH ?${where} ORDER BY f.rank LIMIT ?`;
        return { rows: this.stmt(sql).all(expr, ...args, limit) as Array<{ id: number; rank: number }>, strategy: 'ranked' as const, matches };
      }
      if (!where) {
        const sql = `SELECT id, rank FROM (SELECT f.rowid AS id, f.rank AS rank FROM ${table} f WHERE ${table} MATCH ? ORDER BY f.rowid DESC LIMIT ${this.recentCandidates}) ORDER BY rank LIMIT ?`;
        return { rows: this.stmt(sql).all(expr, limit) as Array<{ id: number; rank: number }>, strategy: 'recent' as const, matches };
      }
      return { rows: this.rankRecentFiltered(table, expr, opts, limit), strategy: 'recent' as const, matches };
    };
    try {
      return attempt(match);
    } catch (err) {
      // The sanitiser should make this unreachable; if FTS5 still refuses the query, search
      // for the words as one phrase rather than surfacing a syntax error.
      const phrase = fallbackText ? phraseQuery(fallbackText) : '';
      if (phrase && phrase !== match) {
        try {
          return attempt(phrase);
        } catch {
          // fall through
        }
      }
      if (isBusy(err)) throw err;
      return { rows: [], strategy: 'none', matches: 0 };
    }
  }

  /**
   * The `recent` strategy under filters: bm25 over the filtered matches among the newest
   * `window` matches (at most RECENT_CANDIDATES of them), the window growing until `limit`
   * hits are found or the matches run out (see RECENT_FILTER_WINDOW).
   *
   * Two steps per window, because FTS5 reads the whole doclist of a term when given a lower
   * rowid bound (slow for a word in most rows of a large log), while walking it newest first
   * from an upper bound is cheap: (1) walk `window` matches below `hi`, join them to messages
   * and sessions, keep the ids that pass; (2) walk again from `hi` with bm25, scoring only
   * those ids (`+f.rowid` keeps the IN test out of FTS5, which would restart the query per
   * id), and stop at the last of them. bm25 scores from different windows are comparable
   * (the same query over the same index), so the windows' hits are merged by rank.
   */
  private rankRecentFiltered(table: 'messages_fts', expr: string, opts: SearchOptions, limit: number): Array<{ id: number; rank: number }> {
    const { join, where, args } = this.filterSql(opts, 'w.id');
    const edge = this.stmt(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`).pluck();
    const passing = this.stmt(
      `SELECT m.id FROM (SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) w${join} WHERE 1${where} ORDER BY m.id DESC LIMIT ?`,
    ).pluck();
    const ranked = this.stmt(
      `SELECT id, rank FROM (SELECT f.rowid AS id, f.rank AS rank FROM ${table} f WHERE ${table} MATCH ? AND f.rowid < ? AND +f.rowid IN (SELECT value FROM json_each(?))
         ORDER BY f.rowid DESC LIMIT ?) ORDER BY rank LIMIT ?`,
    );
    const hits: Array<{ id: number; rank: number }> = [];
    let hi = Number.MAX_SAFE_INTEGER;
    let window = this.recentFilterWindow;
    let candidates = this.recentCandidates;
    while (hits.length < limit && candidates > 0) {
      const ids = passing.all(expr, hi, window, ...args, candidates) as number[];
      if (ids.length) hits.push(...(ranked.all(expr, hi, JSON.stringify(ids), ids.length, limit) as Array<{ id: number; rank: number }>));
      candidates -= ids.length;
      // The window's oldest match; none means the matches ran out within this window.
      const lo = edge.get(expr, hi, window - 1) as number | undefined;
      if (lo === undefined) break;
      hi = lo;
      window *= RECENT_FILTER_GROWTH;
    }
    return hits.sort((a, b) => a.rank - b.rank).slice(0, limit);
  }

  /**
   * How many messages contain `term` (a word, or words as one phrase, split as the index splits
   * them), counted up to `cap`: a more frequent term returns `cap + 1`. Costs about a
   * small cost per counted match, so a small cap keeps it cheap for any term; the fts5vocab
   * table gives exact counts but walks the term's whole doclist (slow for a word in most
   * messages of a large log). 0 for text with no word in it.
   */
  termFrequency(term: string, cap: number = FULL_RANK_MAX_MATCHES, opts: { prefix?: boolean } = {}): number {
    const words = String(term ?? '')
      .normalize('NFC')
      .match(WORD_PARTS);
    if (!words) return 0;
    const max = Math.max(0, Math.trunc(cap));
    // `prefix`: words starting with the term. FTS5 reads every doclist the prefix covers before the
    // first row, so this costs as much as those words are common, whatever the cap.
    const expr = `"${words.join(' ')}"${opts.prefix ? '*' : ''}`;
    return (
      (this.stmt('SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)')
        .pluck()
        .get(expr, max + 1) as number) ?? 0
    );
  }

  /** About how many messages the log holds (the newest id: exact until messages are deleted), in O(log n). */
  messageCountEstimate(): number {
    return (this.stmt('SELECT max(id) FROM messages').pluck().get() as number | null) ?? 0;
  }

  /**
   * Messages containing every substring, newest first: the trigram index narrows the rows,
   * LIKE confirms them. There is no meaningful relevance score for a substring, so recency.
   */
  private substringSearch(substrings: string[], opts: SearchOptions, limit: number): Array<{ id: number; rank: number }> {
    const { join, where, args } = this.filterSql(opts);
    const likes = substrings.map(() => 'f.content LIKE ?').join(' AND ');
    const sql = `SELECT f.rowid AS id, 0 AS rank FROM messages_trigram f${join} WHERE ${likes}${where} ORDER BY f.rowid DESC LIMIT ?`;
    try {
      return this.stmt(sql).all(...substrings.map((s) => `%${s}%`), ...args, limit) as Array<{ id: number; rank: number }>;
    } catch (err) {
      if (isBusy(err)) throw err;
      return [];
    }
  }

  private hydrateHits(ranked: Array<{ id: number; rank: number }>, pattern: RegExp | undefined): SearchHit[] {
    if (ranked.length === 0) return [];
    // One cached statement per list length (at most SEARCH_LIMIT_MAX of them), not a prepare per search.
    const rows = this.stmt(
      `SELECT m.id, m.session_id, m.role, m.content, m.tool_name, m.tool_calls, m.created_at, s.repo, s.source
         FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id IN (${ranked.map(() => '?').join(',')})`,
    ).all(...ranked.map((r) => r.id)) as Row[];
    const byId = new Map(rows.map((r) => [r.id as number, r]));
    const hits: SearchHit[] = [];
    for (const { id, rank } of ranked) {
      const r = byId.get(id);
      if (!r) continue;
      const content = r.content as string;
      let text = content;
      if (pattern && !pattern.test(content)) {
        const args = (parseToolCalls(r.tool_calls) ?? []).map((c) => `${c.function?.name ?? ''}(${c.function?.arguments ?? ''})`).join(' ');
        if (args && pattern.test(args)) text = args;
      }
      const hit: SearchHit = {
        sessionId: r.session_id as string,
        messageId: id,
        role: r.role as Role,
        snippet: excerpt(stripAnsi(text), pattern),
        repo: (r.repo as string | null) ?? null,
        source: r.source as string,
        createdAt: r.created_at as string,
        rank,
      };
      if (r.tool_name != null) hit.toolName = r.tool_name as string;
      hits.push(hit);
    }
    return hits;
  }
}
