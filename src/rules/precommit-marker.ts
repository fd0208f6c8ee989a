/**
 * The record that the pre-commit hook judged a commit, kept in the daemon's memory (never in
 * a file an agent could write). Two kinds of entry per git dir:
 *
 * - attempts: one per `git commit` (id from src/githooks/attempt.ts), with every tree the
 *   pre-commit judged in it (the first verdict, then the re-checks at the end of the hook
 *   chain after a formatter re-staged files). post-commit asks by attempt id, so a record
 *   belongs to one attempt: a commit rejected by commit-msg never vouches for the next one.
 * - commits: once post-commit has matched a commit to its attempt, "commit X (tree T) was
 *   judged" is kept, for the agent guard that asks after the command ended.
 *
 * The guard asks by content (`precommitPassed(gitDir, tree, {sinceMs})`): a tree a pre-commit
 * judged since the command started. Records expire after PRECOMMIT_PASS_TTL_MS and die with
 * the daemon; a daemon that restarts mid-commit says it cannot tell (see the post-commit audit).
 */

/** A record older than this no longer vouches for a commit (a commit follows its hook within seconds; agent commands within minutes). */
export const PRECOMMIT_PASS_TTL_MS = 60 * 60 * 1000;
/** Entries kept per git dir: enough for interleaved commits in one worktree. */
const MAX_ENTRIES = 200;

export type AttemptRecord = {
  attempt: string;
  /** Trees the pre-commit judged in this attempt, oldest first; the last is the current verdict. */
  trees: string[];
  at: number;
  /** The commit post-commit matched to this attempt. */
  commit?: string;
};

type Ledger = { attempts: AttemptRecord[]; trees: Array<{ tree: string; at: number }> };

const ledgers = new Map<string, Ledger>();

function ledgerOf(gitDir: string, now: number): Ledger {
  let l = ledgers.get(gitDir);
  if (!l) {
    l = { attempts: [], trees: [] };
    ledgers.set(gitDir, l);
  }
  const fresh = (at: number) => now - at < PRECOMMIT_PASS_TTL_MS;
  l.attempts = l.attempts.filter((a) => fresh(a.at)).slice(-MAX_ENTRIES);
  l.trees = l.trees.filter((t) => fresh(t.at)).slice(-MAX_ENTRIES);
  return l;
}

/**
 * The pre-commit judged `tree` and let it through. With `attempt`, the tree joins that
 * attempt's record (created on its first verdict).
 */
export function recordPrecommitPass(gitDir: string, tree: string, now: number = Date.now(), opts: { attempt?: string } = {}): void {
  const l = ledgerOf(gitDir, now);
  l.trees.push({ tree, at: now });
  if (!opts.attempt) return;
  let rec = l.attempts.find((a) => a.attempt === opts.attempt);
  if (!rec) {
    rec = { attempt: opts.attempt, trees: [], at: now };
    l.attempts.push(rec);
  }
  if (rec.trees.at(-1) !== tree) rec.trees.push(tree);
  rec.at = now;
}

/** What the pre-commit of this attempt judged, if it ran (and this daemon saw it). */
export function precommitOfAttempt(gitDir: string, attempt: string, now: number = Date.now()): AttemptRecord | undefined {
  return ledgerOf(gitDir, now).attempts.find((a) => a.attempt === attempt);
}

/** post-commit matched `commit` to the attempt whose pre-commit ran: its tree is vouched for from now on. */
export function recordJudgedCommit(gitDir: string, attempt: string, commit: string, tree: string, now: number = Date.now()): void {
  const l = ledgerOf(gitDir, now);
  const rec = l.attempts.find((a) => a.attempt === attempt);
  if (rec) rec.commit = commit;
  l.trees.push({ tree, at: now });
}

/** Whether a pre-commit passed `tree` at or after `sinceMs` (and within the TTL): what the agent guard asks. */
export function precommitPassed(gitDir: string, tree: string, opts: { sinceMs?: number; now?: number } = {}): boolean {
  const now = opts.now ?? Date.now();
  const since = Math.max(opts.sinceMs ?? 0, now - PRECOMMIT_PASS_TTL_MS);
  // Millisecond clocks of two callers: allow a little skew.
  return ledgerOf(gitDir, now).trees.some((p) => p.tree === tree && p.at >= since - 1000);
}
