/**
 * Tasks of one daemon: several clients may ask at once. Up to MAX_CONCURRENT_TASKS run
 * concurrently (each is mostly waiting on the model); more wait in a FIFO queue and start
 * as slots free. Every task has an id, can be listed and cancelled, and is cancelled when
 * the signal its caller passed fires (the API passes the client's connection: a client
 * that goes away cancels its task, the daemon carries on).
 */
import { randomBytes } from 'node:crypto';
import { Conflict } from '../errors/index.js';
import { taskTitle, type AgentEvent, type TaskResult } from './loop.js';

/** Tasks running at once; the rest queue. Small: each one holds a model connection and maybe a shell. */
export const MAX_CONCURRENT_TASKS = 4;
/** Tasks waiting for a slot before new ones are refused: a runaway client must not pile up work. */
export const MAX_QUEUED_TASKS = 32;

export type TaskSource = 'cli' | 'api' | 'hook' | (string & {});

export type TaskSpec = {
  task: string;
  system?: string;
  /** Continue this session (a new child session replays it). */
  sessionId?: string;
  source: TaskSource;
  /** Turn-only material for the first user turn (a hook's failing check output). */
  turnContext?: string;
  /** Fires to cancel the task (a client's connection closing). */
  signal?: AbortSignal;
  onEvent?: (event: TaskEvent) => void;
};

export type TaskEvent = AgentEvent | { type: 'queued'; taskId: string; position: number } | { type: 'started'; taskId: string };

export type TaskOutcome = Omit<TaskResult, 'sessionId'> & { taskId: string; sessionId: string | null };

export type TaskInfo = {
  id: string;
  state: 'queued' | 'running';
  source: string;
  /** First line of the task, short. */
  task: string;
  sessionId: string | null;
  createdAt: string;
  startedAt: string | null;
};

/** Runs one task to its end (the agent loop with the daemon's services). */
export type Executor = (spec: TaskSpec & { signal: AbortSignal; onEvent: (e: AgentEvent) => void }) => Promise<TaskResult>;

type Entry = { info: TaskInfo; spec: TaskSpec; abort: AbortController; start: () => void };

export class TaskRunner {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Entry[] = [];
  private running = 0;
  private closed = false;

  constructor(
    private readonly execute: Executor,
    readonly maxConcurrent = MAX_CONCURRENT_TASKS,
    readonly maxQueued = MAX_QUEUED_TASKS,
  ) {}

  /** Runs a task (queued when all slots are busy) and resolves with its outcome; rejects only when it cannot start. */
  run(spec: TaskSpec): Promise<TaskOutcome> {
    if (this.closed) return Promise.reject(new TaskRefused('The daemon is shutting down; run the task again in a moment.'));
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(
        new TaskRefused(`${this.queue.length} tasks are already waiting; try again when some have finished (hermesd lists them at GET /v1/tasks).`),
      );
    }
    const id = `task-${randomBytes(4).toString('hex')}`;
    const abort = new AbortController();
    const info: TaskInfo = {
      id,
      state: 'queued',
      source: spec.source,
      task: taskTitle(spec.task),
      sessionId: null,
      createdAt: new Date().toISOString(),
      startedAt: null,
    };
    const emit = (e: TaskEvent) => {
      try {
        spec.onEvent?.(e);
      } catch {
        // a listener's failure is not the task's
      }
    };
    return new Promise<TaskOutcome>((resolve, reject) => {
      const onCallerAbort = () => this.cancel(id);
      const finish = () => {
        spec.signal?.removeEventListener('abort', onCallerAbort);
        this.entries.delete(id);
      };
      const entry: Entry = {
        info,
        spec,
        abort,
        start: () => {
          this.running++;
          info.state = 'running';
          info.startedAt = new Date().toISOString();
          emit({ type: 'started', taskId: id });
          this.execute({
            ...spec,
            signal: abort.signal,
            onEvent: (e) => {
              if (e.type === 'session') {
                info.sessionId = e.sessionId;
                emit({ ...e, taskId: id } as TaskEvent);
              } else emit(e);
            },
          }).then(
            (r) => {
              this.release(finish);
              resolve({ ...r, taskId: id });
            },
            (err: unknown) => {
              this.release(finish);
              reject(err);
            },
          );
        },
      };
      this.entries.set(id, entry);
      spec.signal?.addEventListener('abort', onCallerAbort, { once: true });
      abort.signal.addEventListener(
        'abort',
        () => {
          // A task cancelled while still queued never starts and has no session.
          const i = this.queue.indexOf(entry);
          if (i >= 0) {
            this.queue.splice(i, 1);
            finish();
            resolve({
              taskId: id,
              sessionId: null,
              status: 'cancelled',
              answer: '',
              turns: 0,
              error: { code: 'cancelled', message: 'The task was cancelled before it started.' },
            });
          }
        },
        { once: true },
      );
      this.queue.push(entry);
      if (spec.signal?.aborted) {
        this.cancel(id);
        return;
      }
      if (this.running >= this.maxConcurrent) emit({ type: 'queued', taskId: id, position: this.queue.length });
      this.pump();
    });
  }

  /** Frees a slot before the outcome is delivered, so a caller that awaits it sees the runner settled. */
  private release(finish: () => void): void {
    finish();
    this.running--;
    this.pump();
  }

  private pump(): void {
    while (this.running < this.maxConcurrent && this.queue.length > 0) this.queue.shift()!.start();
  }

  /** Cancels a task by task id or session id; false when no such task is queued or running. */
  cancel(id: string, reason = 'cancelled'): boolean {
    const entry = this.entries.get(id) ?? [...this.entries.values()].find((e) => e.info.sessionId === id);
    if (!entry) return false;
    entry.abort.abort(new Error(reason));
    return true;
  }

  list(): TaskInfo[] {
    return [...this.entries.values()].map((e) => ({ ...e.info }));
  }

  counts(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  /** Refuses new tasks, cancels all, and waits (bounded) for running ones to record their end. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    for (const id of [...this.entries.keys()]) this.cancel(id, 'daemon shutting down');
    const end = Date.now() + graceMs;
    while (this.running > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }
}

/** A task could not be accepted (queue full, daemon stopping). */
export class TaskRefused extends Conflict {
  override readonly code = 'task-refused';
}
