import { modelEnvOf } from '../../protocol/model-env.js';
import type { Status } from '../../protocol/daemon.js';
import type { DaemonContext } from '../daemon-context.js';
import { defineRoute, type Route } from '../route.js';

/** Resident memory, read at most once a second: a figure to show, and reading it costs more than the rest of a status answer's fields. */
const RSS_EVERY_MS = 1_000;
let rssAt = 0;
let rssBytes: number | undefined;
function rss(): number | undefined {
  const now = Date.now();
  if (now - rssAt >= RSS_EVERY_MS) {
    try {
      rssBytes = process.memoryUsage.rss();
    } catch {
      // /proc/self unreadable (EACCES in a daemon whose user was changed by setpriv or sudo): a status without the figure.
      rssBytes = undefined;
    }
    rssAt = now;
  }
  return rssBytes;
}

/** The status answer: its files and services read afresh when something changed (DaemonContext.readStatus), uptime and RSS always. */
export function statusOf(daemon: DaemonContext): Status {
  return { ...daemon.readStatus(() => read(daemon)), uptimeMs: Date.now() - daemon.startedAt.getTime(), rssBytes: rss() };
}

function read(daemon: DaemonContext): Status {
  const warnings: string[] = [];
  for (const source of daemon.warningSources) {
    try {
      warnings.push(...source());
    } catch (err) {
      warnings.push(String(err));
    }
  }
  const status: Status = {
    pid: process.pid,
    version: daemon.version,
    root: daemon.root,
    socket: daemon.paths.socket,
    startedAt: daemon.startedAt.toISOString(),
    uptimeMs: Date.now() - daemon.startedAt.getTime(),
    rssBytes: rss(),
    home: daemon.home,
    // What the daemon's environment says about the model (clients compare it with theirs).
    modelEnv: modelEnvOf(daemon.env),
    warnings,
    // This status request is one of the busy ones.
    requestsInFlight: Math.max(0, daemon.busy - 1),
  };
  for (const [key, get] of daemon.statusExtras) {
    try {
      status[key] = get();
    } catch (err) {
      status[key] = { error: String(err) };
    }
  }
  return status;
}

/** Served from the first moment the socket answers, before any other service loads. */
export function statusRoutes(daemon: DaemonContext): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/status',
      changesNothing: true,
      handler: async () => {
        // A reused answer waits for the rest of this turn of the event loop: a watched file's
        // change made before the request may be reported in the same poll, after the request.
        if (daemon.statusReusable()) await new Promise((resolve) => setImmediate(resolve));
        return statusOf(daemon);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/shutdown',
      handler: () => {
        // Answer first, then stop: the client learns the shutdown was accepted.
        setImmediate(() => daemon.requestShutdown('shutdown requested over the API'));
        return { ok: true, pid: process.pid };
      },
    }),
  ];
}
