/**
 * When a session is reviewed. A delivered task of hermesd's agent (status completed, a source
 * that is a task) queues a review of its session; a task starting preempts a review that is
 * talking to the model; another agent's stop hook (its transcript ingested) queues its
 * session's review, unless that session was reviewed at the same message count already (a
 * session end right after the last stop). Reviews wait while the daemon is busy; each one ends
 * with the curator's look at unused skills.
 */
import type { HermesConfig } from '../config/schema.js';
import type { ProposalStore } from '../proposals/store.js';
import type { SessionDB } from '../sessions/db.js';
import type { SkillStore } from '../skills/store.js';
import type { Logger } from '../storage/log.js';
import type { PlacementDeps } from '../placement/place.js';
import { curate } from './curator.js';
import { ReviewQueue } from './queue.js';
import { reviewSession } from './review.js';

/** Sources whose sessions are not reviewed: a review's own, and evidence that is no task. */
const NOT_REVIEWED = new Set(['review']);

/** Reviewed sessions remembered (to skip a second review of the same evidence): a day's sessions, a few bytes each. */
const REVIEWED_KEPT = 1000;

export type ReviewerPorts = {
  config: () => HermesConfig;
  sessions: () => SessionDB;
  skills: SkillStore;
  proposals: ProposalStore;
  placement: (config: HermesConfig) => PlacementDeps;
  /** Work the daemon is doing that a review must not slow down (hook calls, requests). */
  busy: () => boolean;
  log: Logger;
};

export class Reviewer {
  readonly queue: ReviewQueue;
  private runningTasks = 0;
  /** Sessions reviewed, by id, with their message count then (newest last; at most REVIEWED_KEPT). */
  private readonly reviewedAt = new Map<string, number>();

  constructor(private readonly ports: ReviewerPorts) {
    const configOr = <T>(pick: (c: HermesConfig) => T) => pick(ports.config());
    this.queue = new ReviewQueue({
      run: (job, signal) => this.review(job.sessionId, signal),
      busy: () => this.runningTasks > 0 || ports.busy(),
      deferMs: () => configOr((c) => c.review.deferMs),
      maxQueued: () => configOr((c) => c.review.maxQueued),
      onSkip: (job, why) => ports.log.info('review skipped', { sessionId: job.sessionId, why }),
      onError: (job, err) => ports.log.warn('review failed', { sessionId: job.sessionId, error: (err as Error)?.message ?? String(err) }),
    });
  }

  /** Queues a review of a finished session (the API's POST /v1/review, a task's end, an agent's stop hook). */
  enqueue(sessionId: string, source: string): void {
    this.queue.enqueue(sessionId, source);
  }

  /** Another agent delivered a turn or ended its session. */
  onAgentStopped(e: { sessionId: string; source: string }): void {
    if (!this.enabled()) return;
    const messages = this.ports.sessions().getSession(e.sessionId)?.messageCount;
    if (messages !== undefined && this.reviewedAt.get(e.sessionId) === messages) return;
    this.enqueue(e.sessionId, e.source);
  }

  onTaskStarted(): void {
    this.runningTasks++;
    this.queue.preempt();
  }

  onTaskEnded(e: { sessionId: string | null; source: string; status: string }): void {
    this.runningTasks = Math.max(0, this.runningTasks - 1);
    if (this.enabled() && e.status === 'completed' && e.sessionId && !NOT_REVIEWED.has(e.source)) this.enqueue(e.sessionId, e.source);
  }

  close(): void {
    this.queue.close();
  }

  private async review(sessionId: string, signal: AbortSignal): Promise<void> {
    const config = this.ports.config();
    const sessions = this.ports.sessions();
    const messages = sessions.getSession(sessionId)?.messageCount;
    const report = await reviewSession({ ...this.ports.placement(config), sessions }, sessionId, config.review, signal);
    if (messages !== undefined) this.rememberReviewed(sessionId, messages);
    const archived = await curate(this.ports.skills, this.ports.proposals, config.skills.archiveAfterDays);
    this.ports.log.info('review done', { ...report, ...(archived.length ? { archiveProposals: archived } : {}) });
  }

  private enabled(): boolean {
    try {
      return this.ports.config().review.enabled;
    } catch {
      // an invalid config reviews nothing until it is fixed
      return false;
    }
  }

  private rememberReviewed(sessionId: string, messages: number): void {
    this.reviewedAt.delete(sessionId);
    this.reviewedAt.set(sessionId, messages);
    for (const id of this.reviewedAt.keys()) {
      if (this.reviewedAt.size <= REVIEWED_KEPT) break;
      this.reviewedAt.delete(id);
    }
  }
}
