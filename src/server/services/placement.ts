/**
 * The daemon's placement: `remember` (POST /v1/placement and the agent's tool), the pending
 * proposals and their accept / reject, and the post-task review queue. A delivered task of
 * hermesd's agent ('task-ended' with status completed) queues a review of its session; a task
 * starting ('task-started') preempts a review that is talking to the model. Another agent's
 * stop hook ('agent-stopped', once its transcript is ingested) queues its session's review too.
 */
import type { HermesConfig } from '../../config/schema.js';
import { Conflict } from '../../errors/index.js';
import { createModelClient, modelSettings } from '../../agent/model.js';
import { structuredModel } from '../../agent/structured.js';
import type { Memories } from '../../memory/memories.js';
import { projectId, proposalsDir } from '../../paths/index.js';
import type { StructuredModel } from '../../placement/model.js';
import { placeSentence, type PlaceOptions, type PlacementAnswer, type PlacementDeps } from '../../placement/place.js';
import { applyProposal } from '../../proposals/apply.js';
import type { Proposal } from '../../proposals/schema.js';
import { ProposalStore } from '../../proposals/store.js';
import { curate } from '../../review/curator.js';
import { ReviewQueue } from '../../review/queue.js';
import { reviewSession } from '../../review/review.js';
import type { SessionDB } from '../../sessions/db.js';
import type { SkillStore } from '../../skills/store.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';
import type { ConfigService } from './config.js';
import type { AgentStopped } from '../../other-agents/sessions.js';

/** What a task's end says, as the task runner emits it on ctx.events. */
export type TaskEnded = { sessionId: string | null; source: string; status: string };

/** Sources whose sessions are not reviewed: a review's own, and evidence that is no task. */
const NOT_REVIEWED = new Set(['review']);

/** Reviewed sessions remembered (to skip a second review of the same evidence): a day's sessions, a few bytes each. */
const REVIEWED_KEPT = 1000;

type ModelChoice = { model?: StructuredModel; noModel?: string };

export class PlacementService {
  readonly proposals: ProposalStore;
  readonly queue: ReviewQueue;
  readonly project: string;
  private runningTasks = 0;
  private structured: { key: string; model: StructuredModel } | undefined;
  /** Sessions reviewed, by id, with their message count then (newest last; at most REVIEWED_KEPT). */
  private readonly reviewedAt = new Map<string, number>();

  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: { config: ConfigService; memory: Memories; skills: SkillStore; sessions: () => SessionDB },
  ) {
    this.proposals = new ProposalStore(proposalsDir(ctx.home));
    this.project = projectId(ctx.paths.commonDir);
    this.queue = new ReviewQueue({
      run: (job, signal) => this.review(job.sessionId, signal),
      busy: () => this.runningTasks > 0 || ctx.busy > 0,
      deferMs: () => this.configOr((c) => c.review.deferMs),
      maxQueued: () => this.configOr((c) => c.review.maxQueued),
      onSkip: (job, why) => ctx.log.info('review skipped', { sessionId: job.sessionId, why }),
      onError: (job, err) => ctx.log.warn('review failed', { sessionId: job.sessionId, error: (err as Error)?.message ?? String(err) }),
    });
  }

  private configOr<T>(pick: (c: HermesConfig) => T): T {
    return pick(this.deps.config.get());
  }

  /** The model for placement and review, or why the rules decide (docs/placement.md). */
  private modelFor(config: HermesConfig): ModelChoice {
    const mode = config.placement.classifier;
    if (mode === 'rules') return { noModel: 'The rule-based classifier answered (placement.classifier: rules).' };
    const env = this.ctx.env;
    const configured = Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY || config.model.baseUrl || config.model.apiKey);
    if (mode === 'auto' && !configured) {
      return { noModel: 'No model endpoint is configured (OPENAI_BASE_URL or model.baseUrl), so the rule-based classifier answered (docs/placement.md lists its rules).' };
    }
    // One request per answer, not a stream: nothing is shown while it is written.
    const settings = { ...modelSettings(config.model, env), stream: false };
    const key = JSON.stringify(settings);
    if (this.structured?.key !== key) this.structured = { key, model: structuredModel(createModelClient(settings)) };
    return { model: this.structured.model };
  }

  private placementDeps(config: HermesConfig): PlacementDeps {
    return {
      root: this.ctx.root,
      project: this.project,
      memories: this.deps.memory,
      skills: this.deps.skills,
      proposals: this.proposals,
      config,
      ...this.modelFor(config),
    };
  }

  /** remember: the owner of `sentence`, the reasons, and a pending proposal for a durable owner. */
  place(sentence: string, opts: Omit<PlaceOptions, 'source' | 'timeoutMs'> & { source?: 'remember' | 'review' } = {}): Promise<PlacementAnswer> {
    const config = this.deps.config.get();
    return placeSentence(this.placementDeps(config), sentence, { source: 'remember', timeoutMs: config.placement.timeoutMs, ...opts });
  }

  /** Pending proposals of this repository and of none (USER.md, skills); all of them, decided too, with `all`. */
  list(all = false): Proposal[] {
    return this.proposals.list({ project: this.project, all });
  }

  async accept(id: string): Promise<Proposal> {
    return this.proposals.decide(id, 'accepted', (p) => {
      this.ownedHere(p);
      return applyProposal(p, { root: this.ctx.root, memories: this.deps.memory, skills: this.deps.skills });
    });
  }

  async reject(id: string, reason?: string): Promise<Proposal> {
    return this.proposals.decide(id, 'rejected', () => `Rejected${reason ? `: ${reason}` : ''}; the same change will not be proposed again.`);
  }

  /** A proposal for another repository is accepted there (its work tree is the one to change). */
  private ownedHere(p: Proposal): void {
    if (p.project !== null && p.project !== this.project) {
      throw new Conflict(`Proposal ${p.id} belongs to the repository at ${p.repo}; accept it there (cd ${p.repo} && hermesd proposals accept ${p.id}).`);
    }
  }

  /** Queues a review of a finished session (the API's POST /v1/review, a task's end, an agent's stop hook). */
  enqueueReview(sessionId: string, source: string): void {
    this.queue.enqueue(sessionId, source);
  }

  private async review(sessionId: string, signal: AbortSignal): Promise<void> {
    const config = this.deps.config.get();
    const sessions = this.deps.sessions();
    const messages = sessions.getSession(sessionId)?.messageCount;
    const deps = { ...this.placementDeps(config), sessions };
    const report = await reviewSession(deps, sessionId, config.review, signal);
    if (messages !== undefined) this.rememberReviewed(sessionId, messages);
    const archived = await curate(this.deps.skills, this.proposals, config.skills.archiveAfterDays);
    this.ctx.log.info('review done', { ...report, ...(archived.length ? { archiveProposals: archived } : {}) });
  }

  /**
   * Another agent delivered a turn or ended its session (its stop hook; transcript ingested):
   * its session is reviewed like a task of hermesd's agent. A session reviewed at this many
   * messages already is not reviewed again (a session end right after the last stop).
   */
  onAgentStopped(e: AgentStopped): void {
    if (!this.reviewEnabled()) return;
    const messages = this.deps.sessions().getSession(e.sessionId)?.messageCount;
    if (messages !== undefined && this.reviewedAt.get(e.sessionId) === messages) return;
    this.enqueueReview(e.sessionId, e.source);
  }

  private reviewEnabled(): boolean {
    try {
      return this.deps.config.get().review.enabled;
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

  /** The task runner's events: a delivered task queues its review; a starting task preempts one. */
  onTaskStarted(): void {
    this.runningTasks++;
    this.queue.preempt();
  }

  onTaskEnded(e: TaskEnded): void {
    this.runningTasks = Math.max(0, this.runningTasks - 1);
    if (this.reviewEnabled() && e.status === 'completed' && e.sessionId && !NOT_REVIEWED.has(e.source)) this.enqueueReview(e.sessionId, e.source);
  }
}

export function createPlacementService(ctx: DaemonContext, deps: ConstructorParameters<typeof PlacementService>[1]): Built<PlacementService> {
  const service = new PlacementService(ctx, deps);
  const started = () => service.onTaskStarted();
  const ended = (e: TaskEnded) => service.onTaskEnded(e);
  ctx.events.on('task-started', started);
  ctx.events.on('task-ended', ended);
  const stopped = (e: AgentStopped) => service.onAgentStopped(e);
  ctx.events.on('agent-stopped', stopped);
  ctx.report('review', () => service.queue.counts());
  ctx.report('proposals', () => ({ pending: service.proposals.pendingCount(service.project) }));
  return {
    value: service,
    close: () => {
      ctx.events.off('task-started', started);
      ctx.events.off('task-ended', ended);
      ctx.events.off('agent-stopped', stopped);
      service.queue.close();
    },
  };
}
