/**
 * The MCP server's line to its repository's daemon: it is a client of the local API like the
 * CLI, found and started with the same lifecycle functions, over one kept-alive connection.
 * It also follows GET /v1/events, so resource notifications reach the MCP client while the
 * daemon runs; when the daemon stops (idle, `hermesd stop`) the line goes quiet until the next
 * call starts it again, and a restarted daemon is picked up on its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DaemonClient } from '../client/daemon-client.js';
import { ensureDaemon, probe } from '../client/lifecycle.js';
import type { StreamedEvent } from '../protocol/events.js';
import type { RepoPaths } from '../paths/index.js';
import { DaemonUnavailable } from '../errors/index.js';
import { VERSION } from '../version.js';

/** The events the MCP resources depend on (of those GET /v1/events streams). */
export const FOLLOWED_EVENTS = ['authority-changed', 'config-changed', 'skills-changed', 'memory-changed'] as const satisfies readonly StreamedEvent[];
export type FollowedEvent = (typeof FOLLOWED_EVENTS)[number];

/** After the event stream ends, a restarting daemon (`hermesd restart`) is looked for this long before the line goes quiet. */
export const RECONNECT_WINDOW_MS = 3_000;
const RECONNECT_POLL_MS = 100;

export type LinkEvents = {
  /** A change the daemon's watcher saw. */
  onChange(event: FollowedEvent): void;
  /** The event stream is (again) in place: changes made while it was not may have been missed. */
  onSubscribed(): void;
  log(message: string): void;
};

/** The request never reached a daemon (no socket, nobody listening): safe to start one and send it again. */
function neverDelivered(err: unknown): boolean {
  return err instanceof DaemonUnavailable && /ENOENT|ECONNREFUSED/.test(err.message);
}

export class DaemonLink {
  private client: DaemonClient | undefined;
  private connecting: Promise<DaemonClient> | undefined;
  private warming: Promise<void> | undefined;
  private following = false;
  private closed = false;
  private readonly stop = new AbortController();

  constructor(
    readonly paths: RepoPaths,
    private readonly events: LinkEvents,
    /** Names this server in the daemon log. */
    private readonly clientName: () => string,
  ) {}

  /** Sends one API request, starting the daemon first when none answers. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const client = await this.connect();
    try {
      return await client.call<T>(method, path, body);
    } catch (err) {
      if (!neverDelivered(err) || this.closed) throw err;
      this.drop(client);
      return (await this.connect()).call<T>(method, path, body);
    }
  }

  /**
   * Connects to a daemon already running, without starting one (the front, at `initialize`: the
   * first list or call then finds the line open); resolves either way. Once.
   */
  warm(): Promise<void> {
    this.warming ??= (async () => {
      if (this.client || this.connecting || this.closed) return;
      const running = await probe(this.paths).catch(() => undefined);
      // A call meanwhile waits for this (connect): it takes the line attached here.
      if (!running || running.version !== VERSION || this.client || this.closed) return;
      this.attach(running);
    })();
    return this.warming;
  }

  /**
   * Starts (or finds) the daemon and follows its events; concurrent callers share one attempt.
   * A warm-up under way is waited for first: its probe is the one this would send (a new Node
   * process's first request, on every client's path to its first model request).
   */
  connect(): Promise<DaemonClient> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      try {
        await this.warming;
        if (this.client) return this.client;
        const { status, started } = await ensureDaemon(this.paths);
        if (started) this.events.log(`started the daemon of ${this.paths.root} (pid ${status.pid})`);
        return this.attach(status);
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  /** Talks to the daemon that answered `status`, on the socket it answered on (whatever this environment would compute), and follows its events. */
  private attach(status: { socket?: unknown }): DaemonClient {
    this.client = new DaemonClient(String(status.socket ?? this.paths.socket), { keepAlive: true });
    this.follow();
    return this.client;
  }

  close(): void {
    this.closed = true;
    this.stop.abort();
    this.client?.close();
    this.client = undefined;
  }

  private drop(client: DaemonClient): void {
    if (this.client === client) this.client = undefined;
    client.close();
  }

  /** Follows GET /v1/events while a daemon runs; returns (quiet) when none is found after it stops. */
  private follow(): void {
    if (this.following || this.closed) return;
    this.following = true;
    void (async () => {
      try {
        let socket = this.client?.socket;
        while (socket && !this.closed) {
          try {
            await new DaemonClient(socket).stream(
              'GET',
              `/v1/events?events=${FOLLOWED_EVENTS.join(',')}&client=${encodeURIComponent(this.clientName())}`,
              undefined,
              (e) => {
                if (e.type === 'ready') this.events.onSubscribed();
                else if (e.type === 'event' && (FOLLOWED_EVENTS as readonly string[]).includes(String(e.event))) this.events.onChange(e.event as FollowedEvent);
              },
              { signal: this.stop.signal },
            );
          } catch (err) {
            if (this.closed) return;
            this.events.log(`event stream ended: ${(err as Error).message}`);
          }
          if (this.client?.socket === socket) this.drop(this.client);
          const back = await this.restarted();
          if (this.closed) return;
          // A call may have started a daemon meanwhile (connect() sets the client): follow that one.
          if (!this.client && back) this.client = new DaemonClient(back.socket, { keepAlive: true });
          socket = this.client?.socket;
        }
      } finally {
        this.following = false;
      }
    })();
  }

  /** A daemon that came back within RECONNECT_WINDOW_MS (a restart), without starting one. */
  private async restarted(): Promise<{ socket: string } | undefined> {
    const deadline = Date.now() + RECONNECT_WINDOW_MS;
    while (Date.now() < deadline && !this.closed) {
      const status = await probe(this.paths, 300);
      if (status) return { socket: String(status.socket ?? this.paths.socket) };
      await sleep(RECONNECT_POLL_MS, undefined, { signal: this.stop.signal }).catch(() => undefined);
    }
    return undefined;
  }
}
