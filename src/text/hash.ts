/** The hex SHA-256 of text or bytes: content identities (files, prompts, proposals, transcripts). */
import { createHash } from 'node:crypto';

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
