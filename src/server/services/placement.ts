/**
 * The daemon's placement, composed: `remember` (POST /v1/placement and the agent's tool), the
 * pending proposals and their accept / reject, and the post-task review queue. What decides
 * lives with its noun — the owner of a sentence in placement/place.ts, which classifier
 * answers in placement/model-choice.ts, when a session is reviewed in review/reviewer.ts, a
 * proposal's change in proposals/apply.ts; this service wires them to the stores and to the
 * daemon's events.
 */
import type { HermesConfig } from '../../config/schema.js';
import type { Memories } from '../../memory/memories.js';
import { projectId, proposalsDir } from '../../paths/index.js';
import { PlacementModel } from '../../placement/model-choice.js';
import { placeSentence, type PlaceOptions, type PlacementAnswer, type PlacementDeps } from '../../placement/place.js';
import { applyProposal, refuseIfElsewhere } from '../../proposals/apply.js';
import type { Proposal } from '../../proposals/schema.js';
import { ProposalStore } from '../../proposals/store.js';
import type { ReviewQueue } from '../../review/queue.js';
import { Reviewer } from '../../review/reviewer.js';
import type { SessionDB } from '../../sessions/db.js';
import type { SkillStore } from '../../skills/store.js';
import type { AgentStopped } from '../../other-agents/sessions.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';
import type { ConfigInForce } from './config-in-force.js';

/** What a task's end says, as the task runner emits it on ctx.events. */
export type TaskEnded = { sessionId: string | null; source: string; status: string };

type PlacementStores = { config: ConfigInForce; memory: Memories; skills: SkillStore; sessions: () => SessionDB };

export class PlacementService {
  readonly proposals: ProposalStore;
  readonly reviewer: Reviewer;
  readonly project: string;
  private readonly model: PlacementModel;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: PlacementStores,
  ) {
    this.proposals = new ProposalStore(proposalsDir(ctx.home));
    this.project = projectId(ctx.paths.commonDir);
    this.model = new PlacementModel(ctx.env);
    this.reviewer = new Reviewer({
      config: () => deps.config.get(),
      sessions: deps.sessions,
      skills: deps.skills,
      proposals: this.proposals,
      placement: (config) => this.placementDeps(config),
      busy: () => ctx.busy > 0,
      log: ctx.log,
    });
  }

  get queue(): ReviewQueue {
    return this.reviewer.queue;
  }

  private placementDeps(config: HermesConfig): PlacementDeps {
    return {
      root: this.ctx.root,
      project: this.project,
      memories: this.deps.memory,
      skills: this.deps.skills,
      proposals: this.proposals,
      config,
      ...this.model.for(config),
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
      refuseIfElsewhere(p, this.project);
      return applyProposal(p, { root: this.ctx.root, memories: this.deps.memory, skills: this.deps.skills });
    });
  }

  async reject(id: string, reason?: string): Promise<Proposal> {
    return this.proposals.decide(id, 'rejected', () => `Rejected${reason ? `: ${reason}` : ''}; the same change will not be proposed again.`);
  }

  /** Queues a review of a finished session (the API's POST /v1/review). */
  enqueueReview(sessionId: string, source: string): void {
    this.reviewer.enqueue(sessionId, source);
  }
}

export function createPlacementService(ctx: DaemonContext, deps: PlacementStores): Built<PlacementService> {
  const service = new PlacementService(ctx, deps);
  const reviewer = service.reviewer;
  const started = () => reviewer.onTaskStarted();
  const ended = (e: TaskEnded) => reviewer.onTaskEnded(e);
  const stopped = (e: AgentStopped) => reviewer.onAgentStopped(e);
  ctx.events.on('task-started', started);
  ctx.events.on('task-ended', ended);
  ctx.events.on('agent-stopped', stopped);
  ctx.report('review', () => service.queue.counts());
  ctx.report('proposals', () => ({ pending: service.proposals.pendingCount(service.project) }));
  return {
    value: service,
    close: () => {
      ctx.events.off('task-started', started);
      ctx.events.off('task-ended', ended);
      ctx.events.off('agent-stopped', stopped);
      reviewer.close();
    },
  };
}
