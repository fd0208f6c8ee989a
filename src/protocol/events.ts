/**
 * The daemon's change events, by name: what the watcher reports (src/server/services/watcher.ts),
 * what services reload on, and what a client may follow on GET /v1/events.
 */
export const STREAMED_EVENTS = ['authority-changed', 'config-changed', 'skills-changed', 'memory-changed', 'workspace-changed'] as const;
export type StreamedEvent = (typeof STREAMED_EVENTS)[number];
