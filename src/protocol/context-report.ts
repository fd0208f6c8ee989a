/** GET /v1/context: the system prompt a session would get now, by tier. */

/** One tier of the system prompt: its size, its hash (what a prompt cache keys on) and its text. */
export type TierReport = { bytes: number; sha256: string; text: string };

export type ContextReport = {
  authority: string[];
  tiers: { stable: TierReport; context: TierReport; volatile: TierReport };
  warnings: string[];
  /** sha256 of the joined system prompt. */
  sha256: string;
};
