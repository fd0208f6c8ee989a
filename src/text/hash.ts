/** The hex SHA-256 of text or bytes: content identities (files, prompts, proposals, transcripts). */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';

/** node:crypto, loaded at the first hash: a process that may need none (the MCP server's first answers) does not load it to start. */
let crypto: typeof Crypto | undefined;

export function sha256(data: string | Buffer): string {
  return (crypto ??= createRequire(import.meta.url)('node:crypto') as typeof Crypto).createHash('sha256').update(data).digest('hex');
}
