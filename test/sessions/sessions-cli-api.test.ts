import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { SessionDB } from '../../src/sessions/db.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

describe('sessions through the real daemon: API routes and CLI shapes', () => {
  let t: TestEnv;
  let repoA: string;
  let repoB: string;
  let a: DaemonClient;
  let b: DaemonClient;
  let sessionA: string;
  let sessionB: string;
  let ids: number[];

  beforeAll(async () => {
    t = makeEnv();
    repoA = t.repo();
    repoB = t.repo();
    a = new DaemonClient((await t.cli(['start', '--json'], { cwd: repoA })).json().socket);
    b = new DaemonClient((await t.cli(['start', '--json'], { cwd: repoB })).json().socket);
    const sa = await a.call<any>('POST', '/v1/sessions', { source: 'hook', title: 'pre-commit evidence', systemPrompt: 'You are hermes.' });
    sessionA = sa.session.id;
    expect(sa.session).toMatchObject({ repo: repoA, source: 'hook', parentSessionId: null });
    const one = await a.call<any>('POST', `/v1/sessions/${sessionA}/messages`, {
      role: 'user',
      content: 'why did the kraken deploy fail?',
      apiContent: 'why did the kraken deploy fail?\n[recalled] deploys use make ship',
    });
    const many = await a.call<any>('POST', `/v1/sessions/${sessionA}/messages`, {
      messages: [
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":"make ship"}' } }] },
        { role: 'tool', content: 'kraken: permission denied (publickey)', toolName: 'terminal', toolCallId: 'c1' },
      ],
    });
    ids = [one.id, ...many.ids];
    const sb = await b.call<any>('POST', '/v1/sessions', { source: 'cli' });
    sessionB = sb.session.id;
    await b.call('POST', `/v1/sessions/${sessionB}/messages`, { role: 'user', content: 'the kraken in repository B' });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('sessions list: this repository by default, every repository with --all', async () => {
    const mine = await t.cli(['sessions', 'list', '--json'], { cwd: repoA });
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.json().sessions.map((s: any) => s.id)).toEqual([sessionA]);
    const all = await t.cli(['sessions', 'list', '--all', '--json'], { cwd: repoA });
    expect(
      all
        .json()
        .sessions.map((s: any) => s.id)
        .sort(),
    ).toEqual([sessionA, sessionB].sort());
    const hooks = await t.cli(['sessions', 'list', '--all', '--source', 'hook', '--limit', '5', '--json'], { cwd: repoA });
    expect(hooks.json().sessions.map((s: any) => s.id)).toEqual([sessionA]);
    const human = await t.cli(['sessions', 'list'], { cwd: repoA });
    expect(human.stdout).toContain(sessionA);
    expect(human.stdout).toContain('pre-commit evidence');
    expect((await t.cli(['sessions', 'list', '--limit', 'many'], { cwd: repoA })).code).toBe(2);
  });

  it('sessions show: the DESIGN.md --json shape, sidecar and tool calls included', async () => {
    const r = await t.cli(['sessions', 'show', sessionA, '--json'], { cwd: repoA });
    expect(r.code, r.stderr).toBe(0);
    const j = r.json();
    expect(j.session).toMatchObject({ id: sessionA, repo: repoA, source: 'hook', parentSessionId: null, messageCount: 3, toolCallCount: 1 });
    expect(j.messages.map((m: any) => m.id)).toEqual(ids);
    expect(j.messages[0]).toMatchObject({ role: 'user', content: 'why did the kraken deploy fail?', apiContent: expect.stringContaining('[recalled]') });
    expect(j.messages[1].toolCalls[0].function).toEqual({ name: 'terminal', arguments: '{"command":"make ship"}' });
    expect(j.messages[2]).toMatchObject({ role: 'tool', toolName: 'terminal' });
    expect(j.messages[2].apiContent).toBeUndefined();
    const human = await t.cli(['sessions', 'show', sessionA], { cwd: repoA });
    expect(human.stdout).toContain('→ terminal({"command":"make ship"})');
    expect(human.stdout).toContain('permission denied');
    const missing = await t.cli(['sessions', 'show', 'no-such-session'], { cwd: repoA });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No session no-such-session');
  });

  it('sessions search: {results:[{sessionId, messageId, role, snippet}]}, repository filter, --all, --role', async () => {
    const r = await t.cli(['sessions', 'search', 'kraken', '--json'], { cwd: repoA });
    expect(r.code, r.stderr).toBe(0);
    const results = r.json().results;
    expect(results.length).toBe(2);
    for (const h of results) {
      expect(h).toMatchObject({ sessionId: sessionA, messageId: expect.any(Number), role: expect.any(String), snippet: expect.stringContaining('kraken') });
    }
    const all = await t.cli(['sessions', 'search', 'kraken', '--all', '--json'], { cwd: repoA });
    expect(all.json().results.map((h: any) => h.sessionId)).toContain(sessionB);
    const tool = await t.cli(['sessions', 'search', 'kraken', '--role', 'tool', '--json'], { cwd: repoA });
    expect(tool.json().results.map((h: any) => h.messageId)).toEqual([ids[2]]);
    const args = await t.cli(['sessions', 'search', 'make', 'ship', '--json'], { cwd: repoA });
    expect(args.json().results.map((h: any) => h.messageId)).toEqual([ids[1]]);
    const garbage = await t.cli(['sessions', 'search', '"AND (kraken* OR', 'NOT', '--json'], { cwd: repoA });
    expect(garbage.code, garbage.stderr).toBe(0);
    expect(garbage.json().results.length).toBe(2);
    const human = await t.cli(['sessions', 'search', 'permission', 'denied'], { cwd: repoA });
    expect(human.stdout).toContain(sessionA);
    expect(human.stdout).toContain('kraken: permission denied');
    expect((await t.cli(['sessions', 'search', 'x', '--role', 'robot'], { cwd: repoA })).code).toBe(2);
    const empty = await t.cli(['sessions', 'search', '  '], { cwd: repoA });
    expect(empty.code, 'an empty search was not a usage error').toBe(2);
    expect(empty.stderr, 'an empty search should say how to search from the command line, not name the API').toContain('hermesd sessions search "');
    expect(empty.stderr).not.toContain('/v1/');
  });

  it('the API: search route before :id, tool route, errors as JSON', async () => {
    const s = await a.call<any>('GET', '/v1/sessions/search?q=kraken&all=1&limit=1');
    expect(s.results).toHaveLength(1);
    await expect(a.call('GET', '/v1/sessions/search')).rejects.toMatchObject({ httpStatus: 400 });
    const tool = await a.call<any>('POST', '/v1/sessions/tool', { query: 'kraken deploy' });
    expect(tool.mode).toBe('discover');
    expect(tool.results[0].session.id).toBe(sessionA);
    const read = await a.call<any>('POST', '/v1/sessions/tool', { session_id: sessionA });
    expect(read.messages).toHaveLength(3);
    const browse = await b.call<any>('POST', '/v1/sessions/tool', {});
    expect(browse.sessions.map((x: any) => x.id)).toEqual([sessionB]);
    await expect(a.call('POST', '/v1/sessions/tool', { nonsense: true })).rejects.toMatchObject({ httpStatus: 400 });
    await expect(a.call('POST', '/v1/sessions/nope/messages', { role: 'user', content: 'x' })).rejects.toMatchObject({ httpStatus: 404 });
    const ended = await a.call<any>('POST', `/v1/sessions/${sessionA}/end`, { reason: 'hook-finished' });
    expect(ended.session).toMatchObject({ endReason: 'hook-finished', endedAt: expect.any(String) });
    const withPrompt = await a.call<any>('GET', `/v1/sessions/${sessionA}?prompt=1`);
    expect(withPrompt.systemPrompt).toBe('You are hermes.');
  });

  it('a write the daemon acknowledged survives kill -9 of the daemon', async () => {
    const pid = (await a.call<any>('GET', '/v1/status')).pid;
    const child = await a.call<any>('POST', '/v1/sessions', { source: 'socket', parentSessionId: sessionA });
    const acked = await a.call<any>('POST', `/v1/sessions/${child.session.id}/messages`, { role: 'user', content: 'written just before the crash' });
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const db = new SessionDB(join(t.home, 'state.db'));
    try {
      expect(db.getMessage(acked.id)?.content).toBe('written just before the crash');
      expect(db.getSession(child.session.id)?.parentSessionId).toBe(sessionA);
      expect(db.integrityCheck()).toBe('ok');
    } finally {
      db.close();
    }
    // The next command starts a fresh daemon that reads the same evidence.
    const again = await t.cli(['sessions', 'search', 'crash', '--json'], { cwd: repoA });
    expect(again.json().results.map((h: any) => h.messageId)).toEqual([acked.id]);
  });
});
