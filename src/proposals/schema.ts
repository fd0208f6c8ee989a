/**
 * A proposal: one change to an owner of information, written down and held until the user
 * accepts it (DESIGN.md §8: a proposal changes nothing until accepted). Made by `remember`,
 * by the post-task review and by the skill curator; stored one JSON file each.
 */
import { z } from 'zod';
import { ownerSchema, reasonsSchema } from '../protocol/owners.js';

export const PROPOSAL_SOURCES = ['remember', 'review', 'curator'] as const;
export const PROPOSAL_STATES = ['pending', 'accepted', 'rejected'] as const;

/** A rule for `.hermes/config.yaml`, in the config's own shape (checked by its schema when accepted). */
const configRuleSchema = z.strictObject({
  id: z.string(),
  message: z.string(),
  protect: z.array(z.string()).optional(),
  forbid: z.string().optional(),
});

export const changeSchema = z.discriminatedUnion('kind', [
  /** A patch to the repository's authority file in force (or a new AGENTS.md), applied to the work tree, never committed. */
  z.strictObject({ kind: z.literal('authority'), file: z.string(), patch: z.string(), line: z.string() }),
  /** A rule added to `.hermes/config.yaml`, shown as a patch, applied to the work tree, never committed. */
  z.strictObject({ kind: z.literal('config-rule'), file: z.string(), rule: configRuleSchema, patch: z.string() }),
  /** One memory entry, added through the store's own write path (scan, budget, lock). */
  z.strictObject({ kind: z.literal('memory'), target: z.enum(['memory', 'user']), scope: z.enum(['global', 'repo']), content: z.string() }),
  /** A new user skill (one commit in the skills repository). */
  z.strictObject({ kind: z.literal('skill-create'), name: z.string(), category: z.string().optional(), content: z.string() }),
  /** A new SKILL.md for an existing skill, made against the version whose hash is `baseSha256` (one commit). */
  z.strictObject({ kind: z.literal('skill-edit'), name: z.string(), baseSha256: z.string(), content: z.string(), patch: z.string() }),
  /** A skill nobody used for a while moved to the skills repository's `.archive/` (one commit; `skills revert` undoes it). */
  z.strictObject({ kind: z.literal('skill-archive'), name: z.string(), lastUsed: z.string().nullable(), unusedDays: z.number() }),
]);
export type Change = z.infer<typeof changeSchema>;

export const proposalSchema = z.strictObject({
  id: z.string(),
  owner: ownerSchema.exclude(['none']),
  summary: z.string(),
  source: z.enum(PROPOSAL_SOURCES),
  createdAt: z.string(),
  /** The work tree it was made in; null for changes that belong to no repository (USER.md, skills). */
  repo: z.string().nullable(),
  /** The repository's project id (its worktrees share it); null as `repo`. */
  project: z.string().nullable(),
  /** What it came from: the sentence given to `remember`, or the session a review read. */
  sentence: z.string().optional(),
  sessionId: z.string().optional(),
  reasons: reasonsSchema.optional(),
  classifier: z.enum(['model', 'rules']).optional(),
  fingerprint: z.string(),
  status: z.enum(PROPOSAL_STATES),
  decidedAt: z.string().optional(),
  /** What accepting it did (the commit, the file changed), or why it was rejected. */
  outcome: z.string().optional(),
  change: changeSchema,
});
export type Proposal = z.infer<typeof proposalSchema>;

/** What a maker hands the store: the store adds the id, time, fingerprint and state. */
export type ProposalDraft = Omit<Proposal, 'id' | 'createdAt' | 'fingerprint' | 'status' | 'decidedAt' | 'outcome'>;

/** One line of `proposals list --json` (DESIGN.md §3). */
export type ProposalSummary = Pick<Proposal, 'id' | 'owner' | 'summary' | 'source' | 'createdAt' | 'status'> & { kind: Change['kind']; repo: string | null };

export function summaryOf(p: Proposal): ProposalSummary {
  return { id: p.id, owner: p.owner, summary: p.summary, source: p.source, createdAt: p.createdAt, status: p.status, kind: p.change.kind, repo: p.repo };
}
