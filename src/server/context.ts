import { EventEmitter } from 'node:events';
import type { RepoPaths } from '../paths/index.js';
import type { Logger } from './log.js';

/**
 * What the daemon hands every route handler: where it is, how to log, and a memo of the
 * services (stores, watcher, agent runner) that route modules create on first use.
 * Core modules never import this; they take plain arguments.
 */
export class DaemonContext {
  readonly startedAt = new Date();
  /** Events between services: 'authority-changed', 'config-changed', 'skills-changed', 'memory-changed', 'workspace-changed'. */
  readonly events = new EventEmitter();
  private readonly services = new Map<string, unknown>();
  private readonly closers: Array<() => unknown | Promise<unknown>> = [];
  /** Counts requests in flight, so the idle timer never stops a daemon that is working. */
  busy = 0;
  /** Set by the daemon process: starts the single shutdown path. */
  requestShutdown: (reason: string) => void = () => {};
  /** Extra fields for GET /v1/status (watcher state, counts), contributed by services. */
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

  /** Returns the service registered under `key`, creating it with `create` the first time. */
  service<T>(key: string, create: () => T): T {
    if (!this.services.has(key)) {
      this.services.set(key, create());
    }
    return this.services.get(key) as T;
  }

  /** Registers a cleanup run once on shutdown, last registered first. */
  onClose(fn: () => unknown | Promise<unknown>): void {
    this.closers.push(fn);
  }

  async close(): Promise<void> {
    for (const fn of this.closers.reverse()) {
      try {
        await fn();
      } catch (err) {
        this.log.error('close hook failed', { error: String(err) });
      }
    }
    this.closers.length = 0;
  }
}
