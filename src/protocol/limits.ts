/** Limits of the local API that its clients must know too. */

/** Bodies larger than this are refused with 413: the biggest legitimate body is a skill file (1 MiB) in JSON. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The refusal of an oversized body, worded once for the daemon and for clients that refuse before sending. */
export function bodyTooLargeMessage(bytes: number, limit: number = MAX_BODY_BYTES): string {
  return `Request body is ${bytes} bytes; the limit is ${limit} bytes.`;
}
