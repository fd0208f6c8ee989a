import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionDB, toolArgsText, type ToolCall } from '../../src/sessions/db.js';
import { SCHEMA_VERSION, V1, V2 } from '../../src/sessions/schema.js';

const REPO = '/work/a';
const NOW = '2026-11-29T10:00:00.000Z';

const call = (id: string, name: string, args: string): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });

/** Runs an FTS5 command ('rebuild', 'integrity-check') on both indexes; the errors, if any. */
function ftsCommand(db: Database.Database, command: string): string[] {
  const errors: string[] = [];
  for (const table of ['messages_fts', 'messages_trigram']) {
    try {
      db.prepare(`INSERT INTO ${table}(${table}) VALUES (?)`).run(command);
    } catch (err) {
      errors.push(`${table}: ${(err as Error).message}`);
    }
  }
  return errors;
}

/**
 * A state.db as hermesd v1 wrote it: the v1 DDL, user_version 1, rows inserted the way v1's
 * SessionDB inserted them (its triggers indexed them).
 */
function writeV1Database(path: string): void {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(V1);
    db.pragma('user_version = 1');
    const insS = db.prepare('INSERT INTO sessions (id, repo, source, started_at) VALUES (?, ?, ?, ?)');
    const insM = db.prepare(
      'INSERT INTO messages (session_id, role, content, api_content, tool_calls, tool_name, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      insS.run('s1', REPO, 'cli', NOW);
      insM.run('s1', 'user', 'why does the quokka deploy fail', null, null, null, null, NOW);
      insM.run(
        's1',
        'assistant',
        'let me look',
        null,
        JSON.stringify([
          call('c1', 'terminal', '{"command":"kubectl rollout status marsupial-api"}'),
          call('c2', 'read_file', '{"path":"deploy/wombat.yaml"}'),
        ]),
        null,
        null,
        NOW,
      );
      insM.run('s1', 'tool', 'error: ImagePullBackOff on node-7', null, null, 'terminal', 'c1', NOW);
      // Legacy shapes the backfill must survive: a bare `arguments`, a call without arguments, invalid JSON.
      insM.run(
        's1',
        'assistant',
        '',
        null,
        JSON.stringify([
          { id: 'c3', arguments: '{"q":"platypus"}' },
          { id: 'c4', function: { name: 'noop' } },
        ]),
        null,
        null,
        NOW,
      );
      insM.run('s1', 'assistant', 'broken calls', null, '{not json', null, null, NOW);
    })();
    // The bug this migration fixes; if v1 ever stops failing here, the test no longer shows anything.
    expect(ftsCommand(db, 'rebuild').join('\n')).toMatch(/no such table: main\.json_each/);
  } finally {
    db.close();
  }
}

const ids = (db: SessionDB, q: string) =>
  db
    .search(q, { all: true })
    .results.map((h) => h.messageId)
    .sort((a, b) => a - b);

describe('SessionDB schema migrations (v1 → v2 → v3)', () => {
  let home: string;
  let path: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'hd-sessions-migration-'));
    path = join(home, 'state.db');
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('migrates a v1 database in place: search keeps working and the FTS commands work again', () => {
    writeV1Database(path);
    const db = new SessionDB(path);
    try {
      expect(db.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(4);
      expect(db.db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'messages_search'").pluck().get()).toBe(0);

      // The backfill: the same text SessionDB computes for new rows (since v3 with each call's name).
      const rows = db.db.prepare('SELECT id, tool_calls, tool_args FROM messages ORDER BY id').all() as Array<{
        id: number;
        tool_calls: string | null;
        tool_args: string | null;
      }>;
      expect(rows.map((r) => r.tool_args)).toEqual([
        null,
        'terminal {"command":"kubectl rollout status marsupial-api"} read_file {"path":"deploy/wombat.yaml"}',
        null,
        '{"q":"platypus"} noop',
        null, // invalid JSON: no calls, as v1 indexed it
      ]);
      for (const r of rows.slice(0, 4)) expect(r.tool_args).toBe(toolArgsText(r.tool_calls ? (JSON.parse(r.tool_calls) as ToolCall[]) : null));

      // Content, tool names and tool arguments are all found, as before the migration.
      expect(ids(db, 'quokka')).toEqual([1]);
      // A tool's name finds the result it produced and, since v3, the call that asked for it.
      expect(ids(db, 'terminal')).toEqual([2, 3]);
      expect(ids(db, 'marsupial')).toEqual([2]);
      expect(ids(db, 'wombat')).toEqual([2]);
      expect(ids(db, 'platypus')).toEqual([4]);
      expect(db.search('ImagePull', { all: true })).toMatchObject({ strategy: 'trigram', results: [{ messageId: 3 }] });
      expect(db.search('marsupial', { all: true }).results[0]?.snippet).toContain('marsupial-api');
      expect(db.getSession('s1')).toMatchObject({ messageCount: 5, toolCallCount: 4 });

      // What a user runs with sqlite3, on a separate connection.
      const raw = new Database(path);
      try {
        expect(ftsCommand(raw, 'rebuild')).toEqual([]);
        expect(ftsCommand(raw, 'integrity-check')).toEqual([]);
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        raw.close();
      }
      expect(db.integrityCheck()).toBe('ok');
      expect(ids(db, 'wombat')).toEqual([2]);

      // New rows after the migration: indexed through the new column and triggers.
      const added = db.appendMessage('s1', {
        role: 'assistant',
        content: 'checking again',
        toolCalls: [call('c4', 'terminal', '{"command":"helm history echidna"}')],
      });
      expect(db.getMessage(added)?.toolCalls?.[0]?.function.arguments).toBe('{"command":"helm history echidna"}');
      expect(ids(db, 'echidna')).toEqual([added]);
      expect(db.getSession('s1')).toMatchObject({ messageCount: 6, toolCallCount: 5 });
      db.db.prepare('DELETE FROM messages WHERE id = ?').run(2);
      expect(ids(db, 'wombat')).toEqual([]);
      expect(db.integrityCheck()).toBe('ok');
    } finally {
      db.close();
    }
    // Reopening a migrated database migrates nothing again.
    const again = new SessionDB(path);
    try {
      expect(again.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(ids(again, 'echidna')).toHaveLength(1);
    } finally {
      again.close();
    }
  });

  it('migrates a v2 database: tool-call function names become searchable, arguments stay searchable', () => {
    const v2 = new Database(path);
    try {
      v2.pragma('journal_mode = WAL');
      v2.exec(V1);
      v2.exec(V2);
      v2.pragma('user_version = 2');
      v2.prepare('INSERT INTO sessions (id, repo, source, started_at) VALUES (?, ?, ?, ?)').run('s1', REPO, 'cli', NOW);
      const calls = [call('c1', 'skill_view', '{"name":"regen-api-client"}')];
      // As v2 wrote it: tool_args held the arguments only.
      v2.prepare('INSERT INTO messages (session_id, role, content, tool_calls, tool_args, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        's1',
        'assistant',
        'checking the skill',
        JSON.stringify(calls),
        '{"name":"regen-api-client"}',
        NOW,
      );
    } finally {
      v2.close();
    }
    const db = new SessionDB(path);
    try {
      expect(db.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(ids(db, 'skill_view')).toEqual([1]);
      expect(ids(db, 'regen')).toEqual([1]);
      expect(db.search('skill_view', { all: true }).results[0]?.snippet).toContain('skill_view(');
      expect(db.db.prepare('SELECT tool_args FROM messages WHERE id = 1').pluck().get()).toBe(
        toolArgsText([call('c1', 'skill_view', '{"name":"regen-api-client"}')]),
      );
      expect(db.integrityCheck()).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('a new database can be rebuilt and integrity-checked, and its tool arguments are redacted and searchable', () => {
    const db = new SessionDB(path);
    try {
      const s = db.createSession({ repo: REPO, source: 'cli' });
      const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
      const [m] = db.appendMessages(s.id, [
        {
          role: 'assistant',
          content: '',
          toolCalls: [call('c1', 'terminal', JSON.stringify({ command: `GITHUB_TOKEN=${secret} gh release view bandicoot` }))],
        },
        { role: 'tool', content: 'release bandicoot v2', toolName: 'terminal', toolCallId: 'c1' },
      ]);
      const stored = db.db.prepare('SELECT tool_args FROM messages WHERE id = ?').pluck().get(m) as string;
      expect(stored).toContain('bandicoot');
      expect(stored).not.toContain(secret);
      expect(ids(db, 'bandicoot')).toHaveLength(2);
      expect(ftsCommand(db.db, 'rebuild')).toEqual([]);
      expect(db.integrityCheck()).toBe('ok');
      expect(ids(db, 'bandicoot')).toHaveLength(2);
      expect(ids(db, 'release')).toHaveLength(2);
    } finally {
      db.close();
    }
  });
});
