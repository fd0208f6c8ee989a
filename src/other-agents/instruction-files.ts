/**
 * Which instruction files each agent loads on its own from a repository, and how hermesd makes
 * it see the repository's one authority (context/authority.ts): by the agent's own setting where
 * it has one, else as context at session start, never twice. Written once, here: `init --agents`
 * (the settings), the session-start context, `context --agents` and `check --context` all read it.
 *
 * Sources (each agent's docs, checked against the real client where one is on npm):
 * - Claude Code: CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md in the working directory and
 *   each directory above it, and what they import with `@path` (relative to the importing file,
 *   up to five hops deep, not inside code) (code.claude.com/docs/en/memory); no setting names
 *   other files, and it does not read AGENTS.md (checked with Claude Code 2.1.197).
 * - Codex: per directory from the git root down to the working directory, the first of
 *   AGENTS.override.md, AGENTS.md, then `project_doc_fallback_filenames` (config.toml; the
 *   project's .codex/config.toml counts in a trusted project, checked with Codex 0.171.0)
 *   (developers.openai.com/codex/guides/agents-md): a fallback name is read only in a directory
 *   without an AGENTS.md.
 * - Gemini CLI: GEMINI.md in the workspace and its parents, or instead the names of
 *   `context.fileName` (a string or a list) in .gemini/settings.json (geminicli.com/docs/cli/gemini-md;
 *   the project's settings count in a trusted folder, checked with Gemini CLI 0.61.0).
 * - Cursor: .cursor/rules/*.mdc, the legacy .cursorrules, and AGENTS.md in the root and its
 *   subdirectories (cursor.com/docs/rules); no setting names other files, and CLAUDE.md is not
 *   among them (its third-party configs are Claude Code's hooks, skills and agents).
 *
 * What the settings say is read from the repository's files as they are now: a setting init
 * wrote for an authority that has changed since no longer covers it, and the authority is then
 * given at session start instead until `hermesd init --agents` runs again (`hermesd doctor`
 * says so).
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { AgentName } from '../protocol/agent-hooks.js';
import { AGENT_NAMES } from '../protocol/agent-hooks.js';
import { chainDirs, type AuthoritySource } from '../context/authority.js';
import { parseJsonc } from './json-edit.js';
import { parseToml } from './toml-edit.js';

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
  /**
   * What the setting's names do: `replace` the default names (Gemini CLI's context.fileName),
   * or come `after` them in each directory (Codex's fallbacks).
   */
  settingMode?: 'replace' | 'after';
  /** The files read follow `@path` imports (Claude Code). */
  imports?: true;
};

export const NATIVE_READING: Readonly<Record<AgentName, NativeReading>> = {
  claude: { names: ['CLAUDE.md', join('.claude', 'CLAUDE.md'), 'CLAUDE.local.md'], firstPerDirectory: false, ruleDirs: [], imports: true },
  codex: {
    names: ['AGENTS.override.md', 'AGENTS.md'],
    firstPerDirectory: true,
    ruleDirs: [],
    setting: { file: join('.codex', 'config.toml'), key: 'project_doc_fallback_filenames' },
    settingMode: 'after',
  },
  gemini: {
    names: ['GEMINI.md'],
    firstPerDirectory: false,
    ruleDirs: [],
    setting: { file: join('.gemini', 'settings.json'), key: 'context.fileName' },
    settingMode: 'replace',
  },
  cursor: { names: ['AGENTS.md', '.cursorrules'], firstPerDirectory: false, ruleDirs: [join('.cursor', 'rules')] },
};

/** The file names some agent reads in a folder (its own instruction files), beside the authority's: a change to one may change what an agent is told. */
export const AGENT_INSTRUCTION_NAMES: ReadonlySet<string> = new Set(Object.values(NATIVE_READING).flatMap((r) => r.names.filter((n) => !n.includes(sep))));

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
  /** What the agent reads with the project config as it is now (a setting there, hermesd's or yours, applied). */
  readsNow: string[];
  /** The names the agent's setting holds in the project config now; undefined where it is unset (or the agent has none). */
  settingNames?: string[];
  /** The names hermesd's setting gives the agent so that it reads the authority; undefined where no setting can (none, or a file the agent reads first stands in the way). */
  settingFor?: string[];
};

const rel = (root: string, p: string) => relative(root, p).split(sep).join('/');

/** Claude Code's `@path` imports of a file's text: not inside code blocks or code spans. */
function importsOf(text: string): string[] {
  const prose = text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/(?:^|\s)@((?:~\/|\.{0,2}\/)?[^\s`@]+)/g)].map((m) => m[1]!.replace(/[),.;:]+$/, ''));
}

/** The files `file` imports, and theirs, up to Claude Code's five hops, inside the work tree only. */
function importedFiles(root: string, file: string, depth = 0, seen = new Set<string>()): string[] {
  if (depth >= 5 || seen.has(file)) return [];
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const p of importsOf(text)) {
    if (p.startsWith('~/')) continue; // the user's home: no file of this repository
    const abs = isAbsolute(p) ? p : resolve(dirname(file), p);
    if (rel(root, abs).startsWith('..') || !existsSync(abs)) continue;
    out.push(abs, ...importedFiles(root, abs, depth + 1, seen));
  }
  return out;
}

/** A config file of the repository, parsed; undefined when missing or not parseable (the agent would not read it either). */
function configOf(root: string, file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v = file.endsWith('.toml') ? parseToml(text, file) : parseJsonc(text, file).value;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The names the agent's setting holds in the repository's project config now (undefined: unset, or no setting). */
export function settingNames(agent: AgentName, root: string): string[] | undefined {
  const setting = NATIVE_READING[agent].setting;
  if (!setting) return undefined;
  let v: unknown = configOf(root, setting.file);
  for (const k of setting.key.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return undefined;
}

/** The names an agent looks for in each directory, with `names` in its setting. */
function namesWith(agent: AgentName, names: readonly string[] | undefined): readonly string[] {
  const r = NATIVE_READING[agent];
  if (!names) return r.names;
  return r.settingMode === 'replace' ? names : [...r.names, ...names.filter((n) => !r.names.includes(n))];
}

/** The files an agent reads from the git root down to `cwd` (paths relative to root): on its own, or with `names` in its setting. */
function readsWith(agent: AgentName, root: string, cwd: string, names?: readonly string[]): string[] {
  const r = NATIVE_READING[agent];
  const out: string[] = [];
  for (const dir of chainDirs(cwd, root)) {
    for (const name of namesWith(agent, names)) {
      if (!existsSync(join(dir, name))) continue;
      out.push(join(dir, name));
      if (r.firstPerDirectory) break;
    }
  }
  if (r.imports) out.push(...out.flatMap((f) => importedFiles(root, f)));
  for (const d of r.ruleDirs) {
    let found: string[] = [];
    try {
      found = readdirSync(join(cwd, d))
        .filter((n) => n.endsWith('.mdc'))
        .sort();
    } catch {
      // no rules folder
    }
    out.push(...found.map((n) => join(cwd, d, n)));
  }
  return [...new Set(out.map((p) => rel(root, p)))];
}

/** The files an agent reads on its own, from the git root down to `cwd` (paths relative to root). */
export function nativeReads(agent: AgentName, root: string, cwd: string = root): string[] {
  return readsWith(agent, root, cwd);
}

function realOf(root: string, p: string): string {
  try {
    return realpathSync(join(root, p));
  } catch {
    return join(root, p);
  }
}

/**
 * The names hermesd's setting gives `agent` so that it reads the authority `files`, on top of
 * what the setting holds now (`current`): undefined when the agent has no setting, or when it
 * would read another file in the authority's place (Codex reads an AGENTS.md before any
 * fallback name of its directory).
 */
export function settingFor(agent: AgentName, root: string, files: readonly string[], cwd: string = root, current?: readonly string[]): string[] | undefined {
  const r = NATIVE_READING[agent];
  if (!r.setting || files.length === 0) return undefined;
  const wanted = [...new Set(files.map((f) => basename(f)))];
  // Gemini CLI's default name stays when the setting replaces it: the user's own GEMINI.md (~/.gemini/GEMINI.md too) is still read.
  const base = current ?? (r.settingMode === 'replace' ? r.names : []);
  const names = [...base, ...wanted.filter((n) => !base.includes(n))];
  const real = new Set(readsWith(agent, root, cwd, names).map((p) => realOf(root, p)));
  return files.every((f) => real.has(realOf(root, f))) ? names : undefined;
}

/**
 * How hermesd makes `agent` see the authority (`source`, `files` relative to root), given what
 * the agent reads on its own (`reads`) and, when known, with its setting as it is now (`now`):
 * native when it reads the authority on its own; setting when the setting as it is makes it
 * (without `now`: when the agent has a setting that can name the files); else session start.
 */
export function deliveryFor(agent: AgentName, source: AuthoritySource | undefined, files: string[], reads: string[], now?: string[]): Delivery {
  if (!source || files.length === 0) return 'none';
  if (files.every((f) => reads.includes(f))) return 'native';
  if (now) return files.every((f) => now.includes(f)) ? 'setting' : 'session-start';
  const setting = NATIVE_READING[agent].setting;
  // A setting names files by their base name: it can only stand for an authority of plain files.
  if (setting && source !== 'cursor') return 'setting';
  return 'session-start';
}

type AuthorityFiles = { source: AuthoritySource | undefined; files: Array<{ path: string }> };

/** Every agent's view of the repository at `root` (sessions started at `cwd`, the root by default). */
export function agentViews(root: string, authority: AuthorityFiles, cwd: string = root): AgentView[] {
  return AGENT_NAMES.map((agent) => agentView(agent, root, authority, cwd));
}

/** One agent's view of the repository at `root` (a session started at `cwd`, the root by default). */
export function agentView(agent: AgentName, root: string, authority: AuthorityFiles, cwd: string = root): AgentView {
  const files = authority.files.map((f) => rel(root, f.path));
  const byReal = new Map(files.map((f) => [realOf(root, f), f]));
  // By the file: a CLAUDE.md that is a symlink to AGENTS.md is AGENTS.md read.
  const asAuthority = (paths: string[]) => paths.map((p) => byReal.get(realOf(root, p)) ?? p);
  const real = new Set(byReal.keys());
  const reads = nativeReads(agent, root, cwd);
  const names = settingNames(agent, root);
  const now = readsWith(agent, root, cwd, names);
  const delivery = deliveryFor(agent, authority.source, files, asAuthority(reads), asAuthority(now));
  const setting = delivery === 'native' || delivery === 'none' || authority.source === 'cursor' ? undefined : settingFor(agent, root, files, cwd, names);
  return {
    agent,
    reads,
    authority: files,
    delivery,
    shadowed: now.filter((p) => !real.has(realOf(root, p))),
    readsNow: now,
    ...(names ? { settingNames: names } : {}),
    ...(setting ? { settingFor: setting } : {}),
  };
}

/**
 * What the session start of `view.agent` adds so that the agent sees the authority exactly once:
 * the authority's text (`text`, as context/authority.ts renders it) where the agent reads it
 * neither on its own nor through its setting, and which file wins where the agent also reads a
 * file that may say otherwise. '' when there is nothing to add.
 */
export function authorityContext(view: AgentView, text: string): string {
  if (view.delivery === 'none') return '';
  const parts: string[] = [];
  if (view.shadowed.length) {
    const names = view.authority.join(', ');
    parts.push(
      `${names} ${view.authority.length > 1 ? 'are' : 'is'} this repository's authority; where ${view.shadowed.join(', ')} ${view.shadowed.length > 1 ? 'say' : 'says'} otherwise, ${view.authority[view.authority.length - 1]} wins.`,
    );
  }
  if (view.delivery === 'session-start' && text.trim()) parts.push(text.trim());
  return parts.join('\n\n');
}
