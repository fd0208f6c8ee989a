/**
 * GET /v1/events: the daemon's change events as they happen, one NDJSON line each, for as
 * long as the client stays connected. Clients (the MCP server, editors) learn *that*
 * something changed and read it again through the other routes; no content travels here.
 *
 *   {"type":"ready","events":[…],"pid":…}              once, when the subscription is in place
 *   {"type":"event","event":"skills-changed","at":"…"}  per change the watcher reports
 *   {"type":"result","reason":"…"}                      when the daemon stops
 *
 * `?events=a,b` picks the events (default: all of STREAMED_EVENTS); `?client=<name>` names
 * the subscriber in the daemon log. The stream does not keep the daemon from its idle stop.
 */
import { UsageError } from '../../errors/index.js';
import { STREAMED_EVENTS } from '../../protocol/events.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/** A client name is a log label, not free text. */
const CLIENT_NAME_MAX_CHARS = 64;

function eventsOf(query: URLSearchParams): string[] {
  const raw = query.get('events');
  if (raw === null || raw.trim() === '') return [...STREAMED_EVENTS];
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((n) => !(STREAMED_EVENTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new UsageError(`Unknown event ${unknown.map((n) => JSON.stringify(n)).join(', ')}. Events: ${STREAMED_EVENTS.join(', ')}.`);
  return names;
}

export function eventsRoutes(services: Services): Route[] {
  const { daemon } = services;
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/events',
      stream: true,
      background: true,
      handler: ({ query, signal }, emit) => {
        const events = eventsOf(query);
        const client = (query.get('client') ?? 'unnamed').replace(/[^\w.:@/-]/g, '_').slice(0, CLIENT_NAME_MAX_CHARS);
        return new Promise((resolve) => {
          const listeners = events.map((event) => [event, () => emit({ type: 'event', event, at: new Date().toISOString() })] as const);
          for (const [event, fn] of listeners) daemon.events.on(event, fn);
          const open = services.eventStreams;
          open.set(client, (open.get(client) ?? 0) + 1);
          daemon.log.info('event stream opened', { client, events });
          emit({ type: 'ready', events, pid: process.pid });
          const close = () => {
            for (const [event, fn] of listeners) daemon.events.off(event, fn);
            const left = (open.get(client) ?? 1) - 1;
            if (left > 0) open.set(client, left);
            else open.delete(client);
            const reason = signal.reason instanceof Error ? signal.reason.message : 'closed';
            daemon.log.info('event stream closed', { client, reason });
            resolve({ reason });
          };
          if (signal.aborted) close();
          else signal.addEventListener('abort', close, { once: true });
        });
      },
    }),
  ];
}
