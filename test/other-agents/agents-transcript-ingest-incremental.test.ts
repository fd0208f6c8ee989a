/**
 * Transcript ingest into a real SessionDB (src/other-agents/ingest.ts): only complete lines are
 * read, the position and the keys of stored records survive a restart, a replaced file is
 * read again without duplicates, two processes ingesting the same file at once store every
 * record once, secrets are redacted, and a line longer than a read chunk is read whole.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestTranscript, transcriptRow, TRANSCRIPT_CHUNK_BYTES } from '../../src/other-agents/ingest.js';
import { SessionDB } from '../../src/sessions/db.js';
import { REPO_ROOT } from '../helpers/env.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'agents');
const line = (uuid: string, text: string, role: 'user' | 'assistant' = 'user') =>
  JSON.stringify(
    role === 'user'
      ? { type: 'user', uuid, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: text } }
      : { type: 'assistant', uuid, sessionId: 's', message: { role: 'assistant', model: 'm', content: [{ type: 'text', text }] } },
  ) + '\n';

describe('incremental transcript ingest', () => {
  let dir: string;
  let dbPath: string;
  let db: SessionDB;
  const ingest = (path: string, d = db) => ingestTranscript(d, { path, agent: 'claude', repo: '/w/repo' });
  const contents = (sessionId: string, d = db) => d.getMessages(sessionId).map((m) => m.content);

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'hd-ingest-')));
    dbPath = join(dir, 'state.db');
    db = new SessionDB(dbPath);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads complete lines only, then on from where it stopped; nothing twice after a restart', () => {
    const file = join(dir, 't.jsonl');
    writeFileSync(file, line('u1', 'first question') + line('a1', 'first answer', 'assistant') + line('u2', 'second').slice(0, 15));
    const r1 = ingest(file);
    expect(r1.stored).toBe(2);
    expect(r1.offset).toBe(Buffer.byteLength(line('u1', 'first question') + line('a1', 'first answer', 'assistant')));
    writeFileSync(file, line('u1', 'first question') + line('a1', 'first answer', 'assistant') + line('u2', 'second question'));
    expect(ingest(file).stored).toBe(1);
    expect(ingest(file).stored).toBe(0);
    db.close();
    db = new SessionDB(dbPath);
    expect(ingest(file).stored).toBe(0);
    appendFileSync(file, line('a2', 'second answer', 'assistant'));
    const r = ingest(file);
    expect(r.stored).toBe(1);
    expect(contents(r.sessionId)).toEqual(['first question', 'first answer', 'second question', 'second answer']);
    const session = db.getSession(r.sessionId)!;
    expect(session).toMatchObject({ source: 'claude-code', repo: '/w/repo', title: 'first question', model: 'm' });
  });

  it('reads a replaced file from its start and stores only what is new', () => {
    const file = join(dir, 't.jsonl');
    writeFileSync(file, line('u1', 'alpha') + line('u2', 'beta'));
    const { sessionId } = ingest(file);
    // Rotated: a new file at the same path, its first record the same, then new ones.
    writeFileSync(file, line('u1', 'alpha') + line('u3', 'gamma'));
    expect(ingest(file).stored).toBe(1);
    writeFileSync(file, line('u9', 'omega'));
    expect(ingest(file).stored).toBe(1);
    expect(contents(sessionId)).toEqual(['alpha', 'beta', 'gamma', 'omega']);
  });

  it('stores every record once when two daemons ingest the same file at once', async () => {
    const file = join(dir, 'big.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) lines.push(line(`u${i}`, `message number ${i} about the parser`, i % 2 ? 'assistant' : 'user'));
    writeFileSync(file, lines.join(''));
    db.close();
    const script = `const { ingestTranscript } = await import(${JSON.stringify(join(REPO_ROOT, 'dist/src/other-agents/ingest.js'))});
      const { SessionDB } = await import(${JSON.stringify(join(REPO_ROOT, 'dist/src/sessions/db.js'))});
      const db = new SessionDB(${JSON.stringify(dbPath)});
      const r = ingestTranscript(db, { path: ${JSON.stringify(file)}, agent: 'claude', repo: '/w/repo' });
      db.close(); process.stdout.write(JSON.stringify(r));`;
    const runOne = () =>
      new Promise<{ stored: number }>((res, rej) => {
        const c = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        c.stdout.on('data', (d: Buffer) => (out += d));
        c.on('error', rej);
        c.on('close', (code) => (code === 0 ? res(JSON.parse(out)) : rej(new Error(`exit ${code}`))));
      });
    const [a, b] = await Promise.all([runOne(), runOne()]);
    expect(a.stored + b.stored).toBe(3000);
    db = new SessionDB(dbPath);
    const row = transcriptRow(db, file)!;
    expect(db.getMessages(row.session_id)).toHaveLength(3000);
    expect(row.stored).toBe(3000);
  });

  it('redacts secrets before they are stored', () => {
    const file = join(dir, 't.jsonl');
    writeFileSync(file, line('u1', 'deploy with AKIAIOSFODNN7EXAMPLQ and ghp_R8nK2vQ7xLm4Tz9Bw3Yc6Hd1Fs5Gj0Pa2Ue8 please'));
    const { sessionId } = ingest(file);
    const [stored] = contents(sessionId);
    expect(stored).not.toContain('AKIAIOSFODNN7EXAMPLQ');
    expect(stored).not.toContain('ghp_R8nK2vQ7xLm4Tz9Bw3Yc6Hd1Fs5Gj0Pa2Ue8');
    expect(stored).toContain('please');
  });

  it('reads a line longer than a read chunk whole', () => {
    const file = join(dir, 't.jsonl');
    const long = 'x'.repeat(TRANSCRIPT_CHUNK_BYTES + 1000);
    writeFileSync(file, line('u1', 'before') + line('a1', long, 'assistant') + line('u2', 'after'));
    const r = ingest(file);
    expect(r.stored).toBe(3);
    expect(contents(r.sessionId).map((c) => c.length)).toEqual([6, long.length, 5]);
  });

  it('reads the public sample transcripts with the counts their shapes give', () => {
    const rep = join(dir, 'rep.jsonl');
    copyFileSync(join(FIXTURES, 'claude-representative_messages.jsonl'), rep);
    const r = ingest(rep);
    expect(r.skipped).toBe(0);
    expect(r.lines).toBe(
      readFileSync(rep, 'utf8')
        .split('\n')
        .filter((l) => l.trim()).length,
    );
    const msgs = db.getMessages(r.sessionId);
    expect(msgs.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.function.name === 'Edit'))).toBe(true);
    expect(msgs.some((m) => m.role === 'tool')).toBe(true);
  });
});
