import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionDB } from '../../src/sessions/db.js';
import { QUERY_MAX_CHARS, QUERY_MAX_TERMS, excerpt, termPattern, toFtsQuery } from '../../src/sessions/query.js';

// input → the FTS5 MATCH expression it must become ('' = nothing searchable)
const TABLE: Array<[string, string]> = [
  ['failed test', '"failed" "test"'],
  ['chat-send', '"chat send"'],
  ['foo.bar', '"foo bar"'],
  ['src/app/main.ts', '"src app main ts"'],
  ['"exact phrase" here', '"exact phrase" "here"'],
  ['"unbalanced quote', '"unbalanced" "quote"'],
  ['say "a"b"', '"say" "a" "b"'],
  ['a OR b', '"a" OR "b"'],
  ['a AND b', '"a" "b"'],
  ['a NOT b', '"a" NOT "b"'],
  ['OR a', '"a"'],
  ['a OR', '"a"'],
  ['NOT a', '"a"'],
  ['a AND OR NOT', '"a"'],
  ['AND', ''],
  ['a OR OR b', '"a" OR "b"'],
  ['and or not', '"and" "or" "not"'],
  ['content:secret', '"secret"'],
  ['tool_name:terminal', '"terminal"'],
  ['{content tool_name}: x', '"content" "tool name" "x"'],
  ['NEAR(a b, 3)', '"a" "b" "3"'],
  ['^start', '"start"'],
  ['-excluded +included', '"excluded" "included"'],
  ['prefix*', '"prefix"*'],
  ['pre*fix', '"pre fix"'],
  ['*', ''],
  ['(a OR b) c', '"a" OR "b" "c"'],
  ['***', ''],
  ['', ''],
  ['   ', ''],
  ['"" ""', ''],
  ['!@#$%^&()', ''],
  ['数据库迁移', '"数据库迁移"'],
  ['café', '"café"'],
  ["it's", '"it s"'],
  ['E4521:', '"E4521"'],
];

describe('FTS5 query sanitiser', () => {
  let home: string;
  let db: SessionDB;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'hd-sanitise-'));
    db = new SessionDB(join(home, 'state.db'));
    const s = db.createSession({ repo: '/r', source: 'cli' });
    db.appendMessages(s.id, [
      { role: 'user', content: 'the chat-send handler failed in foo.bar with E4521' },
      { role: 'tool', content: 'café prefixed output 数据库迁移失败', toolName: 'terminal' },
    ]);
  });
  afterAll(() => {
    db.close();
    rmSync(home, { recursive: true, force: true });
  });

  it.each(TABLE)('%j → %s', (input, expected) => {
    expect(toFtsQuery(input).match).toBe(expected);
  });

  it.each(TABLE)('%j is accepted by FTS5 (no syntax error reaches the caller)', (input) => {
    const q = toFtsQuery(input);
    if (q.match) expect(() => db.db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?').all(q.match)).not.toThrow();
    expect(() => db.search(input, { all: true })).not.toThrow();
  });

  it('finds hyphenated and dotted words as phrases', () => {
    expect(db.search('chat-send', { all: true }).results).toHaveLength(1);
    expect(db.search('foo.bar', { all: true }).results).toHaveLength(1);
    expect(db.search('send-chat', { all: true }).results).toHaveLength(0);
  });

  it('caps the input length and the number of terms', () => {
    const long = 'word '.repeat(1000);
    expect(toFtsQuery(long).terms.length).toBe(QUERY_MAX_TERMS);
    const q = toFtsQuery('x'.repeat(QUERY_MAX_CHARS * 3));
    expect(q.terms[0]!.raw.length).toBe(QUERY_MAX_CHARS);
  });

  it('random garbage never throws and never reaches FTS5 as syntax', () => {
    const alphabet = [
      '"',
      "'",
      '*',
      '^',
      ':',
      '(',
      ')',
      '{',
      '}',
      '-',
      '+',
      'AND',
      'OR',
      'NOT',
      'NEAR',
      ' ',
      'a',
      'b',
      '数',
      '.',
      '/',
      '\\',
      '%',
      '_',
      '\u0000',
      '\n',
    ];
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 300; i++) {
      let s = '';
      const n = Math.floor(rand() * 20);
      for (let k = 0; k < n; k++) s += alphabet[Math.floor(rand() * alphabet.length)] + (rand() < 0.3 ? ' ' : '');
      const q = toFtsQuery(s);
      if (q.match) db.db.prepare('SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?').get(q.match);
      db.search(s, { all: true });
    }
  });

  it('CJK and inner substrings go to the trigram index', () => {
    const cjk = db.search('数据库', { all: true });
    expect(cjk.strategy).toBe('trigram');
    expect(cjk.results[0]?.snippet).toContain('数据库迁移失败');
    const inner = db.search('at-se', { all: true });
    expect(inner.strategy).toBe('trigram');
    expect(inner.results).toHaveLength(1);
  });

  it('excerpts centre on the first match and mark the cuts', () => {
    const text = 'lorem ipsum '.repeat(40) + 'the needle is here ' + 'dolor sit '.repeat(40);
    const e = excerpt(text, termPattern(toFtsQuery('needle').terms));
    expect(e).toContain('needle');
    expect(e.startsWith('…')).toBe(true);
    expect(e.endsWith('…')).toBe(true);
    expect(e.length).toBeLessThanOrEqual(170);
  });
});
