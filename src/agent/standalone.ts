/**
 * The agent's services built straight from the core classes, without a daemon: for tests,
 * the benchmark, and any embedding (a future MCP bridge) that owns its own stores.
 */
import { loadConfig } from '../config/load.js';
import type { HermesConfig } from '../config/schema.js';
import { Memories } from '../memory/memories.js';
import { SessionDB } from '../sessions/db.js';
import { sessionSearch } from '../sessions/search-tool.js';
import { SkillStore } from '../skills/store.js';
import type { AgentServices, SkillsPort } from './services.js';
import { findRepo, memoriesDir, projectDir, sessionDbPath } from '../paths/index.js';

/** The three skill tools over a SkillStore (list wrapped as `{skills, warnings}`). */
export function skillsPort(store: SkillStore): SkillsPort {
  return {
    list: () => ({ skills: store.list(), warnings: store.warnings() }),
    view: (name, filePath) => store.view(name, filePath),
    manage: (args, opts) => store.manage(args, opts),
  };
}

/** The services over given stores: the one place both the daemon (service.ts) and standalone callers build them. */
export function agentServicesOver(config: HermesConfig, stores: { memory: Memories; db: SessionDB; skills: SkillStore }): AgentServices {
  const { db } = stores;
  return {
    config,
    memory: stores.memory,
    sessions: db,
    // A model is calling: a limit or window past its maximum is clamped, and the result says so.
    sessionSearch: (args, o) => sessionSearch(db, args, { repo: o.repo, currentSessionId: o.sessionId, clamp: true }),
    skills: skillsPort(stores.skills),
  };
}

/** The repository memory of the work tree `root`, or none when `root` is not in a git work tree. */
function repoMemoryDir(home: string, root: string): string | undefined {
  try {
    return projectDir(home, findRepo(root).commonDir);
  } catch {
    return undefined;
  }
}

export type StandaloneOptions = { root: string; home: string; env?: NodeJS.ProcessEnv; config?: HermesConfig; db?: SessionDB };

/** Services over `home` ($HERMES_HOME) and the work tree `root`; close the returned db when done. */
export function createAgentServices(opts: StandaloneOptions): AgentServices {
  const config = opts.config ?? loadConfig({ root: opts.root, home: opts.home, env: opts.env ?? {} });
  return agentServicesOver(config, {
    memory: new Memories({ globalDir: memoriesDir(opts.home), repoDir: repoMemoryDir(opts.home, opts.root), limits: () => config.memory }),
    db: opts.db ?? new SessionDB(sessionDbPath(opts.home)),
    skills: new SkillStore({ home: opts.home, repoRoot: opts.root }),
  });
}
