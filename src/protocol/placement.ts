/** What the placement routes take: POST /v1/placement (remember), POST /v1/proposals/:id/reject, POST /v1/review. */
import { z } from 'zod';

export const placementRequestSchema = z.strictObject({
  sentence: z.string().min(1, 'give the sentence to remember'),
  /** Decide and check, but record no proposal. */
  dry_run: z.boolean().default(false),
  /** The caller's session (an agent's), named in the proposal. */
  session_id: z.string().max(128).optional(),
});

export const rejectRequestSchema = z.strictObject({ reason: z.string().max(500).optional() });

export const reviewRequestSchema = z.strictObject({ session_id: z.string().min(1).max(128) });
