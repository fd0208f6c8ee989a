/** The hex SHA-256 of text or bytes: content identities (files, prompts, proposals, transcripts); random names. */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * node:crypto, loaded at the first use: a process that may need none (the MCP server's first
 * answers, `hermesd status --json`) does not load it to start.
 */
let crypto: typeof Crypto | undefined;
const nodeCrypto = () => (crypto ??= createRequire(import.meta.url)('node:crypto') as typeof Crypto);

export function sha256(data: string | Buffer): string {
  return nodeCrypto().createHash('sha256').update(data).digest('hex');
}

/** `bytes` random bytes in hex: a name no other process picks (temporary files beside their target). */
export function randomHex(bytes: number): string {
  return nodeCrypto().randomBytes(bytes).toString('hex');
}
