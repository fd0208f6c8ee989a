/**
 * What the agent needs from the rest of hermesd, as one plain object: the configuration and
 * the stores the tools read and write (a write's judgement is the guard's: src/guard/tool-judge.ts). The daemon
 * builds it from its services (src/server/services/agent.ts); tests and the benchmark build it from
 * the same core classes over temp directories. Tools see nothing else of the process.
 */
import type { HermesConfig } from '../config/schema.js';
import type { GuardPort } from '../guard/terminal-guard.js';
import type { Memories } from '../memory/memories.js';
import type { SessionDB } from '../sessions/db.js';
import type { SessionSearchArgs } from '../sessions/search-tool.js';
import type { SkillManageArgs } from '../skills/schema.js';
import type { PlacementAnswer } from '../placement/place.js';

/** The skill operations the three skill tools call; results are returned to the model as JSON. */
export interface SkillsPort {
  list(): unknown;
  view(name: string, filePath?: string): unknown;
  manage(args: SkillManageArgs, opts: { sessionId: string }): unknown | Promise<unknown>;
}

export interface AgentServices {
  /** The configuration in force when the session started. */
  config: HermesConfig;
  /** The global MEMORY.md and USER.md, and this repository's MEMORY.md. */
  memory: Memories;
  sessions: SessionDB;
  /** The session_search tool's modes (discover by query, window around a message, one session). */
  sessionSearch(args: SessionSearchArgs, opts: { repo: string; sessionId: string }): unknown;
  skills: SkillsPort;
  /** The daemon's side of the terminal guard (agent socket, known secret values); absent in a standalone run. */
  guard?: GuardPort;
  /** Removes the known secret values (and their encodings) from a tool result; absent in a standalone run. */
  redactValues?: (text: string) => string;
  /** remember: who owns a sentence, and a pending proposal for it (the daemon's placement service); absent in a standalone run. */
  placement?: (sentence: string, opts: { sessionId: string; signal: AbortSignal }) => Promise<PlacementAnswer>;
}
