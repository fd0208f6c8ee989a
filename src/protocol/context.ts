/** GET /v1/context: the system prompt a session would get now, by tier. */
import type { TierReport } from '../context/tiers.js';

export type ContextReport = {
  authority: string[];
  tiers: { stable: TierReport; context: TierReport; volatile: TierReport };
  warnings: string[];
  /** sha256 of the joined system prompt. */
  sha256: string;
};
