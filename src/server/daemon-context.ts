import type { RepoPaths } from '../paths/index.js';
import type { StatusFields } from '../protocol/daemon.js';
import { ChangeEvents } from '../protocol/events.js';
import type { Logger } from '../storage/log.js';

/**
 * How long a status answer may be served again while nothing the daemon hears of has
 * happened (an event between services, a request, a hook's question, a watched file's
 * change): a change it does not hear of (another process writing an unwatched file) shows
 * this much later at most. The uptime and RSS fields are always current.
 */
export const STATUS_REUSE_MS = 100;

/**
 * What every part of the server shares about this daemon: where it is, how to log, the
 * events between services, and what GET /v1/status reports. The services themselves are
 * built by the composition root (services/index.ts); subsystem code never sees this.
 */
export class DaemonContext {
  readonly startedAt = new Date();
  /** Events between services (the names in src/protocol/events.ts, and 'hook-end' / 'started' / 'index-written' / 'config-loaded'). */
  readonly events = new ChangeEvents();
  /** Counts requests in flight, so the idle timer never stops a daemon that is working. */
  busy = 0;
  /** Set by the daemon process: starts the single shutdown path. */
  requestShutdown: (reason: string) => void = () => {};
  /** Extra fields for GET /v1/status (watcher state, counts), contributed by services through `report`. */
  readonly statusExtras = new Map<string, () => unknown>();
  /** Each service that can warn the user adds a source; status joins them into `warnings`. */
  readonly warningSources: Array<() => string[]> = [];

  constructor(
    readonly paths: RepoPaths,
    readonly home: string,
    readonly version: string,
    readonly log: Logger,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.events.setMaxListeners(100);
  }

  get root(): string {
    return this.paths.root;
  }

  /** Counts status answers: a source that both a field and a warning read (config, skills, backups) reads its files once per answer. */
  private statusRound = 0;
  private readingStatus = false;
  /** Counts what happened that a status answer may show (see `changed`). */
  private changes = 0;
  private lastStatus: { value: unknown; changes: number; at: number } | undefined;

  private changedAt = Date.now();

  /** When something last happened that the daemon heard of (a request, a hook, a watched file's change, an event): the daemon is not idle. */
  get lastChangeAt(): number {
    return Math.max(this.changedAt, this.events.lastAt);
  }

  /** Something a status answer may show has happened or is happening: the next answer is read afresh. */
  changed(): void {
    this.changes++;
    this.changedAt = Date.now();
  }

  /** Every change so far: those told to `changed` and the events emitted. */
  private changeCount(): number {
    return this.changes + this.events.emitted;
  }

  /** Whether `readStatus` would serve the last answer again. */
  statusReusable(now = Date.now()): boolean {
    const last = this.lastStatus;
    return last !== undefined && last.changes === this.changeCount() && now - last.at < STATUS_REUSE_MS;
  }

  /**
   * One status answer (`read`), the sources made with `oncePerStatus` read once for all of
   * it; the last answer again when nothing has `changed` within STATUS_REUSE_MS of it.
   */
  readStatus<T>(read: () => T): T {
    const now = Date.now();
    if (this.statusReusable(now)) return this.lastStatus!.value as T;
    const changes = this.changeCount();
    this.statusRound++;
    this.readingStatus = true;
    try {
      const value = read();
      this.lastStatus = { value, changes, at: now };
      return value;
    } finally {
      this.readingStatus = false;
    }
  }

  /** `get`, read at most once per status answer (and every time outside one). */
  oncePerStatus<T>(get: () => T): () => T {
    let round = -1;
    let value: T;
    return () => {
      if (!this.readingStatus) return get();
      if (round !== this.statusRound) {
        value = get();
        round = this.statusRound;
      }
      return value;
    };
  }

  /** Adds `key` to GET /v1/status, read when status is asked for; the fields clients read are typed by the protocol (StatusFields). */
  report<K extends string>(key: K, get: () => K extends keyof StatusFields ? StatusFields[K] : unknown): void {
    this.statusExtras.set(key, get);
    // A new field: the next answer has it, not the last one again.
    this.changed();
  }
}
