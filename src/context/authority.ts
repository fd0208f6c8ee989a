/**
 * Which repository file speaks for the project. The first source that exists wins, so two
 * files with conflicting build commands never both reach the model:
 *   1. `.hermes.md` / `HERMES.md`, nearest to cwd, searching up to the git root;
 *   2. the AGENTS chain, git root down to cwd (`AGENTS.override.md` > `AGENTS.md` > `agents.md` per directory);
 *   3. `CLAUDE.md` / `claude.md` in cwd;
 *   4. `.cursorrules` plus `.cursor/rules/*.mdc` (sorted) in cwd.
 * Without a git root only cwd itself is searched.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { CONTEXT_READ_TIMEOUT_MS, prepareContextText, readContextFile, stripFrontMatter, type LoadedFile } from './files.js';
import { defaults } from '../config/schema.js';

export const HERMES_NAMES = ['.hermes.md', 'HERMES.md'] as const;
export const AGENTS_NAMES = ['AGENTS.override.md', 'AGENTS.md', 'agents.md'] as const;
export const CLAUDE_NAMES = ['CLAUDE.md', 'claude.md'] as const;
export const CURSOR_RULES_FILE = '.cursorrules';
export const CURSOR_RULES_DIR = join('.cursor', 'rules');

/** Every file name that can be an authority file, for the watcher. */
export const AUTHORITY_FILE_NAMES: ReadonlySet<string> = new Set([...HERMES_NAMES, ...AGENTS_NAMES, ...CLAUDE_NAMES, CURSOR_RULES_FILE]);

export type AuthoritySource = 'hermes' | 'agents' | 'claude' | 'cursor';

export type AuthorityOptions = {
  /** Directory the session works in (absolute, realpath). */
  cwd: string;
  /** Git work tree root containing cwd, or undefined outside a repository. */
  root?: string;
  maxFileChars?: number;
  readTimeoutMs?: number;
};

export type Authority = {
  source: AuthoritySource | undefined;
  files: LoadedFile[];
  /** The prompt text of the project context (empty when no authority file exists). */
  text: string;
  warnings: string[];
  /** Directories whose entries decide the outcome: what a watcher must observe to know it is stale. */
  dirs: string[];
};

/** Directories from `root` down to `cwd` (root first); just [cwd] without a root or when cwd is outside it. */
export function chainDirs(cwd: string, root: string | undefined): string[] {
  if (!root) return [cwd];
  const rel = relative(root, cwd);
  if (rel.startsWith('..') || rel.startsWith(sep)) return [cwd];
  const dirs = [root];
  let cur = root;
  for (const part of rel.split(sep).filter(Boolean)) {
    cur = join(cur, part);
    dirs.push(cur);
  }
  return dirs;
}

function labelOf(cwd: string, path: string): string {
  return relative(cwd, path).split(sep).join('/');
}

type Loader = {
  cwd: string;
  maxChars: number;
  timeoutMs: number;
  warnings: string[];
};

/** Reads a candidate; undefined when it does not exist. Unreadable files become a warning and count as absent. */
async function load(l: Loader, path: string, transform: (t: string) => string = (t) => t): Promise<LoadedFile | undefined> {
  const label = labelOf(l.cwd, path);
  const out = await readContextFile(path, l.timeoutMs);
  if (out.kind === 'missing') return undefined;
  if (out.kind === 'skipped') {
    l.warnings.push(`${label} ${out.reason}; it was skipped.`);
    return undefined;
  }
  const file = prepareContextText(transform(out.text), label, path, l.maxChars);
  if (file.blocked.length > 0) l.warnings.push(`${label} was blocked: ${file.blocked.map((h) => `${h.id} (${h.excerpt})`).join('; ')}`);
  if (file.truncated)
    l.warnings.push(`${label} is ${out.text.length} characters, over the ${l.maxChars}-character cap; it was truncated (head 70%, tail 20%).`);
  return file;
}

async function firstOf(l: Loader, dir: string, names: readonly string[], transform?: (t: string) => string): Promise<LoadedFile | undefined> {
  for (const name of names) {
    const f = await load(l, join(dir, name), transform);
    if (f) return f;
  }
  return undefined;
}

async function loadHermes(l: Loader, dirs: string[]): Promise<LoadedFile[]> {
  // Nearest to cwd first: a subproject's HERMES.md speaks for it.
  for (const dir of [...dirs].reverse()) {
    const f = await firstOf(l, dir, HERMES_NAMES, stripFrontMatter);
    if (f) return [f];
  }
  return [];
}

async function loadAgents(l: Loader, dirs: string[]): Promise<LoadedFile[]> {
  const files: LoadedFile[] = [];
  const seen = new Set<string>();
  for (const dir of dirs) {
    const f = await firstOf(l, dir, AGENTS_NAMES);
    // A symlinked or copied AGENTS.md at two levels would otherwise say everything twice.
    if (!f || seen.has(f.sha256)) continue;
    seen.add(f.sha256);
    files.push(f);
  }
  return files;
}

async function loadClaude(l: Loader): Promise<LoadedFile[]> {
  const f = await firstOf(l, l.cwd, CLAUDE_NAMES);
  return f ? [f] : [];
}

async function loadCursor(l: Loader): Promise<LoadedFile[]> {
  const files: LoadedFile[] = [];
  const rules = await load(l, join(l.cwd, CURSOR_RULES_FILE));
  if (rules) files.push(rules);
  let names: string[] = [];
  try {
    names = (await readdir(join(l.cwd, CURSOR_RULES_DIR))).filter((n) => n.endsWith('.mdc')).sort();
  } catch {
    // no .cursor/rules
  }
  for (const name of names) {
    const f = await load(l, join(l.cwd, CURSOR_RULES_DIR, name));
    if (f) files.push(f);
  }
  return files;
}

/** The candidate files of a source, by path (no reading): what a lower-priority source would have loaded. */
async function candidatesOf(source: AuthoritySource, cwd: string, dirs: string[]): Promise<string[]> {
  if (source === 'agents') return dirs.flatMap((d) => AGENTS_NAMES.map((n) => join(d, n)));
  if (source === 'claude') return CLAUDE_NAMES.map((n) => join(cwd, n));
  if (source === 'cursor') {
    let names: string[] = [];
    try {
      names = (await readdir(join(cwd, CURSOR_RULES_DIR))).filter((n) => n.endsWith('.mdc'));
    } catch {
      // no .cursor/rules
    }
    return [join(cwd, CURSOR_RULES_FILE), ...names.map((n) => join(cwd, CURSOR_RULES_DIR, n))];
  }
  return [];
}

const sizeOf = async (p: string) => {
  try {
    const st = await stat(p);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Files of a lower-priority source that are larger than what is in force: they are not read,
 * and their author probably thinks they are (a long CLAUDE.md next to a short AGENTS.md).
 * A copy or symlink of a file in force is no news.
 */
async function shadowed(l: Loader, dirs: string[], winners: LoadedFile[], lower: AuthoritySource[]): Promise<string[]> {
  const sizes = await Promise.all(winners.map((f) => sizeOf(f.path)));
  const inForce = sizes.reduce<number>((a, b) => a + (b ?? 0), 0);
  const winnerReal = new Set(await Promise.all(winners.map((f) => realpath(f.path).catch(() => f.path))));
  const out: string[] = [];
  for (const source of lower) {
    for (const p of await candidatesOf(source, l.cwd, dirs)) {
      const size = await sizeOf(p);
      if (size === undefined || size <= inForce) continue;
      if (winnerReal.has(await realpath(p).catch(() => p))) continue;
      const label = labelOf(l.cwd, p);
      out.push(
        `${label} (${size} bytes) is not read: ${winners.map((f) => f.label).join(', ')} (${inForce} bytes) is in force, and the first of HERMES.md, AGENTS.md, CLAUDE.md and Cursor rules that exists wins. ` +
          `Move what ${label} says into ${winners[0]!.label}, or make one a symlink to the other.`,
      );
    }
  }
  return out;
}

/** Renders the chosen files as one prompt section, each labelled with its path relative to cwd. */
export function renderAuthority(files: LoadedFile[]): string {
  if (files.length === 0) return '';
  const parts = ['# Project context', 'The following project context files were loaded from the repository. Follow their rules for this repository.'];
  for (const f of files) parts.push(`## ${f.label}\n\n${f.text}`);
  return parts.join('\n\n');
}

export async function loadAuthority(opts: AuthorityOptions): Promise<Authority> {
  const dirs = chainDirs(opts.cwd, opts.root);
  const l: Loader = {
    cwd: opts.cwd,
    maxChars: opts.maxFileChars ?? defaults().context.maxFileChars,
    timeoutMs: opts.readTimeoutMs ?? CONTEXT_READ_TIMEOUT_MS,
    warnings: [],
  };
  const sources: Array<[AuthoritySource, () => Promise<LoadedFile[]>]> = [
    ['hermes', () => loadHermes(l, dirs)],
    ['agents', () => loadAgents(l, dirs)],
    ['claude', () => loadClaude(l)],
    ['cursor', () => loadCursor(l)],
  ];
  const watchDirs = [...dirs, join(opts.cwd, '.cursor'), join(opts.cwd, CURSOR_RULES_DIR)];
  for (const [i, [source, run]] of sources.entries()) {
    const files = await run();
    if (files.length > 0) {
      l.warnings.push(
        ...(await shadowed(
          l,
          dirs,
          files,
          sources.slice(i + 1).map(([s]) => s),
        )),
      );
      return { source, files, text: renderAuthority(files), warnings: l.warnings, dirs: watchDirs };
    }
  }
  return { source: undefined, files: [], text: '', warnings: l.warnings, dirs: watchDirs };
}
