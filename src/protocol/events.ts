import { EventEmitter } from 'node:events';

/**
 * The daemon's change events, by name: what the watcher reports (src/server/services/watcher.ts),
 * what services reload on, and what a client may follow on GET /v1/events.
 */
export const STREAMED_EVENTS = ['authority-changed', 'config-changed', 'skills-changed', 'memory-changed', 'workspace-changed'] as const;
export type StreamedEvent = (typeof STREAMED_EVENTS)[number];

/**
 * The services' event bus (the names above, and 'hook-end' / 'started' /
 * 'index-written' / 'config-loaded' between services). Every event is something a status answer
 * may show: the bus counts them and keeps when the last one came, for whoever serves status to
 * read (an emitter calls nothing back).
 */
export class ChangeEvents extends EventEmitter {
  /** Events emitted so far. */
  emitted = 0;
  /** When the last one was (ms since the epoch; 0: none yet). */
  lastAt = 0;

  override emit(name: string | symbol, ...args: unknown[]): boolean {
    this.emitted++;
    this.lastAt = Date.now();
    return super.emit(name, ...args);
  }
}
