/**
 * The review queue: background reviews at the lowest priority. A job never starts in the
 * tick that delivers an answer, waits while the daemon is busy (a task running or queued, a
 * request in flight) and is skipped when the daemon stays busy past its deadline. One job
 * runs at a time; a task that starts while a review talks to the model preempts it (the
 * review is cancelled and queued again), because a local model serving one request at a
 * time would otherwise make the user's task wait for the review.
 */
export type ReviewJob = { sessionId: string; source: string; queuedAt: number; attempts: number };

export type QueueOptions = {
  run: (job: ReviewJob, signal: AbortSignal) => Promise<void>;
  /** True while the daemon does something a user waits for. */
  busy: () => boolean;
  /** How long a job may wait for the daemon to be idle before it is skipped. */
  deferMs: () => number;
  maxQueued: () => number;
  onSkip?: (job: ReviewJob, why: string) => void;
  onError?: (job: ReviewJob, err: unknown) => void;
  /** How often a waiting job looks at whether the daemon is still busy. */
  pollMs?: number;
};

/** A waiting job re-checks the daemon this often: short enough to start soon after an answer, long enough to cost nothing. */
export const REVIEW_POLL_MS = 250;
/** A review preempted this many times is given up (the daemon is rarely idle long enough for it). */
export const REVIEW_MAX_ATTEMPTS = 3;

export type QueueCounts = { queued: number; running: number; done: number; skipped: number; failed: number };

export class ReviewQueue {
  private readonly jobs: ReviewJob[] = [];
  private current: { job: ReviewJob; abort: AbortController } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly stats = { done: 0, skipped: 0, failed: 0 };

  constructor(private readonly opts: QueueOptions) {}

  /** Queues a review of `sessionId` (the oldest waiting job is dropped past maxQueued: the newest evidence matters most). */
  enqueue(sessionId: string, source: string): void {
    if (this.closed || this.jobs.some((j) => j.sessionId === sessionId) || this.current?.job.sessionId === sessionId) return;
    this.jobs.push({ sessionId, source, queuedAt: Date.now(), attempts: 0 });
    while (this.jobs.length > this.opts.maxQueued()) this.skip(this.jobs.shift()!, 'the queue is full; newer sessions came first');
    this.schedule();
  }

  /** A task started: a review talking to the model now is cancelled and queued again. */
  preempt(): void {
    const c = this.current;
    if (c && !c.abort.signal.aborted) c.abort.abort(new Error('preempted by a task'));
  }

  counts(): QueueCounts {
    return { queued: this.jobs.length, running: this.current ? 1 : 0, ...this.stats };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.preempt();
    this.jobs.length = 0;
  }

  private skip(job: ReviewJob, why: string): void {
    this.stats.skipped++;
    this.opts.onSkip?.(job, why);
  }

  /** Looks again after a pause: never in the tick that queued the job (which is delivering an answer). */
  private schedule(): void {
    if (this.closed || this.timer || this.current) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pump();
    }, this.opts.pollMs ?? REVIEW_POLL_MS);
    this.timer.unref?.();
  }

  private async pump(): Promise<void> {
    if (this.closed || this.current) return;
    const job = this.jobs[0];
    if (!job) return;
    if (this.opts.busy()) {
      if (Date.now() - job.queuedAt > this.opts.deferMs()) {
        this.jobs.shift();
        this.skip(job, `the daemon stayed busy for ${Math.round((Date.now() - job.queuedAt) / 1000)} s (review.deferMs)`);
      }
      this.schedule();
      return;
    }
    this.jobs.shift();
    job.attempts++;
    const abort = new AbortController();
    this.current = { job, abort };
    try {
      await this.opts.run(job, abort.signal);
      this.stats.done++;
    } catch (err) {
      if (abort.signal.aborted && !this.closed) {
        if (job.attempts < REVIEW_MAX_ATTEMPTS) this.jobs.unshift(job);
        else this.skip(job, `preempted by tasks ${job.attempts} times`);
      } else if (!this.closed) {
        this.stats.failed++;
        this.opts.onError?.(job, err);
      }
    } finally {
      this.current = undefined;
      this.schedule();
    }
  }
}
