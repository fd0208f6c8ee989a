/**
 * A kept-alive connection the daemon closes just as the client sends on it (an idle
 * connection closed at a restart, or when the daemon falls asleep and hands its socket on)
 * never carried the request to the daemon: the client sends it once more on a new connection.
 * A connection that was not reused is not retried. The server here is a plain socket server
 * that plays that race on purpose: it answers the first request of a connection with
 * keep-alive and closes the connection on the second, unanswered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { DaemonUnavailable } from '../../src/errors/index.js';

const answer = (body: string) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`;

describe('the client and a kept-alive connection closed under it', () => {
  let dir: string;
  let server: Server;
  afterEach(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Serves on a Unix socket; `onRequest(n, socket)` for the nth request of each connection, counted per connection. */
  const serve = async (onRequest: (n: number, socket: Socket, connection: number) => void) => {
    dir = mkdtempSync(join(tmpdir(), 'hd-ka-'));
    const path = join(dir, 's.sock');
    let connections = 0;
    server = createServer((socket) => {
      const connection = ++connections;
      let n = 0;
      socket.on('data', (chunk) => {
        // One request per chunk: these requests are small and sent one at a time.
        if (chunk.toString('latin1').includes('\r\n\r\n')) onRequest(++n, socket, connection);
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(path, r));
    return { path, connections: () => connections };
  };

  it('sends a request again on a new connection when the reused one is closed before any answer', async () => {
    const s = await serve((n, socket, connection) => {
      if (n === 2) socket.destroy();
      else socket.write(answer(JSON.stringify({ connection, n })));
    });
    const client = new DaemonClient(s.path, { keepAlive: true });
    try {
      expect(await client.call('GET', '/v1/context')).toEqual({ connection: 1, n: 1 });
      expect(await client.call('POST', '/v1/memory', { action: 'add' })).toEqual({ connection: 2, n: 1 });
      expect(s.connections()).toBe(2);
    } finally {
      client.close();
    }
  });

  it('does not retry a request whose connection was new', async () => {
    const s = await serve((_n, socket) => socket.destroy());
    const client = new DaemonClient(s.path, { keepAlive: true });
    try {
      await expect(client.call('GET', '/v1/context')).rejects.toBeInstanceOf(DaemonUnavailable);
      expect(s.connections()).toBe(1);
    } finally {
      client.close();
    }
  });

  it('retries once only: a second close is an error', async () => {
    const s = await serve((n, socket, connection) => {
      if (connection === 1 && n === 1) socket.write(answer('{}'));
      else socket.destroy();
    });
    const client = new DaemonClient(s.path, { keepAlive: true });
    try {
      await client.call('GET', '/v1/status');
      await expect(client.call('GET', '/v1/context')).rejects.toBeInstanceOf(DaemonUnavailable);
      expect(s.connections()).toBe(2);
    } finally {
      client.close();
    }
  });
});
