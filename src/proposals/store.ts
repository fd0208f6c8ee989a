/**
 * ProposalStore: pending proposals under `$HERMES_HOME/proposals/`, one JSON file each, and
 * the fingerprints of rejected ones (`rejected.json`), so the same change is never offered
 * twice after the user said no.
 *
 * Files rather than a SessionDB table: SessionDB records what happened and is never
 * rewritten, while a proposal is a decision waiting for the user — it changes state, is read
 * and removed by hand, and must stay readable (`cat`, a text editor) without SQLite. Several
 * daemons share one home, so every change holds the folder's lock and writes atomically.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Conflict, NotFound } from '../errors/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { withLock, withLockSync } from '../storage/lock.js';
import { proposalSchema, type Change, type Proposal, type ProposalDraft } from './schema.js';
import { byCodeUnit } from '../text/order.js';

/** A change waits this long for another daemon's change to the folder; each takes milliseconds. */
const PROPOSALS_LOCK_TIMEOUT_MS = 10_000;
const REJECTED_FILE = 'rejected.json';
const ID_PATTERN = /^p-[0-9a-f]{6,12}$/;

type Rejection = { id: string; summary: string; rejectedAt: string };

export type CreateOutcome =
  | { proposal: Proposal; created: boolean }
  /** The user rejected this same change before: it is not offered again. */
  | { rejected: Rejection };

/** Text as a fingerprint compares it: case, whitespace and trailing punctuation do not make a new proposal. */
function norm(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!;:,\s]+$/, '')
    .trim();
}

/** What identifies a change whoever proposes it and however its patch happens to be laid out. */
function keyOf(change: Change, project: string | null): unknown {
  switch (change.kind) {
    case 'authority':
      return [change.kind, project, norm(change.line)];
    case 'config-rule':
      return [change.kind, project, change.rule.protect ?? null, change.rule.forbid ?? null];
    case 'memory':
      return [change.kind, change.target, change.scope, change.scope === 'repo' ? project : null, norm(change.content)];
    case 'skill-create':
      return [change.kind, change.name];
    case 'skill-edit':
      return [change.kind, change.name, norm(change.content)];
    case 'skill-archive':
      return [change.kind, change.name, change.lastUsed];
  }
}

export function fingerprintOf(change: Change, project: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify(keyOf(change, project)))
    .digest('hex')
    .slice(0, 32);
}

export class ProposalStore {
  constructor(readonly dir: string) {}

  /** The pending count status shows, re-read only when the folder changed (every write renames a file into it). */
  private counted: { stamp: string; project: string | null | undefined; n: number } | undefined;

  /**
   * How many proposals are pending (for `project`, as `list` filters): read on every status
   * answer, so the files are parsed again only after the folder changed.
   */
  pendingCount(project?: string | null): number {
    const st = statSync(this.dir, { throwIfNoEntry: false });
    if (!st) return 0;
    const stamp = `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
    if (this.counted?.stamp === stamp && this.counted.project === project) return this.counted.n;
    const n = this.list({ project }).length;
    this.counted = { stamp, project, n };
    return n;
  }

  /**
   * Records a draft as a pending proposal. A pending proposal with the same fingerprint is
   * answered instead of a second one; a rejected one's fingerprint is refused.
   */
  create(draft: ProposalDraft): CreateOutcome {
    const fingerprint = fingerprintOf(draft.change, draft.project);
    return this.locked(() => {
      const rejected = this.rejections()[fingerprint];
      if (rejected) return { rejected };
      const same = this.all().find((p) => p.status === 'pending' && p.fingerprint === fingerprint);
      if (same) return { proposal: same, created: false };
      let id: string;
      do id = `p-${randomBytes(3).toString('hex')}`;
      while (this.read(id));
      const proposal = proposalSchema.parse({ ...draft, id, createdAt: new Date().toISOString(), fingerprint, status: 'pending' });
      this.write(proposal);
      return { proposal, created: true };
    });
  }

  /** Pending proposals (or all with `all`), oldest first; `project` keeps those of this repository and those of none. */
  list(opts: { project?: string | null; all?: boolean } = {}): Proposal[] {
    return this.all()
      .filter((p) => (opts.all || p.status === 'pending') && (opts.project === undefined || p.project === null || p.project === opts.project))
      .sort((a, b) => byCodeUnit(a.createdAt, b.createdAt) || byCodeUnit(a.id, b.id));
  }

  get(id: string): Proposal {
    const p = ID_PATTERN.test(id) ? this.read(id) : undefined;
    if (!p) throw new NotFound(`No proposal ${JSON.stringify(id)}. hermesd proposals list shows the pending ones.`);
    return p;
  }

  /**
   * Marks a pending proposal accepted or rejected, with what happened. `run` is the change
   * itself (accept) and runs under the lock, so two daemons cannot accept one proposal twice;
   * when it throws, the proposal stays pending.
   */
  async decide(id: string, status: 'accepted' | 'rejected', run: (p: Proposal) => Promise<string> | string): Promise<Proposal> {
    this.get(id);
    // The change may be async (a skill commit), so it runs under an async lock of its own, not the folder's.
    return withLock(
      join(this.dir, `${id}.lock`),
      async () => {
        const p = this.get(id);
        if (p.status !== 'pending') throw new ProposalDecided(`Proposal ${id} was already ${p.status}${p.decidedAt ? ` on ${p.decidedAt}` : ''}.`);
        const outcome = await run(p);
        return this.locked(() => {
          const decided: Proposal = { ...this.get(id), status, decidedAt: new Date().toISOString(), outcome };
          this.write(decided);
          if (status === 'rejected') {
            const all = this.rejections();
            all[decided.fingerprint] = { id, summary: decided.summary, rejectedAt: decided.decidedAt! };
            writeFileAtomicSync(join(this.dir, REJECTED_FILE), JSON.stringify(all, null, 2) + '\n', 0o600);
          }
          return decided;
        });
      },
      PROPOSALS_LOCK_TIMEOUT_MS,
    );
  }

  private all(): Proposal[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names.flatMap((n) => {
      const id = n.endsWith('.json') ? n.slice(0, -5) : '';
      const p = ID_PATTERN.test(id) ? this.read(id) : undefined;
      return p ? [p] : [];
    });
  }

  /** One proposal file; a file that is not a proposal (hand-edited into something else) is skipped, never fatal. */
  private read(id: string): Proposal | undefined {
    try {
      const parsed = proposalSchema.safeParse(JSON.parse(readFileSync(join(this.dir, `${id}.json`), 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  private write(p: Proposal): void {
    writeFileAtomicSync(join(this.dir, `${p.id}.json`), JSON.stringify(p, null, 2) + '\n', 0o600);
  }

  private rejections(): Record<string, Rejection> {
    try {
      const raw = JSON.parse(readFileSync(join(this.dir, REJECTED_FILE), 'utf8')) as unknown;
      return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, Rejection>) : {};
    } catch {
      return {};
    }
  }

  private locked<T>(fn: () => T): T {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    return withLockSync(join(this.dir, '.lock'), fn, PROPOSALS_LOCK_TIMEOUT_MS);
  }
}

/** A proposal was accepted or rejected already (by this user, or by another daemon a moment ago). */
export class ProposalDecided extends Conflict {
  override readonly code = 'proposal-decided';
}
