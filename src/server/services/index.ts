/**
 * The composition root: every service of one daemon, each built from plain subsystem code
 * and from the services before it in SERVICE_ORDER, and closed in the reverse of that order
 * whatever order requests happened to build them in (tasks end and record their end before
 * SessionDB closes; the agent socket stops taking hook requests before the hooks drain).
 *
 * Services are built on first use through typed getters, so the daemon answers its first
 * request before SQLite, the model client or the watcher load; `start()` builds the ones
 * that must run from the start. Only the config and the judging of other agents' tool calls
 * are imported here: the code of every other service is later.ts, loaded by `loaded()`, which
 * every question but a pre-tool-call one awaits (a cold daemon's first verdict loads about a
 * third of the daemon's code).
 */
import type { HermesConfig } from '../../config/schema.js';
import type { AgentServices } from '../../agent/services.js';
import type { TaskRunner } from '../../agent/task-runner.js';
import { DaemonUnavailable } from '../../errors/index.js';
import { existsSync } from 'node:fs';
import { agentsRecordPath, memoriesDir, projectDir } from '../../paths/index.js';
import type { Memories } from '../../memory/memories.js';
import type { SessionDB } from '../../sessions/db.js';
import type { SkillStore } from '../../skills/store.js';
import type { DaemonContext } from '../daemon-context.js';
import type { AgentSessions } from '../../other-agents/sessions.js';
import { createAgentHookService } from './agents.js';
import type { OtherAgentHooks } from '../../other-agents/hook-handler.js';
import type { Built } from './built.js';
import { createConfigService } from './config.js';
import type { ConfigInForce } from './config-in-force.js';
import type { PromptService } from './prompt.js';
import type { GuardService } from './guard.js';
import type { GitHooks } from '../../githooks/hook-service.js';
import type { PlacementService } from './placement.js';
import type { WatcherService } from './watcher.js';
import type * as Later from './later.js';

/** A listener the server runs for the services (the agent socket), closed with them. */
export type Listener = { path: string; close(): void };

type ServiceTypes = {
  config: ConfigInForce;
  guard: GuardService;
  sessions: SessionDB;
  memory: Memories;
  skills: SkillStore;
  watcher: WatcherService;
  prompt: PromptService;
  placement: PlacementService;
  tasks: TaskRunner;
  hooks: GitHooks;
  agentSessions: AgentSessions;
  agents: OtherAgentHooks;
  eventStreams: Map<string, number>;
  agentSocket: Promise<Listener>;
};

/** The build order: each service uses only services before it. Closing runs it backwards. */
export const SERVICE_ORDER = [
  'config',
  'guard',
  'sessions',
  'memory',
  'skills',
  'watcher',
  'prompt',
  'placement',
  'tasks',
  'hooks',
  'agentSessions',
  'agents',
  'eventStreams',
  'agentSocket',
] as const satisfies readonly (keyof ServiceTypes)[];

type Name = (typeof SERVICE_ORDER)[number];
// Fails to compile when a service is missing from SERVICE_ORDER (it would never be closed).
const everyServiceIsOrdered: Exclude<keyof ServiceTypes, Name> extends never ? true : never = true;
void everyServiceIsOrdered;

export type ServiceOptions = {
  /** Starts the agent socket over these services (src/server/sandbox-socket.ts); without it sandboxed commands get none. */
  agentSocket?: (services: Services) => Promise<Listener>;
};

export class Services {
  /** What was built, by name: the getters are its only way in, each typed by ServiceTypes. */
  private readonly slots = new Map<Name, Built<unknown>>();
  private closing = false;
  private later: typeof Later | undefined;
  private loading: Promise<this> | undefined;

  constructor(
    readonly daemon: DaemonContext,
    private readonly options: ServiceOptions = {},
  ) {}

  get config(): ConfigInForce {
    return this.build('config', () => ({ value: createConfigService(this.daemon) }));
  }

  /**
   * Loads the code of every service but the config and the judging of agents' tool calls
   * (later.ts). Where it cannot be loaded (an install with a file of it missing or unreadable),
   * every caller gets the same error, naming the broken install, and status says it: such a
   * daemon still judges other agents' tool calls, and refuses every commit.
   */
  loaded(): Promise<this> {
    return (this.loading ??= import('./later.js').then(
      (m) => {
        this.later = m;
        return this;
      },
      (err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        const broken = `hermesd's install is broken (${why.split('\n')[0]}): commits are refused and its other services are off until hermesd is installed again (other agents' tool calls are still judged)`;
        this.daemon.log.error('services not loaded', { error: String((err as Error)?.stack ?? err) });
        this.daemon.warningSources.push(() => [broken]);
        throw new Error(broken);
      },
    ));
  }

  /** later.ts, which a question awaits (loaded()) before it reaches a service of it. */
  private code(): typeof Later {
    if (!this.later) throw new Error('A service was asked for before Services.loaded(): this is a bug in hermesd.');
    return this.later;
  }

  get guard(): GuardService {
    const { GuardService } = this.code();
    return this.build('guard', () => ({ value: new GuardService(this.daemon, this.config, async () => (await this.agentSocket).path) }));
  }

  get sessions(): SessionDB {
    const { openSessions } = this.code();
    return this.build('sessions', () => openSessions(this.daemon, this.guard.secrets));
  }

  /**
   * The global MEMORY.md and USER.md, and this repository's MEMORY.md (keyed by the common git dir, so
   * every worktree shares it). Budgets are read from the effective config at every operation, so an
   * edited config.yaml applies at once.
   */
  get memory(): Memories {
    const { home, paths } = this.daemon;
    const { Memories } = this.code();
    return this.build('memory', () => ({
      value: new Memories({ globalDir: memoriesDir(home), repoDir: projectDir(home, paths.commonDir), limits: () => this.config.get().memory }),
    }));
  }

  get skills(): SkillStore {
    const { openSkills } = this.code();
    return this.build('skills', () => openSkills(this.daemon));
  }

  get watcher(): WatcherService {
    const { WatcherService } = this.code();
    return this.build('watcher', () => {
      const watcher = new WatcherService(this.daemon, {
        secrets: this.guard.secrets,
        // The hook service as built (a daemon builds it at start); the watcher's question builds nothing.
        hookRunning: () => (this.slots.get('hooks')?.value as GitHooks | undefined)?.runningHook(),
      });
      return { value: watcher, close: () => watcher.close() };
    });
  }

  get prompt(): PromptService {
    const { PromptService } = this.code();
    return this.build('prompt', () => ({
      value: new PromptService(this.daemon, { config: this.config, memory: this.memory, skills: this.skills, watcher: this.watcher }),
    }));
  }

  /** remember, the proposals, and the post-task review queue (fed by the task runner's 'task-started' / 'task-ended'). */
  get placement(): PlacementService {
    const { createPlacementService } = this.code();
    return this.build('placement', () =>
      createPlacementService(this.daemon, { config: this.config, memory: this.memory, skills: this.skills, sessions: () => this.sessions }),
    );
  }

  get tasks(): TaskRunner {
    const { createTaskRunner } = this.code();
    return this.build('tasks', () => createTaskRunner(this.daemon, { config: this.config, prompt: () => this.prompt, stores: () => this.agentStores() }));
  }

  get hooks(): GitHooks {
    const { createHookService } = this.code();
    return this.build('hooks', () =>
      createHookService(this.daemon, { config: this.config, guard: this.guard, sessions: () => this.sessions, tasks: () => this.tasks }),
    );
  }

  /** Other agents' sessions (`init --agents`): context handed out, recall, transcripts ingested. */
  get agentSessions(): AgentSessions {
    const { createAgentSessions } = this.code();
    return this.build('agentSessions', () =>
      createAgentSessions(this.daemon, {
        memory: () => this.memory,
        skills: () => this.skills,
        sessions: () => this.sessions,
        authority: (cwd) => this.prompt.authority(cwd),
        recordable: this.guard.secrets.ready.bind(this.guard.secrets),
      }),
    );
  }

  /** Other agents' hooks (`init --agents`): their tool calls judged here, every other event handed to agentSessions. */
  get agents(): OtherAgentHooks {
    return this.build('agents', () =>
      createAgentHookService(this.daemon, {
        sessions: async () => (await this.loaded()).agentSessions,
        // Confined shell calls reach the daemon through the agent socket only (their git hooks).
        agentSocket: () =>
          this.agentSocket.then(
            (l) => l.path,
            (err: unknown) => {
              this.daemon.log.warn('agent socket not started', { error: String(err) });
              return undefined;
            },
          ),
      }),
    );
  }

  /** Open GET /v1/events subscriptions by client name, for GET /v1/status. */
  get eventStreams(): Map<string, number> {
    return this.build('eventStreams', () => {
      const open = new Map<string, number>();
      this.daemon.report('eventStreams', () => Object.fromEntries(open));
      return { value: open };
    });
  }

  /** The agent socket, started on first use (the first sandboxed command). */
  get agentSocket(): Promise<Listener> {
    return this.build('agentSocket', () => {
      const start = this.options.agentSocket;
      const listener = start ? start(this) : Promise.reject(new DaemonUnavailable('This daemon serves no agent socket.'));
      return { value: listener, close: async () => (await listener.catch(() => undefined))?.close() };
    });
  }

  /** What the agent's tools use, with `config` in force (the tools route and every task). */
  agentServices(config: HermesConfig): AgentServices {
    return this.code().agentServicesFor(this.agentStores(), config);
  }

  private agentStores() {
    return { sessions: this.sessions, memory: this.memory, skills: this.skills, guard: this.guard, placement: this.placement };
  }

  /** The services that run from the start (after loaded()), so status reports from the first answer: hand-edited dangerous skills, a config error, hooks git no longer runs, backups waiting for a restore, agents' transcripts. */
  start(): void {
    void this.watcher.start();
    this.skills;
    void this.config.preload();
    // The secret values git's history holds, read now without blocking: the first record in SessionDB waits for them, not the daemon.
    void this.guard.secrets.ready();
    this.hooks;
    // Listens for the task runner's ends from the first task on (post-task review).
    this.placement;
    // Other agents' hooks set up here (init --agents): their sh runner's settings follow the config from the start.
    if (existsSync(agentsRecordPath(this.daemon.paths.gitDir))) {
      this.agents;
      this.agentSessions;
    }
  }

  /**
   * Whether the daemon has work although no request is in flight: a post-task review waiting
   * or running. An open event stream is not work (its client reconnects to the next daemon).
   */
  keepsAwake(): boolean {
    const reviews = (this.slots.get('placement')?.value as PlacementService | undefined)?.queue.counts();
    return reviews !== undefined && reviews.queued + reviews.running > 0;
  }

  /** Closes what was built, in the reverse of SERVICE_ORDER; a failing close is logged and the rest still close. */
  async close(): Promise<void> {
    this.closing = true;
    const closed: Name[] = [];
    for (const name of [...SERVICE_ORDER].reverse()) {
      const slot = this.slots.get(name);
      if (!slot?.close) continue;
      try {
        await slot.close();
        closed.push(name);
      } catch (err) {
        this.daemon.log.error('service close failed', { service: name, error: String(err) });
      }
    }
    this.daemon.log.info('services closed', { order: closed });
  }

  private build<K extends Name>(name: K, make: () => Built<ServiceTypes[K]>): ServiceTypes[K] {
    let slot = this.slots.get(name) as Built<ServiceTypes[K]> | undefined;
    if (!slot) {
      // A request that arrives while the daemon stops must not open what was just closed.
      if (this.closing) throw new DaemonUnavailable(`The daemon is stopping (${name} is closed).`);
      slot = make();
      this.slots.set(name, slot);
    }
    return slot.value;
  }
}

const composed = new WeakMap<DaemonContext, Services>();

/** The one composition of `daemon` (built on the first call, with these options). */
export function servicesOf(daemon: DaemonContext, options?: ServiceOptions): Services {
  let services = composed.get(daemon);
  if (!services) {
    services = new Services(daemon, options);
    composed.set(daemon, services);
  }
  return services;
}

/** The config service of `daemon`'s composition. */
export function configServiceOf(daemon: DaemonContext): ConfigInForce {
  return servicesOf(daemon).config;
}

/** `daemon`'s effective configuration (throws ConfigError while a config file is invalid). */
export function configOf(daemon: DaemonContext): HermesConfig {
  return servicesOf(daemon).config.get();
}
