/**
 * Which instruction files each agent loads on its own from a repository, and how hermesd makes
 * it see the repository's one authority (context/authority.ts): by the agent's own setting where
 * it has one, else as context at session start, never twice. Written once, here: `init --agents`
 * (the settings), the session-start context, `context --agents` and `check --context` all read it.
 *
 * Sources (each agent's docs, checked against the real client where one is on npm):
 * - Claude Code: CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md in the working directory and
 *   each directory above it (code.claude.com/docs/en/memory); no setting names other files.
 * - Codex: per directory from the git root down to the working directory, the first of
 *   AGENTS.override.md, AGENTS.md, then `project_doc_fallback_filenames` (config.toml)
 *   (developers.openai.com/codex/guides/agents-md).
 * - Gemini CLI: GEMINI.md in the workspace and its parents, or the names of `context.fileName`
 *   in .gemini/settings.json (geminicli.com/docs/cli/gemini-md).
 * - Cursor: .cursor/rules/*.mdc, the legacy .cursorrules, and AGENTS.md (cursor.com/docs/rules);
 *   no setting names other files.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { AgentName } from '../hook-client/agent-hooks.js';
import { AGENT_NAMES } from '../hook-client/agent-hooks.js';
import { chainDirs, type AuthoritySource } from '../context/authority.js';

/** What an agent loads on its own, before hermesd changes anything. */
export type NativeReading = {
  /** Names looked for in each directory from the git root down to the working directory, in the order the agent tries them. */
  names: readonly string[];
  /** Only the first existing name of a directory is read (Codex); otherwise every one. */
  firstPerDirectory: boolean;
  /** Folders whose `.mdc` files are read whole, relative to the working directory (Cursor's rules). */
  ruleDirs: readonly string[];
  /** The setting in the agent's project config that names the files it reads, when it has one. */
  setting?: { file: string; key: string };
};

export const NATIVE_READING: Readonly<Record<AgentName, NativeReading>> = {
  claude: { names: ['CLAUDE.md', join('.claude', 'CLAUDE.md'), 'CLAUDE.local.md'], firstPerDirectory: false, ruleDirs: [] },
  codex: {
    names: ['AGENTS.override.md', 'AGENTS.md'],
    firstPerDirectory: true,
    ruleDirs: [],
    setting: { file: join('.codex', 'config.toml'), key: 'project_doc_fallback_filenames' },
  },
  gemini: { names: ['GEMINI.md'], firstPerDirectory: false, ruleDirs: [], setting: { file: join('.gemini', 'settings.json'), key: 'context.fileName' } },
  cursor: { names: ['AGENTS.md', '.cursorrules'], firstPerDirectory: false, ruleDirs: [join('.cursor', 'rules')] },
};

/** How the authority reaches an agent: it reads it already; hermesd's setting names it; hermesd gives it at session start; there is none. */
export type Delivery = 'native' | 'setting' | 'session-start' | 'none';

/** One agent's view of a repository. Paths are relative to the git root, with `/`. */
export type AgentView = {
  agent: AgentName;
  /** What the agent reads on its own (no setting of hermesd's applied). */
  reads: string[];
  /** The authority's files, as context/authority.ts chose them. */
  authority: string[];
  delivery: Delivery;
  /** Files the agent reads (on its own or through the setting) that are not the authority: they may contradict it. */
  shadowed: string[];
};

const rel = (root: string, p: string) => relative(root, p).split(sep).join('/');

/** The files an agent reads on its own, from the git root down to `cwd` (paths relative to root). */
export function nativeReads(agent: AgentName, root: string, cwd: string = root): string[] {
  const r = NATIVE_READING[agent];
  const out: string[] = [];
  for (const dir of chainDirs(cwd, root)) {
    for (const name of r.names) {
      if (!existsSync(join(dir, name))) continue;
      out.push(rel(root, join(dir, name)));
      if (r.firstPerDirectory) break;
    }
  }
  for (const d of r.ruleDirs) {
    let names: string[] = [];
    try {
      names = readdirSync(join(cwd, d))
        .filter((n) => n.endsWith('.mdc'))
        .sort();
    } catch {
      // no rules folder
    }
    out.push(...names.map((n) => rel(root, join(cwd, d, n))));
  }
  return out;
}

/**
 * How hermesd makes `agent` see the authority (`source`, `files` relative to root). A first
 * version: the helper of the authority issue refines it against the real clients.
 */
export function deliveryFor(agent: AgentName, source: AuthoritySource | undefined, files: string[], reads: string[]): Delivery {
  if (!source || files.length === 0) return 'none';
  if (files.every((f) => reads.includes(f))) return 'native';
  const setting = NATIVE_READING[agent].setting;
  // A setting names files by their base name: it can only stand for an authority of plain files.
  if (setting && source !== 'cursor') return 'setting';
  return 'session-start';
}

/** Every agent's view of the repository at `root` (sessions started at `cwd`, the root by default). */
export function agentViews(root: string, authority: { source: AuthoritySource | undefined; files: Array<{ path: string }> }, cwd: string = root): AgentView[] {
  const files = authority.files.map((f) => rel(root, f.path));
  return AGENT_NAMES.map((agent) => {
    const reads = nativeReads(agent, root, cwd);
    const delivery = deliveryFor(agent, authority.source, files, reads);
    return { agent, reads, authority: files, delivery, shadowed: reads.filter((p) => !files.includes(p)) };
  });
}
