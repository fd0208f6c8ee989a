/**
 * Do the agents' configs still run hermesd? An agent's settings are edited by hand and by the
 * agent itself (Claude Code rewrites .claude/settings.json when a permission is granted, Gemini
 * CLI its settings.json), and a merge can drop an entry: each turns hermesd off for that agent
 * without a word. `doctor` says so, with the fix. Plain reads of the files init wrote, and of
 * Codex's trust of the project and its hooks (codex-trust.ts).
 */
import { readTextIfAny } from '../storage/read.js';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Repo } from '../githooks/install.js';
import { AGENT_STUB, agentRunnerPath, goneAgentStubs, MAIN_TREE_AGENT_RUNNER, MCP_STUB, mcpRunnerPath } from '../paths/index.js';
import { MCP_SERVER_NAME } from '../protocol/mcp.js';
import { codexHome, codexTrustProblem } from './codex-trust.js';
import { findOnPath } from '../process/path.js';
import { AGENT_NAMES, type AgentName } from '../protocol/agent-hooks.js';
import { parseJsonc } from './json-edit.js';
import { hookEntries, installedAgents, isOurHook, jsonPlans } from './install.js';
import { parseToml } from './toml-edit.js';

export type AgentHealth = {
  agent: AgentName;
  /** Not on this machine (why we think so): nothing runs its configs, so nothing in them is a problem yet. */
  notInstalled?: string;
  /** What is missing or broken, each naming the file. */
  problems: string[];
  /** The entries are there, but the agent will not run them (Codex: an untrusted project, unreviewed hooks), and what to do. */
  skipped?: { detail: string; fix: string };
};

export type AgentsHealth = {
  /** The agents `init --agents` set up in this work tree (none: not set up). */
  installed: AgentName[];
  agents: AgentHealth[];
  /** Not set up here, but these agents' committed configs run hermesd (a teammate's init). */
  unsetUp: AgentName[];
};

const CONFIG_FILES: Record<AgentName, string[]> = {
  claude: ['.claude/settings.json', '.mcp.json'],
  codex: ['.codex/hooks.json', '.codex/config.toml'],
  cursor: ['.cursor/hooks.json', '.cursor/mcp.json'],
  gemini: ['.gemini/settings.json'],
};

/**
 * How to tell an agent is on this machine: its command on PATH, or the folder it keeps its own
 * state in (made by its first run; Cursor's app need not put a command on PATH).
 */
const PRESENCE: Record<AgentName, { commands: string[]; stateDir: (env: NodeJS.ProcessEnv) => string }> = {
  claude: { commands: ['claude'], stateDir: (env) => env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude') },
  codex: { commands: ['codex'], stateDir: codexHome },
  cursor: { commands: ['cursor', 'cursor-agent'], stateDir: (env) => join(env.HOME || homedir(), '.cursor') },
  gemini: { commands: ['gemini'], stateDir: (env) => join(env.HOME || homedir(), '.gemini') },
};

/** Why `agent` looks not installed here (no command on PATH, no state folder), or undefined when it is. */
export function agentAbsence(agent: AgentName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { commands, stateDir } = PRESENCE[agent];
  if (commands.some((c) => findOnPath(c, env)) || existsSync(stateDir(env))) return undefined;
  return `no ${commands.join(' or ')} command on PATH, no ${stateDir(env)}`;
}

function read(root: string, rel: string): string | undefined {
  return readTextIfAny(join(root, rel));
}

/** The value of a JSON(C) file, or why it has none. */
function jsonOf(root: string, rel: string): { value: unknown } | { problem: string } {
  const text = read(root, rel);
  if (text === undefined) return { problem: `${rel} is gone` };
  try {
    return { value: parseJsonc(text, rel).value };
  } catch (err) {
    return { problem: (err as Error).message.split('\n')[0]! };
  }
}

const hookList = (value: unknown, event: string): unknown[] => {
  const list = (value as { hooks?: Record<string, unknown> } | null)?.hooks?.[event];
  return Array.isArray(list) ? list : [];
};

/**
 * The events of `agent` whose hermesd hook is not in `value` (a parsed hook config). Either
 * reading of an event's entries counts: an entry from before the split still judges every call.
 */
function missingHooks(agent: AgentName, value: unknown): string[] {
  const events = [...new Set(hookEntries(agent).map((e) => e.event))];
  return events.filter((event) => !hookList(value, event).some((v) => isOurHook(v, agent, event)));
}

function checkAgent(root: string, agent: AgentName): string[] {
  const problems: string[] = [];
  const hooksMissing = (file: string, events: string[]) => {
    if (events.length) problems.push(`${file} lacks hermesd's ${events.join(', ')} hook${events.length > 1 ? 's' : ''}`);
  };
  if (agent === 'codex') {
    let toml: Record<string, unknown> | undefined;
    const tomlText = read(root, '.codex/config.toml');
    if (tomlText === undefined) problems.push('.codex/config.toml is gone');
    else {
      try {
        toml = parseToml(tomlText, '.codex/config.toml');
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    const servers = toml?.mcp_servers as Record<string, unknown> | undefined;
    if (toml && !(servers && typeof servers === 'object' && MCP_SERVER_NAME in servers))
      problems.push(`.codex/config.toml lacks [mcp_servers.${MCP_SERVER_NAME}]`);
    // hermesd's hooks are in hooks.json, or in [hooks] of config.toml where the user keeps theirs.
    if (existsSync(join(root, '.codex/hooks.json'))) {
      const j = jsonOf(root, '.codex/hooks.json');
      if ('problem' in j) problems.push(j.problem);
      else hooksMissing('.codex/hooks.json', missingHooks('codex', j.value));
    } else if (toml) hooksMissing('.codex/config.toml', missingHooks('codex', toml));
    return problems;
  }
  for (const plan of jsonPlans(agent, { codexHooksInToml: false })) {
    const j = jsonOf(root, plan.file);
    if ('problem' in j) {
      problems.push(j.problem);
      continue;
    }
    for (const add of plan.additions) {
      if (add.key !== MCP_SERVER_NAME) continue;
      const servers = (j.value as Record<string, unknown> | null)?.[add.path[0]!];
      if (!(servers && typeof servers === 'object' && MCP_SERVER_NAME in servers))
        problems.push(`${plan.file} lacks the ${MCP_SERVER_NAME} MCP server (${add.path.join('.')}.${MCP_SERVER_NAME})`);
    }
    if (plan.additions.some((add) => add.ours)) hooksMissing(plan.file, missingHooks(agent, j.value));
  }
  return problems;
}

/** The agents whose committed configs run hermesd's stubs. */
function agentsRunningHermesd(root: string): AgentName[] {
  return AGENT_NAMES.filter((a) =>
    CONFIG_FILES[a].some((f) => {
      const text = read(root, f);
      return text !== undefined && (text.includes(AGENT_STUB) || text.includes(MCP_STUB));
    }),
  );
}

export function agentsHealth(repo: Repo, env: NodeJS.ProcessEnv = process.env): AgentsHealth {
  const installed = installedAgents(repo) ?? [];
  if (installed.length === 0) return { installed, agents: [], unsetUp: agentsRunningHermesd(repo.root) };
  const shared: string[] = [];
  for (const stub of goneAgentStubs(repo.root)) {
    // The hook commands find the runner without the stub in the main work tree (install.ts hookCommand); the MCP registrations do not.
    const reached = stub === AGENT_STUB && existsSync(join(repo.root, MAIN_TREE_AGENT_RUNNER));
    shared.push(
      reached
        ? `${stub} is gone (the hooks still reach hermesd here, through the runner in .git/hermesd; a linked work tree or a teammate's clone runs nothing without it)`
        : `${stub} is gone`,
    );
  }
  for (const runner of [agentRunnerPath(repo.commonDir), mcpRunnerPath(repo.commonDir)]) if (!existsSync(runner)) shared.push(`${runner} is gone`);
  return {
    installed,
    agents: installed.map((agent): AgentHealth => {
      const notInstalled = agentAbsence(agent, env);
      if (notInstalled) return { agent, problems: [], notInstalled };
      const problems = [...shared, ...checkAgent(repo.root, agent)];
      const skipped = agent === 'codex' && problems.length === 0 ? codexTrustProblem(repo.root, env) : undefined;
      return skipped ? { agent, problems, skipped } : { agent, problems };
    }),
    unsetUp: [],
  };
}
