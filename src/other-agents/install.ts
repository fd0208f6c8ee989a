/**
 * `hermesd init --agents`: hermesd's hook entries and MCP registration in each agent's
 * project config, merged into what is there, and `--uninstall`, which gives every file back.
 *
 * | agent       | hooks                                   | MCP server                          |
 * |-------------|-----------------------------------------|-------------------------------------|
 * | Claude Code | `.claude/settings.json` `hooks`         | `.mcp.json` `mcpServers.hermesd`    |
 * | Codex       | `.codex/hooks.json` (or `[hooks]` in config.toml when that is where yours are) | `[mcp_servers.hermesd]` in `.codex/config.toml` |
 * | Cursor      | `.cursor/hooks.json` (`version: 1`)     | `.cursor/mcp.json` `mcpServers.hermesd` |
 * | Gemini CLI  | `.gemini/settings.json` `hooks`         | `.gemini/settings.json` `mcpServers.hermesd` |
 *
 * Where the repository's authority (context/authority.ts) is a file an agent does not read on
 * its own, the agent's setting names it: Gemini CLI's `context.fileName`, Codex's
 * `project_doc_fallback_filenames` (instruction-files.ts decides; the others get it at session start).
 *
 * Every hook runs `.hermes/agent-hook <agent> <event>`, and every MCP registration
 * `sh .hermes/mcp`: small sh stubs committed with the configs, so the entries name no path
 * of any machine. In a clone where hermesd is set up, a stub sources its runner in the git
 * dir (src/hook-client/runners/agent-hook.sh, mcp.sh, with this install's node, daemon and
 * client baked in); elsewhere the hook stub does nothing and the MCP stub says on stderr that
 * hermesd is not set up in this clone. The entries never change between runs of init
 * (Codex asks to trust a hook again when its hash changes, Gemini warns when its name or
 * command does).
 *
 * What init added is recorded in `<git-dir>/hermesd/agents.json`: each file's bytes before
 * (or that it did not exist) and the entries added. Uninstall puts a file back byte for byte
 * when it is as init left it; when it was edited since, only hermesd's entries come out
 * (and containers hermesd created, when they are empty again); a file hermesd created and
 * that holds nothing else is removed.
 */
import { readTextIfAny } from '../storage/read.js';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, UsageError } from '../errors/index.js';
import type { Repo } from '../githooks/install.js';
import { agentRunnerScript, mcpRunnerScript, runnerFile } from '../hook-client/runners.js';
import { sha256 } from '../text/hash.js';
import { AGENT_STUB, agentRunnerPath, agentsRecordPath, MAIN_TREE_AGENT_RUNNER, MCP_STUB, mcpRunnerPath, worktreeGitDirs } from '../paths/index.js';
import { FORWARDED_ENV, MCP_SERVER_NAME } from '../protocol/mcp.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { AGENT_NAMES, type AgentName } from '../protocol/agent-hooks.js';
import { insertAt, nodeAt, parseJsonc, removeAt, toValue, type JsonNode } from './json-edit.js';
import { appendBlock, parseToml, prependBlock, tomlArray, tomlKey, tomlString, userDataKept, withoutBlock, withoutTopBlock } from './toml-edit.js';
import { codexUserConfig } from './codex-trust.js';
import { codexProfileDefault, codexProfileTables } from './codex-profile.js';
import type { CodexProfile } from '../guard/agent-shell.js';
import type { AuthoritySource } from '../context/authority.js';
import { agentView, agentViews, NATIVE_READING, settingFor } from './instruction-files.js';

/** Each committed stub and the file in src/hook-client/runners/ it is a copy of. */
const STUBS: Record<string, string> = { [AGENT_STUB]: 'agent-stub.sh', [MCP_STUB]: 'mcp-stub.sh' };
const isStub = (rel: string): boolean => Object.hasOwn(STUBS, rel);
/** The agents' folders: an agent whose folder exists is set up by `init --agents` without a list. */
export const AGENT_DIRS: Record<AgentName, string> = { claude: '.claude', codex: '.codex', cursor: '.cursor', gemini: '.gemini' };

/**
 * The agent's own bound on one hook run (seconds; Gemini: milliseconds). Above hermesd's own
 * bound (agents.timeoutMs) plus a daemon start, so hermesd's onUnavailable decides, not the
 * agent's timeout (which lets the call through).
 */
const AGENT_HOOK_TIMEOUT_S = 30;
/** Codex caps SessionEnd hooks at 3 s; Claude Code waits for SessionEnd hooks before it exits. */
const SESSION_END_TIMEOUT_S = { claude: 10, codex: 3 } as const;

export type JsonEntry = { path: string[]; key?: string; value: unknown; created: string[][] };
type FileRecord = {
  /** Relative to the work tree root. */
  path: string;
  /** base64 of the bytes before init, null when hermesd created the file. */
  before: string | null;
  beforeMode?: number;
  /** sha256 of what init left. */
  after: string;
  format: 'json' | 'toml' | 'file';
  entries: JsonEntry[];
  /** TOML: the block appended. */
  inserted?: string;
  /** TOML: the block put first (top-level keys). */
  insertedTop?: string;
  /** TOML: a line of yours hermesd changed in place (your `project_doc_fallback_filenames` with the authority's names added): `from` is yours. */
  replaced?: { from: string; to: string };
  /** Directories init created for the file (deepest last). */
  createdDirs: string[];
};

/** `runner` and `mcpRunner`: the local runners init wrote (absent in records of earlier versions: the MCP one). */
type AgentsState = { version: 1; agents: AgentName[]; runner: string; mcpRunner?: string; files: FileRecord[]; installedAt: string };

export type AgentsInstallReport = {
  root: string;
  /** The permission profile Codex runs by default here, as written now (absent when your config chooses Codex's sandbox). */
  codexProfile?: string;
  agents: AgentName[];
  /** Files written or changed now. */
  changed: string[];
  /** Files that already held hermesd's entries. */
  unchanged: string[];
  /** Files to commit so teammates' agents run the hooks. */
  commit: string[];
  runner: string;
  notes: string[];
};

export type AgentsUninstallReport = { restored: string[]; removed: string[]; unblocked: string[]; kept: string[]; wasInstalled: boolean };

const statePath = (repo: Repo): string => agentsRecordPath(repo.gitDir);

function readState(repo: Repo): AgentsState | undefined {
  try {
    const s = JSON.parse(readFileSync(statePath(repo), 'utf8')) as AgentsState;
    return s.version === 1 ? s : undefined;
  } catch {
    return undefined;
  }
}

/** The agents `init --agents` set up in this work tree (none: undefined). */
export function installedAgents(repo: Repo): AgentName[] | undefined {
  return readState(repo)?.agents;
}

/** The agents whose config folder exists in the work tree. */
export function detectAgents(root: string): AgentName[] {
  return AGENT_NAMES.filter((a) => {
    try {
      return statSync(join(root, AGENT_DIRS[a])).isDirectory();
    } catch {
      return false;
    }
  });
}

/** `claude,codex` / `all` / '' (detect) → agent names; a clear error for anything else. */
export function parseAgentList(list: string | true | undefined, root: string): AgentName[] {
  if (list === undefined || list === true || list === '') return detectAgents(root);
  const names = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes('all')) return [...AGENT_NAMES];
  const aliases: Record<string, AgentName> = { 'claude-code': 'claude', 'gemini-cli': 'gemini' };
  const out: AgentName[] = [];
  for (const n of names) {
    const a = (aliases[n] ?? n) as AgentName;
    if (!(AGENT_NAMES as readonly string[]).includes(a))
      throw new UsageError(`--agents: unknown agent "${n}"; use ${AGENT_NAMES.join(', ')} or all (comma-separated).`);
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

// ---- what each agent gets --------------------------------------------------------------

/**
 * Shell (POSIX, builtins only) that sets `d` to the nearest directory from `$PWD` up holding one
 * of `files` (relative paths), else runs `none` (which must leave: `exit …`): how Codex's hook
 * commands and its MCP registration find the work tree, which Codex names to neither.
 */
function walkUpTo(files: string[], none: string): string {
  return `d=$PWD; until ${files.map((f) => `[ -f "$d/${f}" ]`).join(' || ')}; do [ -n "$d" ] || ${none}; d=\${d%/*}; done;`;
}

/**
 * The hook command for one agent and event: the committed stub, found the way each agent's
 * docs say. The command checks that the stub is there first: `sh` on a missing file exits 2,
 * which every agent takes for a refusal of the call. Where the stub is gone but the clone still
 * has hermesd's runner (`git clean -fdx`, a hard reset or a checkout that took the stub while
 * the configs still run it, in the main work tree), the command sources the runner itself: the
 * hooks keep judging instead of doing nothing without a word. Neither there (hermesd
 * uninstalled while a session still runs the old entries): the call goes on.
 *
 * `small`: the entry is for tools whose payloads are a command or a path (Bash, Read, Grep…),
 * and the hook reads the payload with the shell's own `read` instead of starting `cat`
 * (a process less per call: docs/benchmarks.md#agent-hooks). `read` takes one system call per byte, so the tools whose
 * payloads carry a file's content (Write, Edit, apply_patch…) keep `cat`.
 */
export function hookCommand(agent: AgentName, event: string, small = false): string {
  const args = `${agent} ${event}${small ? ' small' : ''}`;
  // The runner in the main work tree's git dir, where the stub would find it (a linked work tree's .git is a file: there the stub is needed).
  const RUNNER = MAIN_TREE_AGENT_RUNNER;
  // Where the agent runs the command with `sh -c` and names the root, the stub is sourced
  // into that shell: one sh start per call instead of two.
  const sourced = (root: string) =>
    `set -- ${args}; hermesd_root=${root}; if [ -f ${root}/${AGENT_STUB} ]; then . ${root}/${AGENT_STUB}; elif [ -f ${root}/${RUNNER} ]; then hermesd_gd=${root}/.git; . ${root}/${RUNNER}; fi`;
  switch (agent) {
    case 'claude':
      return sourced('"$CLAUDE_PROJECT_DIR"');
    case 'codex':
      // Codex runs hooks with the user's shell (`/bin/bash -c` for Codex 0.171 here; not always a POSIX one) in the
      // session's directory, which may be below the root, and no variable names the root. That shell is replaced
      // by sh (exec: no fork), which finds the root by walking up to the stub (or the runner) with builtins
      // and sources it: no `git rev-parse` and no second shell per call (each a process on every tool call).
      // Neither anywhere above (hermesd uninstalled): nothing to do, the call goes on.
      return `exec sh -c '${walkUpTo([AGENT_STUB, RUNNER], 'exit 0')} set -- ${args}; hermesd_root=$d; if [ -f "$d/${AGENT_STUB}" ]; then . "$d/${AGENT_STUB}"; else hermesd_gd=$d/.git; . "$d/${RUNNER}"; fi'`;
    case 'cursor':
      // Cursor runs project hooks from the project root.
      return `if [ -f ${AGENT_STUB} ]; then sh ${AGENT_STUB} ${args}; elif [ -f ${RUNNER} ]; then hermesd_root=. hermesd_gd=.git sh ${RUNNER} ${args}; fi`;
    case 'gemini':
      // Gemini replaces $GEMINI_PROJECT_DIR in the command with the shell-quoted directory itself: no quotes around it.
      return sourced('$GEMINI_PROJECT_DIR');
  }
}

type Handler = Record<string, unknown>;
const claudeHandler = (event: string, extra: Handler = {}, small = false): Handler => ({
  type: 'command',
  command: hookCommand('claude', event, small),
  timeout: AGENT_HOOK_TIMEOUT_S,
  ...extra,
});
const codexHandler = (event: string, timeout = AGENT_HOOK_TIMEOUT_S, small = false): Handler => ({
  type: 'command',
  command: hookCommand('codex', event, small),
  timeout,
});
const geminiHandler = (event: string, small = false): Handler => ({
  name: 'hermesd',
  type: 'command',
  command: hookCommand('gemini', event, small),
  timeout: AGENT_HOOK_TIMEOUT_S * 1000,
});

/**
 * The tools whose calls the guard judges (the rest are not worth a hook run each), in two
 * entries per agent: the tools with small payloads (a command, a path) and those whose
 * payloads carry a file's content.
 */
const JUDGED = {
  claude: { small: 'Bash|Read|Grep', content: 'Write|Edit|MultiEdit|NotebookEdit' },
  codex: { small: '^Bash$', content: '^apply_patch$' },
  gemini: { small: 'run_shell_command|read_file|read_many_files', content: 'write_file|replace' },
} as const;

/**
 * The shell tools, the only calls whose post-tool event has work (what the command changed of
 * the protected files is put back): a read's or a write's would cost a hook run each for
 * nothing. Transcripts are read at the end of each turn (Stop, AfterAgent) and of the session.
 */
const SHELL_TOOLS = { claude: 'Bash', codex: '^Bash$', gemini: 'run_shell_command' } as const;

/** One hermesd hook entry: the event, the value put in the event's list, and whether it reads its payload with `read`. */
export type HookEntry = { event: string; value: unknown; small?: true };

/** Hook groups (matcher + handlers) per event, in the three-level form of Claude Code, Codex and Gemini CLI. */
export function hookEntries(agent: AgentName): HookEntry[] {
  const group = (handler: Handler, matcher?: string) => (matcher ? { matcher, hooks: [handler] } : { hooks: [handler] });
  switch (agent) {
    case 'claude':
      return [
        { event: 'SessionStart', value: group(claudeHandler('SessionStart')) },
        { event: 'UserPromptSubmit', value: group(claudeHandler('UserPromptSubmit')) },
        { event: 'PreToolUse', value: group(claudeHandler('PreToolUse', {}, true), JUDGED.claude.small), small: true },
        { event: 'PreToolUse', value: group(claudeHandler('PreToolUse'), JUDGED.claude.content) },
        // Not async: after a shell call the hook puts back protected files the command changed and tells the model,
        // which an async hook's output does not reach. The transcript is read after the answer, as for every event.
        { event: 'PostToolUse', value: group(claudeHandler('PostToolUse'), SHELL_TOOLS.claude) },
        // A command that exited non-zero (a write the confinement refused, say) fires PostToolUseFailure instead.
        { event: 'PostToolUseFailure', value: group(claudeHandler('PostToolUseFailure'), SHELL_TOOLS.claude) },
        { event: 'Stop', value: group(claudeHandler('Stop')) },
        { event: 'SessionEnd', value: group({ ...claudeHandler('SessionEnd'), timeout: SESSION_END_TIMEOUT_S.claude }) },
      ];
    case 'codex':
      return [
        { event: 'SessionStart', value: group(codexHandler('SessionStart')) },
        { event: 'UserPromptSubmit', value: group(codexHandler('UserPromptSubmit')) },
        { event: 'PreToolUse', value: group(codexHandler('PreToolUse', AGENT_HOOK_TIMEOUT_S, true), JUDGED.codex.small), small: true },
        { event: 'PreToolUse', value: group(codexHandler('PreToolUse'), JUDGED.codex.content) },
        { event: 'PostToolUse', value: group(codexHandler('PostToolUse'), SHELL_TOOLS.codex) },
        { event: 'Stop', value: group(codexHandler('Stop')) },
        { event: 'SessionEnd', value: group(codexHandler('SessionEnd', SESSION_END_TIMEOUT_S.codex)) },
      ];
    case 'cursor':
      // beforeShellExecution carries a command; beforeReadFile carries the file's content, preToolUse any tool's input.
      // afterShellExecution (the command and its output): the check after a shell call, which puts back what it changed;
      // postToolUse: the answer that tells the model so (afterShellExecution takes none).
      return [
        'sessionStart',
        'beforeSubmitPrompt',
        'preToolUse',
        'beforeShellExecution',
        'afterShellExecution',
        'postToolUse',
        'beforeReadFile',
        'afterFileEdit',
        'stop',
        'sessionEnd',
      ].map((event) => {
        const small = event === 'beforeShellExecution';
        return { event, value: { command: hookCommand('cursor', event, small), timeout: AGENT_HOOK_TIMEOUT_S }, ...(small ? { small: true as const } : {}) };
      });
    case 'gemini':
      return [
        { event: 'SessionStart', value: group(geminiHandler('SessionStart')) },
        { event: 'BeforeAgent', value: group(geminiHandler('BeforeAgent')) },
        { event: 'BeforeTool', value: group(geminiHandler('BeforeTool', true), JUDGED.gemini.small), small: true },
        { event: 'BeforeTool', value: group(geminiHandler('BeforeTool'), JUDGED.gemini.content) },
        { event: 'AfterTool', value: group(geminiHandler('AfterTool'), SHELL_TOOLS.gemini) },
        { event: 'AfterAgent', value: group(geminiHandler('AfterAgent')) },
        { event: 'SessionEnd', value: group(geminiHandler('SessionEnd')) },
      ];
  }
}

/**
 * Whether a config value is one of hermesd's hook entries for `agent` and `event` (of any
 * hermesd version); with `small`, the entry of that reading only (an entry from before the
 * split, which reads with `cat`, counts as the `cat` one).
 */
export function isOurHook(value: unknown, agent: AgentName, event: string, small?: boolean): boolean {
  const text = JSON.stringify(value ?? null);
  if (!text.includes(AGENT_STUB) || !text.includes(` ${agent} ${event}`)) return false;
  return small === undefined || text.includes(` ${agent} ${event} small`) === small;
}

type JsonPlan = { file: string; additions: Array<{ path: string[]; key?: string; value: unknown; ours?: (v: unknown) => boolean }> };

/**
 * hermesd's MCP registration for one agent: `sh .hermes/mcp`, the stub found the way each
 * agent resolves a project path (docs/agents.md, "The MCP server"), and nothing of this
 * machine. Claude Code expands `${VAR:-default}` in args and env, but sets
 * CLAUDE_PROJECT_DIR only in the server's environment, hence the default (its working
 * directory is the project's); it forwards hermesd's variables by expansion, in case it
 * passes few. Cursor expands `${workspaceFolder}`. Gemini CLI reads the project's settings
 * from the directory it runs in and starts servers there, with its environment.
 */
function mcpValue(agent: Exclude<AgentName, 'codex'>): Record<string, unknown> {
  switch (agent) {
    case 'claude':
      return {
        type: 'stdio',
        command: 'sh',
        args: [`\${CLAUDE_PROJECT_DIR:-.}/${MCP_STUB}`],
        env: Object.fromEntries(FORWARDED_ENV.map((v) => [v, `\${${v}:-}`])),
      };
    case 'cursor':
      return { command: 'sh', args: [`\${workspaceFolder}/${MCP_STUB}`] };
    case 'gemini':
      return { command: 'sh', args: [MCP_STUB] };
  }
}

/**
 * Codex starts MCP servers in the session's directory, which may be below the root, and names
 * no project directory: the stub is found by walking up with builtins, as its hook commands do
 * (a `git rev-parse` was a git process on every session's way to its first model request).
 * Its stdio servers see only the variables listed in env_vars.
 */
const CODEX_MCP = {
  command: 'sh',
  args: [
    '-c',
    `${walkUpTo([MCP_STUB], `{ echo "hermesd: no ${MCP_STUB} in $PWD or above it: hermesd's MCP server is not in this repository" >&2; exit 1; }`)} exec sh "$d/${MCP_STUB}"`,
  ],
  env_vars: [...FORWARDED_ENV],
};

/** Where Claude Code's sandbox takes the paths its commands may not write (docs/agents.md, "Shell calls, confined"). */
export const CLAUDE_DENY_WRITE = ['sandbox', 'filesystem', 'denyWrite'];

export function jsonPlans(agent: AgentName, opts: { codexHooksInToml: boolean; denyWrite?: readonly string[] }): JsonPlan[] {
  const entries = hookEntries(agent);
  // Where an event has two entries, each is told from the other by its reading; a single entry is hermesd's entry of that event, whichever it was.
  const split = new Set(entries.filter((e, i) => entries.findIndex((x) => x.event === e.event) !== i).map((e) => e.event));
  const hooks = (file: string, extra: JsonPlan['additions'] = []): JsonPlan => ({
    file,
    additions: [
      ...extra,
      ...entries.map((e) => ({
        path: ['hooks', e.event],
        value: e.value,
        ours: (v: unknown) => isOurHook(v, agent, e.event, split.has(e.event) ? !!e.small : undefined),
      })),
    ],
  });
  const mcp = (a: Exclude<AgentName, 'codex'>): JsonPlan['additions'][number] => ({ path: ['mcpServers'], key: MCP_SERVER_NAME, value: mcpValue(a) });
  switch (agent) {
    case 'claude': {
      // The sandbox's paths after the hooks: a settings file reads hooks first, as before.
      const plan = hooks('.claude/settings.json');
      plan.additions.push(...(opts.denyWrite ?? []).map((value) => ({ path: CLAUDE_DENY_WRITE, value })));
      return [plan, { file: '.mcp.json', additions: [mcp(agent)] }];
    }
    case 'codex':
      return opts.codexHooksInToml ? [] : [hooks('.codex/hooks.json')];
    case 'cursor':
      return [hooks('.cursor/hooks.json', [{ path: [], key: 'version', value: 1 }]), { file: '.cursor/mcp.json', additions: [mcp(agent)] }];
    case 'gemini': {
      const plan = hooks('.gemini/settings.json');
      plan.additions.push(mcp(agent));
      return [plan];
    }
  }
}

/** The keys by which a Codex config chooses Codex's sandbox. */
const CODEX_SANDBOX_KEYS = ['default_permissions', 'sandbox_mode', 'sandbox_workspace_write'];

/**
 * Whether Codex runs hermesd's permission profile by default here: not where the project's
 * config or yours (`$CODEX_HOME/config.toml`) already chooses Codex's sandbox
 * (`default_permissions`, or the older `sandbox_mode` / `[sandbox_workspace_write]`, which do
 * not compose with a profile and which Codex prefers) — hermesd does not overrule that choice,
 * and says so.
 */
function codexProfileChoice(project: Record<string, unknown>, report: AgentsInstallReport): boolean {
  const user = codexUserConfig();
  const chosen = [
    ...CODEX_SANDBOX_KEYS.filter((k) => k in project).map((k) => `${k} in .codex/config.toml`),
    ...CODEX_SANDBOX_KEYS.filter((k) => k in user.parsed).map((k) => `${k} in ${user.path}`),
  ];
  if (!chosen.length) return true;
  report.notes.push(
    `Codex: your config chooses Codex's sandbox (${chosen.join(', ')}), so hermesd did not set its permission profile as the default; ` +
      "inside Codex's sandbox the paths rules protect are then put back after each shell call instead of being read-only (docs/agents.md shows the profile to use)",
  );
  return false;
}

/** Codex's `[mcp_servers.hermesd]` (and, when the user keeps Codex hooks in config.toml, hermesd's `[[hooks.…]]`), as TOML. */
function codexTomlBody(opts: { hooks: boolean; mcp: boolean; profile?: CodexProfile }): string {
  const lines: string[] = [];
  if (opts.mcp) {
    lines.push(
      `[mcp_servers.${MCP_SERVER_NAME}]`,
      `command = ${tomlString(CODEX_MCP.command)}`,
      `args = ${tomlArray(CODEX_MCP.args)}`,
      `env_vars = ${tomlArray(CODEX_MCP.env_vars)}`,
    );
  }
  // Codex's :workspace, with the guard's files and the protected paths read-only (guard/agent-shell.ts codexProfile).
  if (opts.profile) lines.push('', ...codexProfileTables(opts.profile));
  if (opts.hooks) {
    for (const e of hookEntries('codex')) {
      const g = e.value as { matcher?: string; hooks: Handler[] };
      lines.push('', `[[hooks.${e.event}]]`);
      if (g.matcher) lines.push(`matcher = ${tomlString(g.matcher)}`);
      for (const h of g.hooks) {
        lines.push('', `[[hooks.${e.event}.hooks]]`);
        for (const [k, v] of Object.entries(h)) lines.push(`${tomlKey(k)} = ${typeof v === 'string' ? tomlString(v) : String(v)}`);
      }
    }
  }
  return lines.join('\n').replace(/^\n+/, '') + '\n';
}

// ---- applying and undoing ----------------------------------------------------------------

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Adds one entry to a JSON text (see json-edit.ts); undefined when it is there already. */
function addJson(
  text: string,
  file: string,
  add: JsonPlan['additions'][number],
): { text: string; entry: JsonEntry } | { present: true; differs: boolean; existing?: unknown } {
  const { root } = parseJsonc(text, file);
  let node: JsonNode = root;
  let depth = 0;
  const full = add.path;
  while (depth < full.length) {
    if (node.kind !== 'object')
      throw new ConfigError(
        `${file}: ${full.slice(0, depth).join('.') || 'the document'} is not an object, so hermesd cannot add ${full.join('.')} to it; fix the file or add the entries by hand (docs/agents.md).`,
      );
    const child: JsonNode | undefined = node.members.find((m) => m.key === full[depth])?.value;
    if (!child) break;
    node = child;
    depth++;
  }
  if (node.kind !== 'object' && depth < full.length)
    throw new ConfigError(`${file}: ${full.slice(0, depth).join('.')} is not an object; hermesd cannot add its entries to it.`);
  if (depth < full.length) {
    let v: unknown = add.key !== undefined ? { [add.key]: add.value } : [add.value];
    for (let k = full.length - 1; k > depth; k--) v = { [full[k]!]: v };
    const created: string[][] = [];
    for (let k = depth; k < full.length; k++) created.push(full.slice(0, k + 1));
    return {
      text: insertAt(text, full.slice(0, depth), { key: full[depth]!, value: v }),
      entry: { path: add.path, ...(add.key !== undefined ? { key: add.key } : {}), value: add.value, created },
    };
  }
  if (add.key !== undefined) {
    if (node.kind !== 'object') throw new ConfigError(`${file}: ${full.join('.')} is not an object; hermesd cannot add "${add.key}" to it.`);
    const m = node.members.find((x) => x.key === add.key);
    if (m) return { present: true, differs: !deepEqual(toValue(m.value), add.value) };
    return { text: insertAt(text, full, { key: add.key, value: add.value }), entry: { path: add.path, key: add.key, value: add.value, created: [] } };
  }
  if (node.kind !== 'array') throw new ConfigError(`${file}: ${full.join('.')} is not a list; hermesd cannot add its hook to it.`);
  const items = node.items.map(toValue);
  if (items.some((it) => deepEqual(it, add.value))) return { present: true, differs: false };
  const existing = items.find((it) => add.ours?.(it));
  if (existing !== undefined) return { present: true, differs: true, existing };
  return { text: insertAt(text, full, { value: add.value }), entry: { path: add.path, value: add.value, created: [] } };
}

/** Takes hermesd's recorded entries out of a JSON text (the containers it created too, when empty again). */
export function removeJsonEntries(text: string, file: string, entries: readonly JsonEntry[]): { text: string; missing: number } {
  let missing = 0;
  for (const e of [...entries].reverse()) {
    const { root } = parseJsonc(text, file);
    const node = nodeAt(root, e.path);
    if (!node || node.kind === 'value') {
      missing++;
      continue;
    }
    const index =
      e.key !== undefined
        ? node.kind === 'object'
          ? node.members.findIndex((m) => m.key === e.key && deepEqual(toValue(m.value), e.value))
          : -1
        : node.kind === 'array'
          ? node.items.findIndex((it) => deepEqual(toValue(it), e.value))
          : -1;
    if (index < 0) {
      missing++;
      continue;
    }
    text = removeAt(text, [...e.path, e.key !== undefined ? e.key : index]);
  }
  const created = entries.flatMap((e) => e.created).sort((a, b) => b.length - a.length);
  for (const path of created) {
    const { root } = parseJsonc(text, file);
    const node = nodeAt(root, path);
    if (!node || (node.kind === 'object' && node.members.length) || (node.kind === 'array' && node.items.length) || node.kind === 'value') continue;
    const parent = nodeAt(root, path.slice(0, -1));
    if (parent?.kind !== 'object') continue;
    const index = parent.members.findIndex((m) => m.key === path[path.length - 1]);
    if (index >= 0) text = removeAt(text, path);
  }
  return { text, missing };
}

/** Files to back up: records `before` once per file (its state before the first init). */
function recordFor(state: AgentsState, root: string, rel: string, format: FileRecord['format']): FileRecord {
  let rec = state.files.find((f) => f.path === rel);
  if (!rec) {
    const abs = join(root, rel);
    let before: string | null = null;
    let beforeMode: number | undefined;
    try {
      before = readFileSync(abs).toString('base64');
      beforeMode = statSync(abs).mode & 0o777;
    } catch {
      before = null;
    }
    rec = { path: rel, before, ...(beforeMode !== undefined ? { beforeMode } : {}), after: '', format, entries: [], createdDirs: [] };
    state.files.push(rec);
  }
  return rec;
}

/**
 * A file changed since init wrote it (a hand edit, a merge, the agent rewriting its settings):
 * what uninstall gives back becomes the file as it is now without hermesd's part, so a later
 * uninstall keeps those changes instead of going back to the bytes before the first init.
 * Entries no longer in the file are forgotten (init adds them again).
 */
function rebase(rec: FileRecord, text: string | undefined): void {
  if (text === undefined) {
    // Gone: init writes it anew, as a file of its own.
    Object.assign(rec, { before: null, entries: [] });
    delete rec.beforeMode;
    delete rec.inserted;
    return;
  }
  let base = text;
  if (rec.format === 'json') {
    rec.entries = rec.entries.filter((e) => removeJsonEntries(text, rec.path, [e]).missing === 0);
    base = removeJsonEntries(text, rec.path, rec.entries).text;
    if (rec.before === null && deepEqual(parseJsonc(base, rec.path).value, {})) return;
  } else if (rec.format === 'toml') {
    const without = withoutBlock(text, rec.inserted);
    if (without === undefined) delete rec.inserted;
    else base = without;
    const top = withoutTopBlock(base, rec.insertedTop);
    if (top === undefined) delete rec.insertedTop;
    else base = top;
    if (rec.replaced && base.includes(rec.replaced.to)) base = undoReplaced(base, rec);
    else delete rec.replaced;
    if (rec.before === null && base.trim() === '') return;
  } else return;
  rec.before = Buffer.from(base, 'utf8').toString('base64');
}

function ensureDir(root: string, relDir: string, rec: FileRecord): void {
  const missing: string[] = [];
  let d = relDir;
  while (d && d !== '.' && !existsSync(join(root, d))) {
    missing.unshift(d);
    d = dirname(d);
  }
  for (const m of missing) {
    mkdirSync(join(root, m));
    if (!rec.createdDirs.includes(m)) rec.createdDirs.push(m);
  }
}

function writeRunner(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text, { mode: 0o755 });
  chmodSync(file, 0o755);
}

export type AgentsInstallOptions = {
  agents: AgentName[];
  nodePath: string;
  cliPath: string;
  timeoutMs: number;
  onUnavailable: 'allow' | 'block';
  /** What rules protect, as Claude Code's sandbox takes it (guard/agent-shell.ts agentSandboxDenyWrite). */
  denyWrite?: readonly string[];
  /** Codex's permission profile with the protected paths read-only (guard/agent-shell.ts codexProfile), given what this init creates besides. */
  codexProfile?: (alsoThere: readonly string[]) => CodexProfile;
  /** The repository's authority (context/authority.ts) for sessions at the root: the files, relative to the root, and its source. */
  authority?: { source: AuthoritySource | undefined; files: string[] };
};

export function installAgents(repo: Repo, opts: AgentsInstallOptions): AgentsInstallReport {
  const previous = readState(repo);
  const runners = { runner: agentRunnerPath(repo.commonDir), mcpRunner: mcpRunnerPath(repo.commonDir) };
  const report: AgentsInstallReport = { root: repo.root, agents: [], changed: [], unchanged: [], commit: [], runner: runners.runner, notes: [] };
  // No agent here and none set up before: nothing to write, not even the stubs.
  if (opts.agents.length === 0 && !previous) return report;
  const state: AgentsState = { ...(previous ?? { version: 1, agents: [], files: [], installedAt: new Date().toISOString() }), ...runners };
  const root = repo.root;
  const changedNow = new Set<string>();

  // Plan everything first and check it (a parse error names the file), then write.
  const writes = new Map<string, { rec: FileRecord; text: string }>();
  const current = (rel: string, format: FileRecord['format']): { rec: FileRecord; text: string } => {
    let w = writes.get(rel);
    if (!w) {
      const rec = recordFor(state, root, rel, format);
      const text = readTextIfAny(join(root, rel));
      if (rec.after && (text === undefined || sha256(text) !== rec.after)) rebase(rec, text);
      w = { rec, text: text ?? '' };
      writes.set(rel, w);
    }
    return w;
  };

  for (const agent of [...opts.agents].sort((a, b) => Number(a === 'codex') - Number(b === 'codex'))) {
    let codexHooksInToml = false;
    if (agent === 'codex') {
      const w = current('.codex/config.toml', 'toml');
      // hermesd's block from an earlier init, as it wrote it, is written again with this version's entries;
      // a block you edited since is left as it is.
      const mine = (inserted: string | undefined) => inserted === undefined || w.text.includes(inserted);
      if (mine(w.rec.inserted) && mine(w.rec.insertedTop)) {
        // hermesd's blocks as recorded (both found as written: checked above) come out; nothing else is taken for one.
        const body = w.rec.inserted ? withoutBlock(w.text, w.rec.inserted)! : w.text;
        let base = undoReplaced(w.rec.insertedTop ? withoutTopBlock(body, w.rec.insertedTop)! : body, w.rec);
        delete w.rec.replaced;
        const parsed = parseToml(base, '.codex/config.toml');
        // Codex merges hooks.json and [hooks] of one folder with a warning at every start; join the form already there.
        codexHooksInToml = 'hooks' in parsed && !existsSync(join(root, '.codex/hooks.json'));
        const mcpServers = parsed.mcp_servers as Record<string, unknown> | undefined;
        const hasMcp = !!mcpServers && typeof mcpServers === 'object' && MCP_SERVER_NAME in mcpServers;
        if (hasMcp) report.notes.push(`kept your own [mcp_servers.${MCP_SERVER_NAME}] in .codex/config.toml`);
        const hooksPresent = codexHooksInToml && JSON.stringify(parsed.hooks).includes(AGENT_STUB);
        // Codex comes last: the folders this init creates for the other agents are there for its profile.
        const creating = [...writes.keys(), ...Object.keys(STUBS)].map((f) => f.split('/')[0]!);
        const profile = opts.codexProfile && codexProfileChoice(parsed, report) ? opts.codexProfile(creating) : undefined;
        // The authority's names as fallbacks: added to your own list where you have one (that line changed in place), else in hermesd's top block.
        const fallback = codexFallback(root, base, parsed, opts.authority, report);
        if (fallback.replaced) {
          const merged = base.replace(fallback.replaced.from, fallback.replaced.to);
          if (!userDataKept(parsed, parseToml(merged, '.codex/config.toml')))
            throw new ConfigError(
              `adding the authority's names to your ${fallback.replaced.from} in .codex/config.toml would change settings of yours; add them by hand.`,
            );
          base = merged;
          w.rec.replaced = fallback.replaced;
        }
        w.text = base;
        delete w.rec.inserted;
        delete w.rec.insertedTop;
        const top = [fallback.top, profile ? codexProfileDefault(profile) : ''].join('');
        if (top && !(!hasMcp || (codexHooksInToml && !hooksPresent) || profile)) {
          const r = prependBlock(w.text, top, '.codex/config.toml');
          w.text = r.text;
          w.rec.insertedTop = r.inserted;
        }
        if (!hasMcp || (codexHooksInToml && !hooksPresent) || profile) {
          try {
            const r = appendBlock(base, codexTomlBody({ hooks: codexHooksInToml && !hooksPresent, mcp: !hasMcp, profile }), '.codex/config.toml');
            w.text = r.text;
            w.rec.inserted = r.inserted;
          } catch (err) {
            if (!codexHooksInToml) throw err;
            // Your [hooks] cannot take new array entries (an inline table): hermesd's hooks go to hooks.json.
            codexHooksInToml = false;
            const r = appendBlock(base, codexTomlBody({ hooks: false, mcp: !hasMcp, profile }), '.codex/config.toml');
            w.text = r.text;
            w.rec.inserted = r.inserted;
            report.notes.push(
              'your Codex hooks in .codex/config.toml are an inline table; hermesd wrote its hooks to .codex/hooks.json (Codex warns when a folder has both)',
            );
          }
          if (profile) report.codexProfile = profile.name;
          if (top) {
            const r = prependBlock(w.text, top, '.codex/config.toml');
            w.text = r.text;
            w.rec.insertedTop = r.inserted;
          }
        }
      } else codexHooksInToml = JSON.stringify(parseToml(w.text, '.codex/config.toml').hooks ?? null).includes(AGENT_STUB);
      if (codexHooksInToml)
        report.notes.push(
          "Codex: hermesd's hooks went to [hooks] in .codex/config.toml, where yours are (a .codex folder with both hooks.json and [hooks] makes Codex warn at every start)",
        );
    }
    for (const plan of jsonPlans(agent, { codexHooksInToml, denyWrite: opts.denyWrite })) {
      const w = current(plan.file, 'json');
      if (w.text.trim() === '' && w.rec.before === null) w.text = '{}\n';
      let contextWanted: unknown[] | undefined;
      if (agent === 'gemini' && plan.file === GEMINI_SETTINGS) {
        const c = geminiContextFile(root, w, opts.authority, report);
        plan.additions.push(...c.additions);
        contextWanted = c.wanted;
      }
      for (const add of plan.additions) {
        const r = addJson(w.text, plan.file, add);
        if ('present' in r) {
          if (!r.differs) continue;
          // hermesd's own entry from an earlier init (another version's) is replaced; one you wrote or edited is kept.
          const mine = w.rec.entries.find((e) => deepEqual(e.path, add.path) && (add.key !== undefined ? e.key === add.key : deepEqual(e.value, r.existing)));
          if (mine) {
            const removed = removeJsonEntries(w.text, plan.file, [{ ...mine, created: [] }]);
            const again = addJson(removed.text, plan.file, add);
            if (!('present' in again)) {
              w.text = again.text;
              mine.value = add.value;
            }
          } else if (add.key === MCP_SERVER_NAME) report.notes.push(`kept your own "${MCP_SERVER_NAME}" server in ${plan.file}`);
          continue;
        }
        w.text = r.text;
        w.rec.entries.push(r.entry);
      }
      if (agent === 'claude' && plan.file === '.claude/settings.json') w.text = dropStale(w.rec, w.text, plan.file, CLAUDE_DENY_WRITE, opts.denyWrite ?? []);
      if (contextWanted) w.text = dropStale(w.rec, w.text, plan.file, GEMINI_CONTEXT_LIST, contextWanted);
      // What the merge did must be undone exactly by the uninstall path, on the parsed values.
      const original = w.rec.before === null ? '{}' : Buffer.from(w.rec.before, 'base64').toString('utf8');
      const undone = removeJsonEntries(w.text, plan.file, w.rec.entries).text;
      if (!deepEqual(parseJsonc(undone, plan.file).value, parseJsonc(original.trim() === '' ? '{}' : original, plan.file).value)) {
        throw new ConfigError(`hermesd could not merge its entries into ${plan.file} without changing yours; add them by hand (docs/agents.md shows them).`);
      }
    }
    report.agents.push(agent);
  }
  report.agents.sort((a, b) => opts.agents.indexOf(a) - opts.agents.indexOf(b));
  for (const [rel, source] of Object.entries(STUBS)) current(rel, 'file').text = runnerFile(source);

  for (const [rel, w] of writes) {
    const abs = join(root, rel);
    const before = readTextIfAny(abs);
    if (before === w.text && (!isStub(rel) || (statSync(abs).mode & 0o111) !== 0)) {
      w.rec.after = sha256(w.text);
      if (w.rec.before === null || w.rec.entries.length || w.rec.inserted || w.rec.insertedTop || isStub(rel)) report.unchanged.push(rel);
      else state.files.splice(state.files.indexOf(w.rec), 1);
      continue;
    }
    ensureDir(root, dirname(rel), w.rec);
    // Atomically: an agent reading its settings while init writes sees the old file or the new one, never half of one.
    writeUserFile(abs, w.text, isStub(rel) ? 0o755 : undefined);
    w.rec.after = sha256(w.text);
    changedNow.add(rel);
  }
  report.changed = [...changedNow];
  // Nothing to give back for a file init read and left alone.
  state.files = state.files.filter(
    (f) =>
      f.before === null ||
      f.entries.length > 0 ||
      f.inserted ||
      f.insertedTop ||
      f.replaced ||
      isStub(f.path) ||
      Buffer.from(f.before, 'base64').toString('utf8') !== readTextIfAny(join(root, f.path)),
  );

  writeRunner(runners.runner, agentRunnerScript({ ...opts, commonDir: repo.commonDir }));
  writeRunner(runners.mcpRunner, mcpRunnerScript(opts));
  state.agents = [...new Set([...state.agents, ...report.agents])];
  mkdirSync(dirname(statePath(repo)), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(statePath(repo), JSON.stringify(state, null, 2) + '\n');

  report.commit = state.files.map((f) => f.path).filter((p) => existsSync(join(root, p)));
  if (opts.authority?.source) {
    // How the others see it, now that the settings are written.
    const views = agentViews(root, { source: opts.authority.source, files: opts.authority.files.map((f) => ({ path: join(root, f) })) });
    for (const v of views.filter((x) => report.agents.includes(x.agent) && x.delivery === 'session-start'))
      report.notes.push(`${AGENT_LABEL[v.agent]}: it does not read ${v.authority.join(', ')} itself; hermesd gives it as context at session start`);
  }
  for (const a of report.agents) report.notes.push(trustNote(a, root));
  return report;
}

/**
 * The list elements an earlier init added at `path` that are not `wanted` now (sandbox paths no
 * rule protects any more, names of an authority that has changed) come out, after this init's
 * entries went in; the containers such an entry created pass to an entry still there, or go
 * with the last one, so that uninstall still gives the file back as it was.
 */
function dropStale(rec: FileRecord, text: string, file: string, path: readonly string[], wanted: readonly unknown[]): string {
  const here = (e: JsonEntry) => deepEqual(e.path, path) && e.key === undefined;
  const stale = rec.entries.filter((e) => here(e) && !wanted.includes(e.value));
  if (!stale.length) return text;
  const heir = rec.entries.find((e) => here(e) && !stale.includes(e));
  rec.entries = rec.entries.filter((e) => !stale.includes(e));
  if (heir) heir.created.push(...stale.flatMap((e) => e.created));
  return removeJsonEntries(
    text,
    file,
    stale.map((e) => (heir ? { ...e, created: [] } : e)),
  ).text;
}

// ---- the authority, through the agent's own setting (instruction-files.ts) --------------------

const AGENT_LABEL: Record<AgentName, string> = { claude: 'Claude Code', codex: 'Codex', cursor: 'Cursor', gemini: 'Gemini CLI' };
const GEMINI_SETTINGS = '.gemini/settings.json';
const GEMINI_CONTEXT = ['context'];
const GEMINI_CONTEXT_LIST = ['context', 'fileName'];
const CODEX_FALLBACK = NATIVE_READING.codex.setting!.key;

/** Where the authority is not read by an agent's setting but given at session start, and why: one note. */
function sessionStartNote(agent: string, why: string): string {
  return `${agent}: ${why}; hermesd gives the authority as context at session start instead`;
}

/**
 * Gemini CLI's `context.fileName`: the names it reads instead of GEMINI.md. Where you have none,
 * hermesd's entry is GEMINI.md (so yours, and ~/.gemini/GEMINI.md, are still read) and the
 * authority's names; where you have a list, the authority's names are added to it. `wanted`:
 * the elements hermesd's own entries of your list may hold now (the rest come out).
 */
function geminiContextFile(
  root: string,
  w: { rec: FileRecord; text: string },
  authority: AgentsInstallOptions['authority'],
  report: AgentsInstallReport,
): { additions: JsonPlan['additions']; wanted: unknown[] } {
  const mineKey = w.rec.entries.find((e) => deepEqual(e.path, GEMINI_CONTEXT) && e.key === 'fileName');
  const node = nodeAt(parseJsonc(w.text, GEMINI_SETTINGS).root, GEMINI_CONTEXT_LIST);
  const yours = mineKey || !node ? undefined : toValue(node);
  const view = authority && agentView('gemini', root, { source: authority.source, files: authority.files.map((f) => ({ path: join(root, f) })) });
  if (!view || view.delivery === 'none' || view.delivery === 'native' || authority?.source === 'cursor') {
    if (mineKey) w.text = removeJsonEntries(w.text, GEMINI_SETTINGS, [mineKey]).text;
    if (mineKey) w.rec.entries = w.rec.entries.filter((e) => e !== mineKey);
    return { additions: [], wanted: [] };
  }
  if (yours !== undefined && !Array.isArray(yours)) {
    report.notes.push(
      sessionStartNote('Gemini CLI', `your context.fileName in ${GEMINI_SETTINGS} is not a list, so hermesd did not add ${view.authority.join(', ')} to it`),
    );
    return { additions: [], wanted: [] };
  }
  // Your list: without the names an earlier init added to it (those are judged again here).
  const added = new Set(w.rec.entries.filter((e) => deepEqual(e.path, GEMINI_CONTEXT_LIST) && e.key === undefined).map((e) => e.value));
  const current = Array.isArray(yours) ? yours.filter((x): x is string => typeof x === 'string' && !added.has(x)) : undefined;
  const names = settingFor('gemini', root, view.authority, root, current);
  if (!names) {
    report.notes.push(sessionStartNote('Gemini CLI', `context.fileName cannot name ${view.authority.join(', ')} alone`));
    if (mineKey) {
      w.text = removeJsonEntries(w.text, GEMINI_SETTINGS, [mineKey]).text;
      w.rec.entries = w.rec.entries.filter((e) => e !== mineKey);
    }
    return { additions: [], wanted: [] };
  }
  report.notes.push(
    `Gemini CLI: context.fileName in ${GEMINI_SETTINGS} names ${names.join(', ')}, so it reads the authority (${view.authority.join(', ')}) itself`,
  );
  if (current) {
    const mine = names.filter((n) => !current.includes(n));
    return { additions: mine.map((value) => ({ path: GEMINI_CONTEXT_LIST, value })), wanted: mine };
  }
  return { additions: [{ path: GEMINI_CONTEXT, key: 'fileName', value: names }], wanted: [] };
}

/**
 * Codex's `project_doc_fallback_filenames` for the authority: a line for hermesd's top block,
 * or your own list (one line) with the authority's names added, changed in place. Nothing where
 * Codex reads the authority already, or where a fallback would not be read (an AGENTS.md in
 * the same directory comes first): the authority is given at session start there.
 */
function codexFallback(
  root: string,
  base: string,
  parsed: Record<string, unknown>,
  authority: AgentsInstallOptions['authority'],
  report: AgentsInstallReport,
): { top: string; replaced?: { from: string; to: string } } {
  const view = authority && agentView('codex', root, { source: authority.source, files: authority.files.map((f) => ({ path: join(root, f) })) });
  if (!view || view.delivery === 'none' || view.delivery === 'native') return { top: '' };
  if (authority?.source === 'cursor') return { top: '' };
  const yours = parsed[CODEX_FALLBACK];
  const current = Array.isArray(yours) ? yours.filter((x): x is string => typeof x === 'string') : undefined;
  const names = yours === undefined || current ? settingFor('codex', root, view.authority, root, current ?? []) : undefined;
  if (!names) {
    report.notes.push(
      sessionStartNote(
        'Codex',
        yours !== undefined && !current
          ? `your ${CODEX_FALLBACK} is not a list`
          : `it reads ${view.shadowed.join(', ') || 'another file'} before a fallback name in the same folder`,
      ),
    );
    return { top: '' };
  }
  report.notes.push(
    `Codex: ${CODEX_FALLBACK} in .codex/config.toml names ${names.join(', ')}, so it reads the authority (${view.authority.join(', ')}) itself`,
  );
  if (!current) return { top: `${CODEX_FALLBACK} = ${tomlArray(names)}\n` };
  const line = new RegExp(`^${CODEX_FALLBACK}[ \\t]*=[ \\t]*\\[[^\\]\\n]*\\][ \\t]*(#[^\\n]*)?$`, 'm').exec(base);
  if (!line) {
    report.notes.push(sessionStartNote('Codex', `your ${CODEX_FALLBACK} spans lines, so hermesd did not add to it`));
    return { top: '' };
  }
  if (names.length === current.length) return { top: '' };
  return {
    top: '',
    replaced: {
      from: line[0],
      to: `${CODEX_FALLBACK} = ${tomlArray(names)} # hermesd added ${names.slice(current.length).join(', ')} (hermesd init --uninstall takes them out)${line[1] ? ' ' + line[1] : ''}`,
    },
  };
}

/** The text with your line as it was, where hermesd changed it in place. */
function undoReplaced(text: string, rec: FileRecord): string {
  return rec.replaced && text.includes(rec.replaced.to) ? text.replace(rec.replaced.to, rec.replaced.from) : text;
}

function trustNote(agent: AgentName, root: string): string {
  switch (agent) {
    case 'claude':
      return 'Claude Code: the hooks run once the folder is trusted; it asks before it uses the project MCP server in .mcp.json';
    case 'codex':
      return (
        'Codex: it reads .codex/ (hermesd\'s hooks and MCP server) only in a trusted project: answer "trust" when Codex asks, or add ' +
        `[projects."${root}"] trust_level = "trusted" to ~/.codex/config.toml; then open /hooks in Codex and trust hermesd's hooks ` +
        '(it skips new or changed hooks until they are reviewed). `hermesd doctor` says whether Codex will run them'
      );
    case 'cursor':
      return 'Cursor: project hooks need workspace trust; enable the hermesd MCP server under Customize → MCPs';
    case 'gemini':
      return 'Gemini CLI: it shows a one-time warning for the new project hooks; in an untrusted folder it runs no project hooks or MCP servers';
  }
}

/**
 * Writes a file of the user's (an agent's settings) atomically — a temporary file in the same
 * folder, fsynced, renamed over it — with its own mode kept (new files: `mode`, else 0644).
 */
function writeUserFile(abs: string, data: string | Buffer, mode?: number): void {
  let keep: number | undefined;
  try {
    keep = statSync(abs).mode & 0o777;
  } catch {
    keep = undefined;
  }
  writeFileAtomicSync(abs, data, mode ?? keep ?? 0o644);
}

function putBack(abs: string, rec: FileRecord): 'restored' | 'removed' {
  if (rec.before === null) {
    rmSync(abs, { force: true });
    return 'removed';
  }
  mkdirSync(dirname(abs), { recursive: true });
  writeUserFile(abs, Buffer.from(rec.before, 'base64'), rec.beforeMode);
  return 'restored';
}

export function uninstallAgents(repo: Repo): AgentsUninstallReport {
  const state = readState(repo);
  const report: AgentsUninstallReport = { restored: [], removed: [], unblocked: [], kept: [], wasInstalled: state !== undefined };
  if (!state) return report;
  const root = repo.root;
  // The stubs last: each stays while a config still runs it (an entry you changed is not taken out).
  const keptStubs: FileRecord[] = [];
  const order = [...state.files].reverse().sort((a, b) => Number(isStub(a.path)) - Number(isStub(b.path)));
  for (const rec of order) {
    const abs = join(root, rec.path);
    let current: Buffer | undefined;
    try {
      current = readFileSync(abs);
    } catch {
      current = undefined;
    }
    if (isStub(rec.path) && current !== undefined) {
      const users = state.files.filter((f) => !isStub(f.path) && (readTextIfAny(join(root, f.path)) ?? '').includes(rec.path)).map((f) => f.path);
      if (users.length) {
        report.kept.push(`${rec.path} (still run by ${users.join(', ')}: take hermesd's entries out of them, then run hermesd init --uninstall again)`);
        keptStubs.push(rec);
        continue;
      }
    }
    if (current === undefined) {
      // Gone already (you removed it): a file that was there before comes back only if it was yours.
      if (rec.before !== null) report.kept.push(rec.path);
    } else if (sha256(current) === rec.after) {
      (putBack(abs, rec) === 'removed' ? report.removed : report.restored).push(rec.path);
    } else if (rec.format === 'json') {
      const text = current.toString('utf8');
      const { text: stripped } = removeJsonEntries(text, rec.path, rec.entries);
      const left = parseJsonc(stripped, rec.path).value;
      if (rec.before === null && deepEqual(left, {})) {
        rmSync(abs, { force: true });
        report.removed.push(rec.path);
      } else if (stripped !== text) {
        writeUserFile(abs, stripped);
        report.unblocked.push(rec.path);
      } else report.kept.push(rec.path);
    } else if (rec.format === 'toml') {
      const text = current.toString('utf8');
      const body = withoutBlock(text, rec.inserted);
      const top = withoutTopBlock(body ?? text, rec.insertedTop) ?? body;
      const stripped = rec.replaced && (top ?? text).includes(rec.replaced.to) ? undoReplaced(top ?? text, rec) : top;
      if (stripped === undefined) report.kept.push(rec.path);
      else if (rec.before === null && stripped.trim() === '') {
        rmSync(abs, { force: true });
        report.removed.push(rec.path);
      } else {
        writeUserFile(abs, stripped);
        report.unblocked.push(rec.path);
      }
    } else {
      // A stub, edited since: it is hermesd's file all the same (the configs that ran it are gone).
      (putBack(abs, rec) === 'removed' ? report.removed : report.restored).push(rec.path);
    }
  }
  // Folders init created (.claude, .hermes…), deepest first, once every file in them is back: those left empty go.
  const dirs = [...new Set(state.files.flatMap((f) => f.createdDirs))].sort((a, b) => b.length - a.length);
  for (const d of dirs) {
    try {
      if (readdirSync(join(root, d)).length === 0) {
        rmdirSync(join(root, d));
        report.removed.push(d + '/');
      }
    } catch {
      // not there, or not empty: left
    }
  }
  if (!otherAgentInstalls(repo)) for (const runner of [state.runner, state.mcpRunner ?? mcpRunnerPath(repo.commonDir)]) rmSync(runner, { force: true });
  // A kept stub stays on record, for the next uninstall (without its runner the hook stub does nothing, the MCP stub says so).
  if (keptStubs.length) writeFileAtomicSync(statePath(repo), JSON.stringify({ ...state, agents: [], files: keptStubs }, null, 2) + '\n');
  else rmSync(statePath(repo), { force: true });
  return report;
}

/** Whether another worktree of this clone has agents' hooks installed (they share the runner). */
function otherAgentInstalls(repo: Repo): boolean {
  return worktreeGitDirs(repo.commonDir)
    .map(agentsRecordPath)
    .some((f) => f !== statePath(repo) && existsSync(f));
}
