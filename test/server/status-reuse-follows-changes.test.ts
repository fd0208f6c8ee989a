/**
 * GET /v1/status serves its last answer again while nothing happened (status within
 * 1.5× a raw socket ping), so what happened must show in the very next answer: a file the
 * watcher watches (the repository's config made invalid, then fixed), a request (an events
 * stream opened), and the uptime, which is always current. Each change is made within the
 * reuse window of the answer before it, forty times (the change and the request can reach
 * the daemon in one poll, the request first). Real daemon, real socket.
 */
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { STATUS_REUSE_MS } from '../../src/server/daemon-context.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

type Status = { uptimeMs: number; config?: { ok: boolean; error?: string }; watcher?: { state?: string }; eventStreams?: Record<string, number> };

describe('a status answer reused while nothing changed', () => {
  let t: TestEnv;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('shows a watched file, a request and the uptime in the next answer', async () => {
    const repo = t.repo({ 'a.txt': 'a\n', '.hermes/config.yaml': 'rules: []\n' });
    const started = (await t.cli(['start', '--json'], { cwd: repo })).json();
    const api = new DaemonClient(started.socket);
    const status = () => api.call<Status>('GET', '/v1/status');
    for (let i = 0; (await status()).watcher?.state !== 'ready'; i++) {
      if (i > 200) throw new Error('the watcher did not get ready');
      await new Promise((r) => setTimeout(r, 50));
    }

    let within = 0;
    for (let round = 0; round < 40; round++) {
      const before = await status();
      expect(before.config).toEqual({ ok: true });
      const t0 = Date.now();
      writeFileSync(join(repo, '.hermes', 'config.yaml'), 'rules: [\n');
      const broken = await status();
      const fixedAt = Date.now();
      writeFileSync(join(repo, '.hermes', 'config.yaml'), 'rules: []\n');
      const fixed = await status();
      // Only a change made within the reuse window tells a reused answer from a fresh one.
      if (fixedAt - t0 >= STATUS_REUSE_MS) continue;
      within++;
      expect(broken.config?.ok, `round ${round}`).toBe(false);
      expect(fixed.config, `round ${round}`).toEqual({ ok: true });
    }
    // Rounds slower than the window prove nothing; a quarter at least must have been fast enough.
    expect(within).toBeGreaterThan(10);

    const quiet = await status();
    // 20 ms by the clock the daemon reads (a timer may fire a millisecond early by it).
    const from = Date.now();
    while (Date.now() - from < 20) await new Promise((r) => setTimeout(r, 20 - (Date.now() - from)));
    expect((await status()).uptimeMs, 'a reused answer did not carry the current uptime').toBeGreaterThanOrEqual(quiet.uptimeMs + 20);

    const stream = request({ socketPath: started.socket, method: 'GET', path: '/v1/events?client=reuse-test' });
    stream.on('error', () => {});
    const opened = new Promise((r) => stream.on('response', r));
    expect((await status()).eventStreams?.['reuse-test']).toBeUndefined();
    stream.end();
    await opened;
    expect((await status()).eventStreams?.['reuse-test']).toBe(1);
    stream.destroy();
  });
});
