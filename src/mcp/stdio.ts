/**
 * stdin for the SDK's stdio transport, one whole message per chunk, with a bound on a
 * message's size. The SDK's own buffer closes the session when it overflows (10 MB by
 * default); here a message over MCP_MESSAGE_MAX_BYTES is dropped, its request answered with
 * a JSON-RPC error, and the session goes on.
 */
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Largest message read from the client. The daemon takes request bodies up to 4 MiB (a 1 MiB
 * skill file in JSON, escaped); twice that leaves room for the envelope and escaping, and
 * anything bigger cannot be a call hermesd would accept.
 */
export const MCP_MESSAGE_MAX_BYTES = 8 * 1024 * 1024;
/** Bytes kept from each end of a dropped message to find its request id. */
const ID_WINDOW_BYTES = 512;

export type Oversize = { bytes: number; id: string | number | undefined };

/** The JSON-RPC id of a message cut short: clients put it first (`{"jsonrpc":"2.0","id":…`) or last (`…,"id":…}`). */
export function idOf(head: string, tail: string): string | number | undefined {
  const value = '("(?:[^"\\\\]|\\\\.)*"|-?\\d+)';
  const m =
    new RegExp(`^\\s*\\{\\s*"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*"id"\\s*:\\s*${value}`).exec(head) ??
    new RegExp(`[,{]\\s*"id"\\s*:\\s*${value}\\s*\\}\\s*$`).exec(tail);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return undefined;
  }
}

export class MessageLimit extends Transform {
  private parts: Buffer[] = [];
  private size = 0;
  private dropping = false;
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);

  constructor(
    private readonly onOversize: (o: Oversize) => void,
    private readonly maxBytes = MCP_MESSAGE_MAX_BYTES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        if (start < chunk.length) this.append(chunk.subarray(start));
        break;
      }
      this.append(chunk.subarray(start, nl + 1));
      this.endLine();
      start = nl + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (!this.dropping && this.size > 0) this.push(Buffer.concat(this.parts));
    done();
  }

  private append(part: Buffer): void {
    this.size += part.length;
    if (this.dropping) {
      this.tail = Buffer.concat([this.tail, part]).subarray(-ID_WINDOW_BYTES);
      return;
    }
    this.parts.push(part);
    if (this.size <= this.maxBytes) return;
    this.dropping = true;
    const line = Buffer.concat(this.parts);
    // Copies: the message itself is let go.
    this.head = Buffer.from(line.subarray(0, ID_WINDOW_BYTES));
    this.tail = Buffer.from(line.subarray(-ID_WINDOW_BYTES));
    this.parts = [];
  }

  private endLine(): void {
    if (this.dropping) {
      this.onOversize({ bytes: this.size, id: idOf(this.head.toString('utf8'), this.tail.toString('utf8')) });
    } else if (this.size > 1 || this.parts[0]?.[0] !== 10) {
      this.push(this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts));
    }
    this.parts = [];
    this.size = 0;
    this.dropping = false;
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
  }
}
