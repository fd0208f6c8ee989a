/**
 * Incremental ingest of an agent's transcript into SessionDB: one hermesd session per
 * transcript file (source `claude-code`, `codex`, `cursor` or `gemini`), read from where the
 * last read stopped. How far a file was read (and, where records are re-written, the key of
 * every record stored) is written in the same transaction as the messages: a crash or a
 * restart loses nothing and stores nothing twice, and two hooks ingesting the same file at
 * once (Cursor runs Claude Code's hooks too) store each record once. Only complete lines are read: the agents write
 * transcripts asynchronously, and a half-written last line waits for the next event.
 * SessionDB redacts secrets from everything it stores.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import type { AgentTranscript, TranscriptStats } from '../protocol/agents.js';
import type { SessionDB } from '../sessions/db.js';
import { SOURCE_OF } from './event.js';
import { type AgentName } from '../protocol/agent-hooks.js';
import { formatOf, parseLines, parseWhole, type ParsedChunk } from './transcripts.js';

/** Bytes read and stored per transaction: a big backlog is stored in steps, each committed. */
export const TRANSCRIPT_CHUNK_BYTES = 4 * 1024 * 1024;
/** A single line longer than this (a huge tool output) is skipped as malformed rather than held in memory. */
export const TRANSCRIPT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** A whole-file transcript (Gemini before 0.39, Cursor's text) larger than this is not read. */
export const TRANSCRIPT_MAX_WHOLE_BYTES = 64 * 1024 * 1024;
/** The first bytes of a file, hashed: a different file at the same path (rotated, rewritten) is read from its start. */
const HEAD_BYTES = 512;
/** Transcripts left behind (an agent ended while the daemon was down) that a session start catches up, newest first. */
export const CATCH_UP_MAX = 20;

export type IngestReport = {
  path: string;
  sessionId: string;
  /** Messages stored by this call. */
  stored: number;
  /** Malformed lines skipped by this call. */
  skipped: number;
  lines: number;
  /** Bytes of the file read so far. */
  offset: number;
};

type Row = {
  path: string;
  agent: string;
  session_id: string;
  agent_session_id: string | null;
  repo: string | null;
  offset: number;
  head: string | null;
  size: number;
  mtime_ms: number;
  lines: number;
  stored: number;
  skipped: number;
};

/** Why hermesd will not read `path` as a transcript, or undefined when it will. */
export function transcriptPathProblem(path: string): string | undefined {
  if (!isAbsolute(path)) return `transcript_path ${path} is not absolute`;
  if (!/\.(jsonl|json|txt)$/.test(path)) return `transcript_path ${path} is not a .jsonl, .json or .txt file`;
  try {
    if (!statSync(path).isFile()) return `transcript_path ${path} is not a regular file`;
  } catch {
    return `transcript_path ${path} does not exist (yet)`;
  }
  return undefined;
}

function headOf(fd: number, len: number): string {
  const n = Math.min(len, HEAD_BYTES);
  const buf = Buffer.alloc(n);
  const got = n > 0 ? readSync(fd, buf, 0, n, 0) : 0;
  return createHash('sha256').update(buf.subarray(0, got)).digest('hex');
}

export function transcriptRow(db: SessionDB, path: string): Row | undefined {
  return db.db.prepare('SELECT * FROM agent_transcripts WHERE path = ?').get(path) as Row | undefined;
}

/** The hermesd session a transcript's messages go to, if it was ever read. */
export function sessionOfTranscript(db: SessionDB, path: string): string | undefined {
  return transcriptRow(db, path)?.session_id;
}

/**
 * How a transcript is kept from being stored twice. Append-only JSONL (Claude Code, Codex,
 * Cursor): by the read position, moved in the transaction that stores the lines before it
 * (a key per record costs ingest about a third of its speed). Gemini re-appends a record
 * whole when it changes, and whole-file formats are read again from the start: by the key
 * of each record, kept in agent_transcript_keys.
 */
function byKeys(agent: AgentName, whole: boolean): boolean {
  return whole || agent === 'gemini';
}

/**
 * Stores what `parsed` holds that is not stored yet, and moves the file's read position to
 * `pos.offset`, in one transaction. Creates the session on the first call for a path.
 * `from`: where this read started (a concurrent reader may have stored past it meanwhile);
 * `reread`: the file was replaced, so its lines are compared with what the session holds.
 */
function store(
  db: SessionDB,
  opts: { path: string; agent: AgentName; repo: string | null; agentSessionId?: string },
  parsed: ParsedChunk,
  pos: { offset: number; head: string; size: number; mtimeMs: number; from: number; keys: boolean; reread: boolean },
): { sessionId: string; stored: number } {
  return db.batch((append) => {
    let row = transcriptRow(db, opts.path);
    if (!row) {
      const first = parsed.items.find((i) => i.message.createdAt)?.message.createdAt;
      const session = db.createSession({
        repo: opts.repo,
        source: SOURCE_OF[opts.agent],
        model: parsed.model ?? null,
        title: parsed.title ?? null,
        ...(first && !Number.isNaN(Date.parse(first)) ? { startedAt: new Date(first).toISOString() } : {}),
      });
      db.db
        .prepare('INSERT INTO agent_transcripts (path, agent, session_id, agent_session_id, repo, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(opts.path, opts.agent, session.id, parsed.agentSessionId ?? opts.agentSessionId ?? null, opts.repo, new Date().toISOString());
      row = transcriptRow(db, opts.path)!;
    }
    const sessionId = row.session_id;
    let items = parsed.items;
    if (pos.keys) {
      const addKey = db.db.prepare('INSERT OR IGNORE INTO agent_transcript_keys (session_id, key) VALUES (?, ?)');
      items = items.filter((item) => addKey.run(sessionId, item.key).changes === 1);
    } else if (pos.reread) {
      const seen = new Set(db.getMessages(sessionId).map((m) => `${m.role}\0${m.content}\0${m.toolCallId ?? ''}`));
      items = items.filter((i) => !seen.has(`${i.message.role}\0${db.storedForm(i.message.content ?? '')}\0${i.message.toolCallId ?? ''}`));
    } else if (row.offset > pos.from) {
      // Another reader stored lines past where this read started: only what lies beyond them.
      items = items.filter((i) => (i.offset ?? 0) >= row!.offset);
    }
    const fresh = items.map((i) => i.message);
    if (fresh.length) append(sessionId, fresh);
    db.db
      .prepare(
        `UPDATE agent_transcripts SET offset = CASE WHEN @reread THEN @offset ELSE max(offset, @offset) END, head = @head, size = @size, mtime_ms = @mtime,
           lines = lines + @lines, stored = stored + @stored, skipped = skipped + @skipped, agent_session_id = coalesce(agent_session_id, @agentSession), updated_at = @now WHERE path = @path`,
      )
      .run({
        reread: pos.reread ? 1 : 0,
        offset: pos.offset,
        head: pos.head,
        size: pos.size,
        mtime: Math.trunc(pos.mtimeMs),
        lines: parsed.lines,
        stored: fresh.length,
        skipped: parsed.skipped,
        agentSession: parsed.agentSessionId ?? opts.agentSessionId ?? null,
        now: new Date().toISOString(),
        path: opts.path,
      });
    if (parsed.title || parsed.model) {
      db.db
        .prepare('UPDATE sessions SET title = coalesce(title, ?), model = coalesce(?, model) WHERE id = ?')
        .run(parsed.title ?? null, parsed.model ?? null, sessionId);
    }
    return { sessionId, stored: fresh.length };
  });
}

/** Reads what is new in one transcript and stores it (see the module comment). Throws when the file cannot be read. */
export function ingestTranscript(db: SessionDB, opts: { path: string; agent: AgentName; repo: string | null; agentSessionId?: string }): IngestReport {
  const problem = transcriptPathProblem(opts.path);
  if (problem) throw new Error(problem);
  const report: IngestReport = { path: opts.path, sessionId: '', stored: 0, skipped: 0, lines: 0, offset: 0 };
  const fd = openSync(opts.path, 'r');
  try {
    const st = fstatSync(fd);
    const row = transcriptRow(db, opts.path);
    const firstBytes = Buffer.alloc(Math.min(st.size, 64));
    readSync(fd, firstBytes, 0, firstBytes.length, 0);
    const format = formatOf(opts.agent, opts.path, firstBytes.toString('utf8'));

    if (format === 'whole') {
      if (row && row.size === st.size && row.mtime_ms === Math.trunc(st.mtimeMs)) return { ...report, sessionId: row.session_id, offset: row.offset };
      if (st.size > TRANSCRIPT_MAX_WHOLE_BYTES)
        throw new Error(`transcript ${opts.path} is ${st.size} bytes, over the ${TRANSCRIPT_MAX_WHOLE_BYTES}-byte limit for a transcript read whole`);
      const buf = Buffer.alloc(st.size);
      const got = readSync(fd, buf, 0, st.size, 0);
      const parsed = parseWhole(opts.agent, buf.subarray(0, got).toString('utf8'));
      const r = store(db, opts, parsed, { offset: got, head: headOf(fd, got), size: st.size, mtimeMs: st.mtimeMs, from: 0, keys: true, reread: false });
      return { ...report, sessionId: r.sessionId, stored: r.stored, skipped: parsed.skipped, lines: parsed.lines, offset: got };
    }

    // Read on from the last position, unless the file is not the one read before.
    let offset = row ? row.offset : 0;
    let reread = false;
    if (row && (st.size < row.offset || (row.head !== null && row.offset > 0 && headOf(fd, Math.min(row.offset, HEAD_BYTES)) !== row.head))) {
      offset = 0;
      reread = true;
    }
    const keys = byKeys(opts.agent, false);
    report.sessionId = row?.session_id ?? '';
    report.offset = offset;
    const toolNames = new Map<string, string>();
    let chunkBytes = TRANSCRIPT_CHUNK_BYTES;
    while (offset < st.size) {
      const want = Math.min(chunkBytes, st.size - offset);
      const buf = Buffer.alloc(want);
      const got = readSync(fd, buf, 0, want, offset);
      if (got <= 0) break;
      const lastNl = buf.lastIndexOf(10, got - 1);
      let take: number;
      let skipLine = false;
      if (offset + got >= st.size && lastNl < got - 1 && completeRecord(buf.subarray(lastNl + 1, got))) take = got;
      else if (lastNl >= 0) take = lastNl + 1;
      else if (offset + got >= st.size)
        break; // a last line still being written: next time
      else if (chunkBytes < TRANSCRIPT_MAX_LINE_BYTES) {
        chunkBytes = Math.min(chunkBytes * 2, TRANSCRIPT_MAX_LINE_BYTES);
        continue;
      } else {
        // One line beyond any sensible size: skip to its end, counted as malformed.
        const nl = nextNewline(fd, offset + got, st.size);
        if (nl < 0) break;
        take = nl + 1 - offset;
        skipLine = true;
      }
      const parsed: ParsedChunk = skipLine ? { items: [], lines: 1, skipped: 1 } : parseLines(opts.agent, buf.subarray(0, take), offset, toolNames);
      const end = offset + take;
      const r = store(db, opts, parsed, {
        offset: end,
        head: headOf(fd, Math.min(end, HEAD_BYTES)),
        size: st.size,
        mtimeMs: st.mtimeMs,
        from: offset,
        keys,
        reread,
      });
      reread = false;
      report.sessionId = r.sessionId;
      report.stored += r.stored;
      report.skipped += parsed.skipped;
      report.lines += parsed.lines;
      offset = end;
      report.offset = end;
      chunkBytes = TRANSCRIPT_CHUNK_BYTES;
    }
    if (!report.sessionId) {
      // Nothing complete to read yet: the session exists from the first event on, so SessionEnd can close it.
      const r = store(
        db,
        opts,
        { items: [], lines: 0, skipped: 0 },
        { offset, head: headOf(fd, Math.min(offset, HEAD_BYTES)), size: st.size, mtimeMs: st.mtimeMs, from: offset, keys, reread: false },
      );
      report.sessionId = r.sessionId;
    }
    return report;
  } finally {
    closeSync(fd);
  }
}

/**
 * A last line without its newline is read when it is a whole JSON object already (a file
 * that ends without one); a line still being written is never one (its braces do not close).
 */
function completeRecord(tail: Buffer): boolean {
  const text = tail.toString('utf8').trim();
  if (!text.startsWith('{') || !text.endsWith('}')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function nextNewline(fd: number, from: number, size: number): number {
  const buf = Buffer.alloc(64 * 1024);
  for (let at = from; at < size; at += buf.length) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    if (got <= 0) return -1;
    const i = buf.subarray(0, got).indexOf(10);
    if (i >= 0) return at + i;
  }
  return -1;
}

/** Transcripts of this repository whose files grew since they were last read (an agent wrote on while no hook ran). */
export function transcriptsBehind(db: SessionDB, repo: string): Array<{ path: string; agent: AgentName }> {
  const rows = db.db
    .prepare('SELECT path, agent, offset, size, mtime_ms FROM agent_transcripts WHERE repo = ? ORDER BY updated_at DESC LIMIT ?')
    .all(repo, CATCH_UP_MAX) as Array<Pick<Row, 'path' | 'agent' | 'offset' | 'size' | 'mtime_ms'>>;
  const out: Array<{ path: string; agent: AgentName }> = [];
  for (const r of rows) {
    try {
      const st = statSync(r.path);
      if (st.size !== r.offset && (st.size !== r.size || Math.trunc(st.mtimeMs) !== r.mtime_ms)) out.push({ path: r.path, agent: r.agent as AgentName });
    } catch {
      // the agent removed it (cleanupPeriodDays): what was read stays stored
    }
  }
  return out;
}

/** Per-transcript counts for status: how many read, stored and skipped as malformed. */
export function transcriptStats(db: SessionDB, repo: string): TranscriptStats {
  const r = db.db
    .prepare('SELECT count(*) AS n, coalesce(sum(stored), 0) AS stored, coalesce(sum(skipped), 0) AS skipped FROM agent_transcripts WHERE repo = ?')
    .get(repo) as { n: number; stored: number; skipped: number };
  return { transcripts: r.n, stored: r.stored, skipped: r.skipped };
}

/** The transcripts of this repository and how far each was read, newest first. */
export function listTranscripts(db: SessionDB, repo: string): AgentTranscript[] {
  const rows = db.db
    .prepare('SELECT path, agent, session_id, offset, lines, stored, skipped, updated_at FROM agent_transcripts WHERE repo = ? ORDER BY updated_at DESC')
    .all(repo) as Array<Pick<Row, 'path' | 'agent' | 'session_id' | 'offset' | 'lines' | 'stored' | 'skipped'> & { updated_at: string }>;
  return rows.map((r) => ({
    path: r.path,
    agent: r.agent,
    sessionId: r.session_id,
    offset: r.offset,
    lines: r.lines,
    stored: r.stored,
    skipped: r.skipped,
    updatedAt: r.updated_at,
  }));
}
