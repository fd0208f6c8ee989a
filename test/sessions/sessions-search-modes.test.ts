import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionDB, type NewMessage } from '../../src/sessions/db.js';
import { BOOKEND_MESSAGES, DISCOVER_WINDOW, MESSAGE_CHARS_MAX, READ_HEAD, READ_TAIL } from '../../src/sessions/search-tool.js';
import { SCHEMA_VERSION } from '../../src/sessions/schema.js';

const REPO_A = '/work/a';
const REPO_B = '/work/b';

/** `n` filler messages, with `special` at index `at`. */
function transcript(n: number, at?: number, special?: NewMessage): NewMessage[] {
  return Array.from({ length: n }, (_, i) =>
    i === at && special ? special : { role: i % 2 ? 'assistant' : 'user', content: `filler message number ${i} about routine work` },
  ) as NewMessage[];
}

describe('SessionDB and session_search', () => {
  let home: string;
  let db: SessionDB;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'hd-sessions-'));
    db = new SessionDB(join(home, 'state.db'));
  });
  afterEach(() => {
    db.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('creates a private WAL database at the current schema version', () => {
    const s = db.createSession({ repo: REPO_A, source: 'cli' });
    db.appendMessage(s.id, { role: 'user', content: 'hello' });
    expect(statSync(db.path).mode & 0o777).toBe(0o600);
    expect(existsSync(db.path + '-wal')).toBe(true);
    expect(statSync(db.path + '-wal').mode & 0o777).toBe(0o600);
    expect(db.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.id).toMatch(/^\d{8}T\d{6}-[0-9a-f]{6}$/);
    // Reopening an up-to-date database changes nothing.
    db.close();
    db = new SessionDB(join(home, 'state.db'));
    expect(db.getSession(s.id)?.messageCount).toBe(1);
    expect(db.integrityCheck()).toBe('ok');
  });

  it('stores the api_content sidecar, tool calls, counts and the prompt once by hash', () => {
    const a = db.createSession({ repo: REPO_A, source: 'cli', systemPrompt: 'You are hermes.', model: 'm1' });
    const b = db.createSession({ repo: REPO_A, source: 'cli', systemPrompt: 'You are hermes.' });
    expect(a.systemPromptSha256).toBe(b.systemPromptSha256);
    expect(db.db.prepare('SELECT count(*) AS n FROM prompts').get()).toEqual({ n: 1 });
    expect(db.getPrompt(a.systemPromptSha256!)).toBe('You are hermes.');
    const [u, same, call, out] = db.appendMessages(a.id, [
      { role: 'user', content: 'fix the failing test', apiContent: 'fix the failing test\n\n[recalled] npm test uses vitest' },
      { role: 'user', content: 'again', apiContent: 'again' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":"npx vitest run flaky-widget"}' } }],
      },
      { role: 'tool', content: 'FAIL flaky-widget', toolName: 'terminal', toolCallId: 'c1' },
    ]);
    expect(db.getMessage(u!)?.apiContent).toBe('fix the failing test\n\n[recalled] npm test uses vitest');
    expect(db.getMessage(same!)?.apiContent).toBeUndefined();
    expect(db.getMessage(call!)?.toolCalls?.[0]?.function.name).toBe('terminal');
    expect(db.getMessage(out!)).toMatchObject({ toolName: 'terminal', toolCallId: 'c1' });
    db.addUsage(a.id, { inputTokens: 100, outputTokens: 20 });
    const ended = db.endSession(a.id, 'completed');
    expect(ended).toMatchObject({ messageCount: 4, toolCallCount: 1, inputTokens: 100, outputTokens: 20, endReason: 'completed' });
    expect(ended.endedAt).toEqual(expect.any(String));
    // Tool-call arguments are searchable; the sidecar is not indexed.
    expect(db.search('vitest run', { all: true }).results.map((h) => h.messageId)).toEqual([call]);
    expect(db.search('recalled', { all: true }).results).toEqual([]);
    expect(() => db.appendMessage('no-such-session', { role: 'user', content: 'x' })).toThrow(/No session/);
    expect(() => db.appendMessage(a.id, { role: 'robot' as never, content: 'x' })).toThrow(/Unknown message role/);
  });

  it('search filters by repository (default), role and source, and --all widens', () => {
    const a = db.createSession({ repo: REPO_A, source: 'cli' });
    const b = db.createSession({ repo: REPO_B, source: 'hook' });
    db.appendMessages(a.id, [
      { role: 'user', content: 'deploy failed with timeout' },
      { role: 'tool', content: 'timeout after 30s', toolName: 'terminal' },
    ]);
    db.appendMessage(b.id, { role: 'user', content: 'timeout in the other repository' });
    expect(db.search('timeout', { repo: REPO_A }).results.map((h) => h.sessionId)).toEqual([a.id, a.id]);
    expect(db.search('timeout', { repo: REPO_B }).results.map((h) => h.sessionId)).toEqual([b.id]);
    expect(db.search('timeout', { repo: REPO_A, all: true }).results).toHaveLength(3);
    expect(db.search('timeout', { repo: REPO_A, role: 'tool' }).results.map((h) => h.role)).toEqual(['tool']);
    expect(db.search('timeout', { all: true, source: 'hook' }).results.map((h) => h.sessionId)).toEqual([b.id]);
    expect(db.listSessions({ repo: REPO_A }).map((s) => s.id)).toEqual([a.id]);
    expect(
      db
        .listSessions({})
        .map((s) => s.id)
        .sort(),
    ).toEqual([a.id, b.id].sort());
    expect(db.listSessions({ source: 'hook' }).map((s) => s.id)).toEqual([b.id]);
  });

  it('discover: one result per lineage, a ±5 window around the hit, 3 bookends each side, capped contents', () => {
    const root = db.createSession({ repo: REPO_A, source: 'cli', title: 'root' });
    const child = db.createSession({ repo: REPO_A, source: 'cli', parentSessionId: root.id, title: 'continued' });
    const other = db.createSession({ repo: REPO_A, source: 'cli', title: 'other' });
    const big = 'x'.repeat(MESSAGE_CHARS_MAX * 3);
    db.appendMessages(root.id, transcript(40, 20, { role: 'tool', content: `npm ERR! zebrafish module missing ${big}`, toolName: 'terminal' }));
    db.appendMessages(child.id, transcript(10, 4, { role: 'user', content: 'zebrafish again, same failure' }));
    db.appendMessages(other.id, transcript(6, 2, { role: 'assistant', content: 'the zebrafish fix was a missing dependency' }));

    const r = db.sessionSearch({ query: 'zebrafish' }, { repo: REPO_A }) as any;
    expect(r.mode).toBe('discover');
    const roots = r.results.map((x: any) => x.lineageRootId);
    expect(new Set(roots).size).toBe(roots.length);
    expect(roots.sort()).toEqual([root.id, other.id].sort());

    const inRoot = r.results.find((x: any) => x.lineageRootId === root.id);
    const hitSession = inRoot.session.id;
    const hitMsgs = db.getMessages(hitSession);
    const hitIndex = hitMsgs.findIndex((m) => m.id === inRoot.match.messageId);
    const expectWindow = hitMsgs.slice(Math.max(0, hitIndex - DISCOVER_WINDOW), hitIndex + DISCOVER_WINDOW + 1).map((m) => m.id);
    expect(inRoot.window.map((m: any) => m.id)).toEqual(expectWindow);
    expect(inRoot.window.filter((m: any) => m.hit).map((m: any) => m.id)).toEqual([inRoot.match.messageId]);
    if (hitSession === root.id) {
      expect(inRoot.start.map((m: any) => m.id)).toEqual(hitMsgs.slice(0, BOOKEND_MESSAGES).map((m) => m.id));
      expect(inRoot.end.map((m: any) => m.id)).toEqual(hitMsgs.slice(-BOOKEND_MESSAGES).map((m) => m.id));
      const hitView = inRoot.window.find((m: any) => m.hit);
      expect(hitView.content.length).toBeLessThan(MESSAGE_CHARS_MAX + 50);
      expect(hitView.content).toMatch(/more characters\]$/);
    }
    // A small session: the window covers it, bookends do not repeat messages.
    const small = r.results.find((x: any) => x.lineageRootId === other.id);
    expect(small.window.map((m: any) => m.id)).toEqual(db.getMessages(other.id).map((m) => m.id));
    expect(small.start).toEqual([]);
    expect(small.end).toEqual([]);

    // The asking session's own lineage is left out.
    const mine = db.sessionSearch({ query: 'zebrafish' }, { repo: REPO_A, currentSessionId: child.id }) as any;
    expect(mine.results.map((x: any) => x.lineageRootId)).toEqual([other.id]);
    // limit
    expect((db.sessionSearch({ query: 'zebrafish', limit: 1 }, { repo: REPO_A }) as any).results).toHaveLength(1);
  });

  it('discover: falls back to every repository when this one has no match, and says so', () => {
    const b = db.createSession({ repo: REPO_B, source: 'cli' });
    db.appendMessage(b.id, { role: 'user', content: 'kraken credentials rotated' });
    const r = db.sessionSearch({ query: 'kraken' }, { repo: REPO_A }) as any;
    expect(r.scope).toBe('all');
    expect(r.results[0].session.repo).toBe(REPO_B);
    const none = db.sessionSearch({ query: 'nothing-like-this' }, { repo: REPO_A }) as any;
    expect(none.count).toBe(0);
    expect(none.note).toContain('No stored message');
  });

  it('read: whole short sessions; long ones as first 20 + last 10 with a pointer to the rest', () => {
    const short = db.createSession({ repo: REPO_A, source: 'cli' });
    db.appendMessages(short.id, transcript(30));
    const r1 = db.sessionSearch({ session_id: short.id }) as any;
    expect(r1.mode).toBe('read');
    expect(r1.messages).toHaveLength(30);
    expect(r1.omitted).toBeUndefined();

    const long = db.createSession({ repo: REPO_A, source: 'cli' });
    const ids = db.appendMessages(long.id, transcript(45));
    const r2 = db.sessionSearch({ session_id: long.id }) as any;
    expect(r2.messages.map((m: any) => m.id)).toEqual(ids.slice(0, READ_HEAD));
    expect(r2.tail.map((m: any) => m.id)).toEqual(ids.slice(-READ_TAIL));
    expect(r2.omitted).toMatchObject({ count: 15, afterMessageId: ids[READ_HEAD - 1], beforeMessageId: ids[45 - READ_TAIL] });
    expect(() => db.sessionSearch({ session_id: 'nope' })).toThrow(/no session/);
  });

  it('scroll: the messages around one message, bounded by the session', () => {
    const s = db.createSession({ repo: REPO_A, source: 'cli' });
    const ids = db.appendMessages(s.id, transcript(30));
    const other = db.createSession({ repo: REPO_A, source: 'cli' });
    db.appendMessages(other.id, transcript(5));
    const r = db.sessionSearch({ session_id: s.id, around_message_id: ids[10], window: 3 }) as any;
    expect(r.mode).toBe('scroll');
    expect(r.messages.map((m: any) => m.id)).toEqual(ids.slice(7, 14));
    expect(r).toMatchObject({ moreBefore: true, moreAfter: true, aroundMessageId: ids[10] });
    const edge = db.sessionSearch({ around_message_id: ids[29], window: 4 }) as any;
    expect(edge.messages.map((m: any) => m.id)).toEqual(ids.slice(25));
    expect(edge.moreAfter).toBe(false);
    expect(() => db.sessionSearch({ session_id: other.id, around_message_id: ids[10] })).toThrow(/no message/);
    expect(() => db.sessionSearch({ bogus: 1 })).toThrow(/session_search/);
  });

  it('browse: recent sessions of this repository with a preview of the first request', () => {
    const a1 = db.createSession({ repo: REPO_A, source: 'cli', startedAt: '2026-01-01T00:00:00.000Z' });
    const a2 = db.createSession({ repo: REPO_A, source: 'hook', startedAt: '2026-01-02T00:00:00.000Z' });
    const b1 = db.createSession({ repo: REPO_B, source: 'cli', startedAt: '2026-01-03T00:00:00.000Z' });
    db.appendMessages(a1.id, [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first   request\nof a1' },
    ]);
    const r = db.sessionSearch({}, { repo: REPO_A }) as any;
    expect(r.mode).toBe('browse');
    expect(r.sessions.map((s: any) => s.id)).toEqual([a2.id, a1.id]);
    expect(r.sessions[1].preview).toBe('first request of a1');
    expect((db.sessionSearch({ limit: 1 }, { repo: REPO_A }) as any).sessions).toHaveLength(1);
    const all = db.sessionSearch({}, {}) as any;
    expect(all.sessions[0].id).toBe(b1.id);
    expect(JSON.parse(JSON.stringify(all))).toEqual(all);
  });

  it('a very common term is ranked by bm25 among its newest candidates only', () => {
    const small = new SessionDB(join(home, 'state.db'), { fullRankMaxMatches: 50, recentCandidates: 20 });
    try {
      const s = small.createSession({ repo: REPO_A, source: 'cli' });
      const ids = small.write(() =>
        Array.from({ length: 300 }, (_, i) =>
          small.appendMessage(s.id, {
            role: 'user',
            content: i === 5 ? 'common common common common' : `common word ${i % 7 === 0 ? 'rarity' : 'plain'} and some longer padding text`,
          }),
        ),
      );
      const r = small.search('common', { all: true, limit: 5 });
      expect(r.strategy).toBe('recent');
      expect(r.results).toHaveLength(5);
      // Only the newest 20 were ranked: the old, best-scoring message #5 is not among them.
      for (const h of r.results) expect(ids.indexOf(h.messageId)).toBeGreaterThanOrEqual(280);
      // A term under the threshold is ranked over all its matches, best first.
      const rare = small.search('rarity', { all: true, limit: 100 });
      expect(rare.strategy).toBe('ranked');
      expect(rare.results).toHaveLength(43);
      const full = db.search('common', { all: true, limit: 1 });
      expect(full.strategy).toBe('ranked');
      expect(full.results[0]!.messageId).toBe(ids[5]);
    } finally {
      small.close();
    }
  });
});
