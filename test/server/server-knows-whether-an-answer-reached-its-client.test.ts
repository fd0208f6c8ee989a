/**
 * A post-commit notice is kept for the next hook when its answer does not reach the client.
 * The daemon cannot wait to read the client's close before writing (the audit may end first):
 * `endAnswer` says whether the kernel took the last bytes for a connection the client still
 * held. Here the server's loop is held busy while a real client process reads the first line,
 * closes and says so; only then does the server write — before it has read the close.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endAnswer } from '../../src/server/route.js';

const dir = mkdtempSync(join(tmpdir(), 'hermesd-reach-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A client that reads until `until` appears, then closes and creates `marker`; resolves when it exits. */
function client(socket: string, until: string, marker: string): Promise<string> {
  const code = `
    const fs = require('fs');
    const c = require('net').connect(${JSON.stringify(socket)}, () => c.write('POST / HTTP/1.0\\r\\nContent-Length: 0\\r\\n\\r\\n'));
    let got = '';
    c.on('data', (d) => { got += d; if (got.includes(${JSON.stringify(until)})) { c.destroy(); fs.writeFileSync(${JSON.stringify(marker)}, ''); process.stdout.write(got); } });
    c.on('close', () => process.exit(0));`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', () => resolve(out));
  });
}

/** Serves one request: the first line, then (once `ready()` holds, the loop kept busy until then) the last bytes through endAnswer. */
async function answerOnce(name: string, ready: () => boolean, until: string): Promise<{ reached: boolean; read: string }> {
  const socket = join(dir, `${name}.sock`);
  const marker = join(dir, `${name}.closed`);
  let reached: Promise<boolean> | undefined;
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('hello\n');
    // After the first line has gone out, and before the loop turns again to read a close.
    setImmediate(() => {
      const deadline = Date.now() + 60_000;
      while (!ready() && Date.now() < deadline) {
        // the client's close is not read while this runs
      }
      reached = endAnswer(res, 'the notice\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  try {
    const read = await client(socket, until, marker);
    for (let i = 0; i < 600 && !reached; i++) await new Promise((r) => setTimeout(r, 10));
    expect(reached, 'the server never wrote its answer').toBeDefined();
    return { reached: await reached!, read };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('whether an answer reached its client', () => {
  it('an answer written after its client closed, before the server read the close, did not reach it', async () => {
    const marker = join(dir, 'gone.closed');
    const { reached, read } = await answerOnce('gone', () => existsSync(marker), 'hello');
    expect(read, 'the client did not read the first line').toContain('hello');
    expect(reached, 'an answer written to a client that had closed was taken as delivered: its notice would be lost').toBe(false);
  }, 90_000);

  it('an answer the client read reached it', async () => {
    const { reached, read } = await answerOnce('read', () => true, 'the notice');
    expect(read, 'the client did not read the answer').toContain('the notice');
    expect(reached, 'an answer the client read was taken as lost: its notice would be said twice').toBe(true);
  }, 90_000);

  it('a response already ended or destroyed did not reach anyone', async () => {
    const socket = join(dir, 'ended.sock');
    const results: boolean[] = [];
    const server = createServer((req, res) => {
      req.resume();
      res.end('done\n');
      void endAnswer(res, 'again\n').then((r) => results.push(r));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      await client(socket, 'done', join(dir, 'ended.closed'));
      for (let i = 0; i < 600 && !results.length; i++) await new Promise((r) => setTimeout(r, 10));
      expect(results, 'a second end of an ended answer was taken as delivered').toEqual([false]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 90_000);
});
