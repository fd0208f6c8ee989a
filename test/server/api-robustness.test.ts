import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiServer } from '../../src/server/http.js';
import type { Route } from '../../src/server/route.js';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { DaemonContext } from '../../src/server/daemon-context.js';
import { silentLogger } from '../../src/storage/log.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

/** Sends raw bytes on the socket and resolves with everything the server answers before closing. */
function rawExchange(socket: string, bytes: string | Buffer, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(socket);
    let out = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve(out);
    }, waitMs);
    s.on('connect', () => s.write(bytes));
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    s.on('error', () => undefined);
  });
}

describe('the real daemon under abuse keeps serving', () => {
  let t: TestEnv;
  let socket: string;
  let client: DaemonClient;
  beforeAll(async () => {
    t = makeEnv();
    const repo = t.repo();
    const s = (await t.cli(['start', '--json'], { cwd: repo })).json();
    socket = s.socket;
    client = new DaemonClient(socket);
  });
  afterAll(async () => {
    await t.cleanup();
  });
  afterEach(async () => {
    // After every abuse the daemon still answers.
    const s = await client.call<{ pid: number }>('GET', '/v1/status');
    expect(s.pid).toBeGreaterThan(0);
  });

  it('answers malformed JSON with a 400 JSON error', async () => {
    const r = await rawExchange(
      socket,
      'POST /v1/shutdown HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{bad}',
    );
    expect(r).toMatch(/^HTTP\/1.1 400/);
    expect(JSON.parse(r.slice(r.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'bad-request', message: 'Request body is not valid JSON.' } });
  });

  it('answers an unknown route with 404 and a wrong method with 405', async () => {
    const r = await client.raw('GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).error.code).toBe('not-found');
    const m = await client.raw('DELETE', '/v1/status');
    expect(m.status).toBe(405);
  });

  it('refuses an oversized body with 413', async () => {
    // Declared too large: refused before the body is read.
    const declared = await rawExchange(
      socket,
      `POST /v1/shutdown HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n{"a":`,
    );
    expect(declared).toMatch(/^HTTP\/1.1 413/);
    expect(declared).toContain('payload-too-large');
    // Sent chunked without a length: refused once the limit is crossed.
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const body = Buffer.concat(Array.from({ length: 5 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])));
    const chunked = await rawExchange(
      socket,
      Buffer.concat([Buffer.from('POST /v1/shutdown HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n'), body, Buffer.from('0\r\n\r\n')]),
    );
    expect(chunked === '' || /^HTTP\/1.1 413/.test(chunked)).toBe(true);
  });

  it('closes garbage bytes with a 400 and keeps going', async () => {
    const r = await rawExchange(socket, Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10]));
    expect(r).toMatch(/^HTTP\/1.1 400/);
    expect(r).toContain('malformed-request');
  });

  it('is not blocked by a client that connects and never speaks', async () => {
    const silent = connect(socket);
    await new Promise((r) => silent.once('connect', r));
    const s = await client.call<{ pid: number }>('GET', '/v1/status', undefined, { timeoutMs: 2000 });
    expect(s.pid).toBeGreaterThan(0);
    silent.destroy();
  });

  it('serves 64 concurrent requests', async () => {
    const results = await Promise.all(Array.from({ length: 64 }, () => client.call<{ pid: number }>('GET', '/v1/status')));
    expect(new Set(results.map((r) => r.pid)).size).toBe(1);
    expect(results).toHaveLength(64);
  });

  it('works with curl --unix-socket', async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync('curl', ['-s', '--unix-socket', socket, 'http://hermesd/v1/status'], { encoding: 'utf8' });
    expect(JSON.parse(out)).toMatchObject({
      pid: expect.any(Number),
      version: expect.any(String),
      root: expect.any(String),
      socket,
      startedAt: expect.any(String),
    });
  });
});

describe('the API server contains handler failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hd-api-'));
  const socket = join(dir, 'api.sock');
  const paths = { root: dir, gitDir: dir, commonDir: dir, runtimeDir: dir, daemonJson: '', logFile: '', lockFile: '', socketDir: dir, socket };
  const ctx = new DaemonContext(paths, dir, 'test', silentLogger);
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/v1/boom',
      handler: () => {
        throw new Error('kaboom');
      },
    },
    {
      method: 'GET',
      path: '/v1/async-boom',
      handler: async () => {
        await Promise.resolve();
        throw new TypeError('async kaboom');
      },
    },
    { method: 'GET', path: '/v1/ok/:name', handler: ({ params }) => ({ hello: params.name }) },
    { method: 'POST', path: '/v1/typed', body: z.object({ n: z.number().int() }).strict(), handler: ({ body }) => body },
    {
      method: 'POST',
      path: '/v1/stream',
      stream: true,
      handler: async (_ctx, emit) => {
        emit({ type: 'progress', step: 1 });
        emit({ type: 'progress', step: 2 });
        return { answer: 42 };
      },
    },
    {
      method: 'POST',
      path: '/v1/stream-fail',
      stream: true,
      handler: async (_ctx, emit) => {
        emit({ type: 'progress', step: 1 });
        throw new Error('stream kaboom');
      },
    },
  ];
  const api = createApiServer(ctx, routes, { headersTimeoutMs: 300, requestTimeoutMs: 600 });
  const client = new DaemonClient(socket);
  beforeAll(() => new Promise<void>((r) => api.server.listen(socket, r)));
  afterAll(() => {
    api.server.close();
    api.abortAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('turns a thrown error into a 500 JSON error and keeps serving', async () => {
    for (const path of ['/v1/boom', '/v1/async-boom']) {
      const r = await client.raw('GET', path);
      expect(r.status).toBe(500);
      expect(JSON.parse(r.text).error.code).toBe('internal');
    }
    expect(await client.call('GET', '/v1/ok/world')).toEqual({ hello: 'world' });
  });

  it('validates bodies with a message naming the field', async () => {
    const r = await client.raw('POST', '/v1/typed', { n: 'x' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error.message).toContain('request body n:');
    const extra = await client.raw('POST', '/v1/typed', { n: 1, m: 2 });
    expect(extra.status).toBe(400);
    expect(await client.call('POST', '/v1/typed', { n: 3 })).toEqual({ n: 3 });
  });

  it('streams NDJSON events with the result as the last line', async () => {
    const events: unknown[] = [];
    const result = await client.stream('POST', '/v1/stream', {}, (e) => events.push(e));
    expect(events).toEqual([
      { type: 'progress', step: 1 },
      { type: 'progress', step: 2 },
    ]);
    expect(result).toEqual({ type: 'result', answer: 42 });
    const raw = await client.raw('POST', '/v1/stream', {});
    expect(
      raw.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['progress', 'progress', 'result']);
  });

  it('ends a failing stream with an error line', async () => {
    await expect(client.stream('POST', '/v1/stream-fail', {}, () => undefined)).rejects.toThrow('stream kaboom');
  });

  it('closes a connection that never sends its headers', async () => {
    const started = Date.now();
    const out = await rawExchange(socket, Buffer.alloc(0), 5000);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(out === '' || /^HTTP\/1.1 408/.test(out)).toBe(true);
  });
});
