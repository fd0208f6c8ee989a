import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/security/redact.js';
import { SessionDB } from '../../src/sessions/db.js';
import { redactForStorage, SECRET_CANDIDATE } from '../../src/security/prefilter.js';

const SECRET_SHAPED = [
  'aws_access_key_id = AKIA' + 'Q3EGRV7YXH2MZK4P',
  'the key AKIA' + 'Q3EGRV7YXH2MZK4P leaked',
  'token: ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  'GH=github_pat_' + '11UejePPY9uWPntZnE6NcFUmHH3oQPLtBiEk7EQnstm5DDqhoktJ7qV2excD8reF9qvPITBBkR3Xs4fB8Y3G',
  'OPENAI_API_KEY=sk-' + 'proj-Xy7Qm2Lp9Rt4Vn8Kd3Hs6Jf1Gb5Wc0Ze',
  'client = OpenAI(api_key="sk-' + 'T3BlbkFJ9x8y7z6w5v4u3t2s1r0qPONMLKJIHGFE")',
  'SLACK=xoxb-' + '123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
  '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Yq2w9',
  'stripe rk_live_' + 'abcdefghijKLMNOP1234',
  'google AIza' + 'SyA1234567890abcdefghijklmnopqrstuv',
  'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'STRIPE_SECRET_KEY=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c',
  'deploy_token: "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"',
  '{"client_secret": "k3J9sL2mQ8vN4xR7tB1wE6yU"}',
  'DB_PASSWORD=Tr0ub4dor&3x',
  'postgres://app:s3cr3tPassw0rd@db.internal:5432/app',
  'Authorization: Bearer 8fA2kL9qZ3xV7mN1pR5tW0yB4cD6',
  'curl -H "X-Auth: 8fA2kL9qZ3xV7mN1pR5tW0yB4cD6" --auth=Zt81LmQ0vXc3Rk5Yh2Wn7Pb',
];

describe('the redaction pre-test on the write path', () => {
  it('lets every secret-shaped text through to the full redaction', () => {
    for (const text of SECRET_SHAPED) {
      expect(redactSecrets(text).text, text).not.toBe(text);
      expect(SECRET_CANDIDATE.test(text), text).toBe(true);
      expect(redactForStorage(text)).toBe(redactSecrets(text).text);
    }
  });

  it('gives the same text as the full redaction for ordinary and mixed text', () => {
    const words = [
      'npm',
      'test',
      'failed',
      'src/a.ts',
      'key',
      'token',
      'pass',
      'E1234',
      'ghp',
      'sk',
      ':',
      '=',
      '"',
      '//',
      'x@y',
      'Bearer',
      'AKIA',
      ...SECRET_SHAPED,
    ];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => words[Math.floor(rand() * words.length)]).join(rand() < 0.5 ? ' ' : '');
      expect(redactForStorage(text), text).toBe(redactSecrets(text).text);
    }
    expect(SECRET_CANDIDATE.test('npm test passed after the fix in src/parser.ts (E4021)')).toBe(false);
  });
});

describe('SessionDB write path and filtered recent search', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'hermesd-sessions-paths-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('stores secret-shaped content redacted and ordinary content as is', () => {
    const db = new SessionDB(join(home, 'state.db'));
    try {
      const s = db.createSession({ repo: '/r', source: 'cli' });
      const [a, b] = db.appendMessages(s.id, [
        { role: 'tool', content: 'DB_PASSWORD=Tr0ub4dor&3x' },
        { role: 'user', content: 'run the tests' },
      ]);
      expect(db.getMessage(a!)!.content).toBe('DB_PASSWORD=[REDACTED:secret-assignment]');
      expect(db.getMessage(b!)!.content).toBe('run the tests');
    } finally {
      db.close();
    }
  });

  it("a whole session recorded at once (a git hook's evidence) is whole or absent", () => {
    const db = new SessionDB(join(home, 'state.db'));
    try {
      const s = db.recordSession({ repo: '/r', source: 'hook', title: 'pre-commit: checks' }, [
        { role: 'user', content: 'git pre-commit: checks lint passed' },
        { role: 'assistant', content: 'commit allowed' },
      ]);
      expect(db.getSession(s.id)).toMatchObject({ title: 'pre-commit: checks', endReason: 'completed' });
      expect(db.getMessages(s.id).map((m) => m.content)).toEqual(['git pre-commit: checks lint passed', 'commit allowed']);
      const before = db.listSessions({ limit: 100 }).length;
      expect(() =>
        db.recordSession({ repo: '/r', source: 'hook', title: 'half' }, [
          { role: 'user', content: 'stored first' },
          { role: 'nobody' as 'user', content: 'refused' },
        ]),
      ).toThrow(/Unknown message role/);
      expect(db.listSessions({ limit: 100 }).length, 'a record that failed half-way left a session behind').toBe(before);
    } finally {
      db.close();
    }
  });

  it('termFrequency counts messages with a word, capped', () => {
    const db = new SessionDB(join(home, 'state.db'));
    try {
      const s = db.createSession({ repo: '/r', source: 'cli' });
      db.appendMessages(
        s.id,
        Array.from({ length: 30 }, (_, i) => ({ role: 'user' as const, content: `common Café ${i % 10 === 0 ? 'rarely' : ''}` })),
      );
      expect(db.termFrequency('rarely')).toBe(3);
      expect(db.termFrequency('COMMON')).toBe(30);
      expect(db.termFrequency('common', 10)).toBe(11);
      expect(db.termFrequency('cafe')).toBe(30);
      expect(db.termFrequency('absent')).toBe(0);
      expect(db.termFrequency('"; --')).toBe(0);
    } finally {
      db.close();
    }
  });

  it('a filtered search of a common term finds a small repository’s old messages through growing windows', () => {
    const db = new SessionDB(join(home, 'state.db'), { fullRankMaxMatches: 20, recentCandidates: 50, recentFilterWindow: 10 });
    try {
      const small = db.createSession({ repo: '/small', source: 'cli' });
      const old = db.appendMessages(small.id, [
        { role: 'tool', content: 'common common failure here' },
        { role: 'user', content: 'common request' },
      ]);
      const big = db.createSession({ repo: '/big', source: 'cli' });
      db.appendMessages(
        big.id,
        Array.from({ length: 200 }, (_, i) => ({ role: (i % 2 ? 'tool' : 'user') as 'tool' | 'user', content: `common filler ${i}` })),
      );
      const r = db.search('common', { repo: '/small', limit: 5 });
      expect(r.strategy).toBe('recent');
      expect(r.results.map((h) => h.messageId).sort()).toEqual([...old].sort());
      expect(db.search('common', { repo: '/small', role: 'tool', limit: 5 }).results.map((h) => h.messageId)).toEqual([old[0]]);
      // In the big repository the newest window fills the page: only its newest tool messages are ranked.
      const b = db.search('common', { repo: '/big', role: 'tool', limit: 3 });
      expect(b.results).toHaveLength(3);
      for (const h of b.results) expect(h.role).toBe('tool');
      expect(Math.min(...b.results.map((h) => h.messageId))).toBeGreaterThan(old[1]! + 150);
    } finally {
      db.close();
    }
  });
});
