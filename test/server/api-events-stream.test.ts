/**
 * GET /v1/events through the real daemon: a subscriber gets one line per change the watcher
 * reports (memory written by the CLI, a skill added by hand, an authority file edited), only
 * the events it asked for, an error line for an unknown one; and an open stream does not
 * keep an idle daemon alive — the daemon stops and the stream ends with its result line.
 */
import { request } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { alive, makeEnv, waitFor, writeFiles, type TestEnv } from '../helpers/env.js';
import { skillMd } from '../helpers/skills.js';

type Stream = { lines: Array<Record<string, any>>; ended: () => boolean; close: () => void };

function follow(socket: string, query: string): Stream {
  const lines: Array<Record<string, any>> = [];
  let ended = false;
  let buf = '';
  const req = request({ socketPath: socket, method: 'GET', path: `/v1/events${query}` }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
    });
    res.on('end', () => (ended = true));
  });
  req.on('error', () => (ended = true));
  req.end();
  return { lines, ended: () => ended, close: () => req.destroy() };
}

describe('GET /v1/events', () => {
  let t: TestEnv;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('streams the changes the watcher sees, only those asked for', async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\n' });
    const status = (await t.cli(['start', '--json'], { cwd: repo })).json();
    const all = follow(status.socket, '?client=test-all');
    const memoryOnly = follow(status.socket, '?events=memory-changed&client=test-memory');
    await waitFor(() => all.lines.length > 0 && memoryOnly.lines.length > 0);
    expect(all.lines[0]).toMatchObject({
      type: 'ready',
      pid: status.pid,
      events: ['authority-changed', 'config-changed', 'skills-changed', 'memory-changed', 'workspace-changed'],
    });
    expect(memoryOnly.lines[0]).toMatchObject({ type: 'ready', events: ['memory-changed'] });
    // Changes are reported once the watcher is ready.
    const api = new DaemonClient(status.socket);
    for (let i = 0; (await api.call<{ watcher?: { state?: string } }>('GET', '/v1/status')).watcher?.state !== 'ready'; i++) {
      if (i > 200) throw new Error('the watcher did not get ready');
      await new Promise((r) => setTimeout(r, 50));
    }

    expect((await api.call<{ eventStreams?: unknown }>('GET', '/v1/status')).eventStreams).toEqual({ 'test-all': 1, 'test-memory': 1 });

    const events = (s: Stream) => s.lines.filter((l) => l.type === 'event').map((l) => l.event as string);
    expect((await t.cli(['memory', 'add', 'CI is GitHub Actions'], { cwd: repo })).code).toBe(0);
    await waitFor(() => events(all).includes('memory-changed') && events(memoryOnly).includes('memory-changed'));
    writeFiles(t.home, { 'skills/lint/SKILL.md': skillMd('lint') });
    await waitFor(() => events(all).includes('skills-changed'));
    writeFileSync(join(repo, 'AGENTS.md'), '# Rules\nUse pnpm.\n');
    await waitFor(() => events(all).includes('authority-changed'));
    expect(events(memoryOnly)).toEqual(['memory-changed']);
    expect(all.lines.find((l) => l.type === 'event')).toMatchObject({ at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });

    const bad = follow(status.socket, '?events=memory-changed,everything');
    await waitFor(() => bad.ended());
    expect(bad.lines).toEqual([
      { type: 'error', error: expect.objectContaining({ code: 'bad-request', message: expect.stringContaining('Unknown event "everything"') }) },
    ]);
    all.close();
    memoryOnly.close();
    const log = (await t.cli(['logs', '-n', '50'], { cwd: repo })).stdout;
    expect(log).toContain('event stream opened {"client":"test-all"');
    await waitFor(() => /event stream closed \{"client":"test-all"/.test(readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')));
  });

  it('an open stream does not keep an idle daemon alive; the stream ends with the result line', async () => {
    const repo = t.repo();
    // Long enough that a loaded machine still connects the stream before the daemon goes idle.
    const status = (await t.cli(['start', '--json'], { cwd: repo, env: { HERMESD_IDLE_TIMEOUT_MS: '2500' } })).json();
    const s = follow(status.socket, '?client=idle-test');
    await waitFor(() => s.lines.length > 0);
    await waitFor(() => s.ended(), 15_000);
    expect(s.lines.at(-1)).toMatchObject({ type: 'result', reason: 'daemon shutting down' });
    await waitFor(() => !alive(status.pid), 5_000);
  });
});
