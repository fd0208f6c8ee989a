/**
 * The bound on an MCP message read from stdin (src/mcp/stdio.ts): messages pass whole and in
 * order however the bytes are chunked; one over the bound is dropped and reported with its
 * request id — found at the head (`{"jsonrpc":"2.0","id":…`, as Python clients write it) or at
 * the tail (`…,"id":…}`, as the TypeScript SDK writes it) — and the next message still passes.
 */
import { describe, expect, it } from 'vitest';
import { idOf, MessageLimit, type Oversize } from '../../src/mcp/stdio.js';

async function feed(chunks: Buffer[], max: number): Promise<{ messages: string[]; dropped: Oversize[] }> {
  const dropped: Oversize[] = [];
  const limit = new MessageLimit((o) => dropped.push(o), max);
  const messages: string[] = [];
  limit.on('data', (b: Buffer) => messages.push(b.toString('utf8')));
  const done = new Promise((r) => limit.on('end', r));
  for (const c of chunks) limit.write(c);
  limit.end();
  await done;
  return { messages, dropped };
}

/** Splits `text` into pieces of `size` bytes. */
function chunked(text: string, size: number): Buffer[] {
  const all = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.subarray(i, i + size));
  return out;
}

describe('MessageLimit', () => {
  const a = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
  const b = '{"method":"tools/list","params":{},"jsonrpc":"2.0","id":"b-2"}\n';

  it('passes whole messages in order, whatever the chunking', async () => {
    for (const size of [1, 3, 7, 64, 4096]) {
      const { messages, dropped } = await feed(chunked(a + b, size), 1024);
      expect(messages, `chunks of ${size}`).toEqual([a, b]);
      expect(dropped).toEqual([]);
    }
  });

  it('drops a message over the bound, names its id (head or tail), and lets the next one through', async () => {
    const headId = `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"pad":"${'x'.repeat(5000)}"}}\n`;
    const tailId = `{"method":"tools/call","params":{"pad":"${'y'.repeat(5000)},"id":"nested"}"},"jsonrpc":"2.0","id":"req-42"}\n`;
    const noId = `{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"${'z'.repeat(5000)}"}}\n`;
    const { messages, dropped } = await feed(chunked(headId + a + tailId + noId + b, 999), 1024);
    expect(messages).toEqual([a, b]);
    expect(dropped.map((d) => d.id)).toEqual([41, 'req-42', undefined]);
    expect(dropped[0]!.bytes).toBe(Buffer.byteLength(headId));
  });

  it('idOf reads only the top-level id', () => {
    expect(idOf('{"jsonrpc":"2.0","id":"a\\"b","method":"x"', '')).toBe('a"b');
    expect(idOf('{"method":"x","params":{', '"q":{"id":7}}}\n')).toBeUndefined();
    expect(idOf('{"method":"x"', '"params":{},"jsonrpc":"2.0","id":-3}\n')).toBe(-3);
  });
});
