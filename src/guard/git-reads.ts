/**
 * What git reads as its own configuration, or runs as its hooks, outside the git directory: the
 * core.hooksPath folder and the files git's configuration includes (`include.path`,
 * `includeIf`). What an agent wrote there would run at the user's next git command, outside any
 * confinement, so no agent's tool or command writes them: the sandbox binds the ones that are
 * there read-only (sandbox-plan.ts), every tool's write to one is refused (tool-judge.ts, and
 * hermesd's own write_file), and one a command creates where nothing was is removed after it
 * (verify.ts). This is the one list all of them take.
 */
import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { configRead, gitConfigFiles, gitConfigKey, includedFile } from '../git/config-files.js';
import { cleanGitEnv } from '../git/env.js';
import { gitOut } from '../git/run.js';
import { within } from './sandbox.js';

/** A repository's folders: its work tree and git directories. */
export type RepoDirs = { root: string; gitDir: string; commonDir: string };

/**
 * `files`: the config files git read, there; `targets`: every file an include of the repository's
 * config names (include.path, includeIf.<condition>.path, whatever the condition), there or not.
 */
type Asked = { key: string; files: string[]; targets: string[]; hooksPath?: string };
const asked = new Map<string, Asked>();

/** An include's key as git lists it (`include.path`, `includeif.<condition>.path`). */
const INCLUDE_KEY = /^include(?:if\..*)?\.path$/i;

/**
 * The included files that are there and every include's target, as git lists the repository's
 * own config (its parse: continued lines, escapes, every condition), and the effective
 * core.hooksPath (the last one git reads, at any level): one git process, asked again when git's
 * configuration changed (gitConfigKey), every time where that key cannot be sure.
 */
function askGit(dirs: RepoDirs, realGit: string, env: NodeJS.ProcessEnv, key: string | undefined): Omit<Asked, 'key'> {
  const hit = asked.get(dirs.root);
  if (key !== undefined && hit?.key === key) return hit;
  const local = resolve(dirs.commonDir, 'config');
  const home = env.HOME || homedir();
  const files = new Set<string>();
  const targets = new Set<string>();
  let hooksPath: string | undefined;
  for (const [scope, from, entry] of configEntries(dirs, realGit, env)) {
    const lf = entry.indexOf('\n');
    const name = (lf < 0 ? entry : entry.slice(0, lf)).toLowerCase();
    const value = lf < 0 ? '' : entry.slice(lf + 1);
    // Later entries win, as git reads them: system, global, the repository's, the worktree's, the command line's.
    if (name === 'core.hookspath') hooksPath = value;
    if ((scope !== 'local' && scope !== 'worktree') || !from.startsWith('file:')) continue;
    const origin = resolve(dirs.root, from.slice('file:'.length));
    if (origin !== local && scope === 'local') files.add(origin);
    if (!INCLUDE_KEY.test(name)) continue;
    const target = includedFile(value, origin, home);
    if (target) targets.add(target);
  }
  // As `git config --type=path` expands it: `~/` from the home folder as an include's path is (a
  // relative path stays relative to the work tree); what that does not expand (`~user/`, `%(prefix)/`) git expands.
  if (hooksPath?.startsWith('~') || hooksPath?.startsWith('%(')) {
    hooksPath = includedFile(hooksPath, dirs.root, home) ?? gitOut(realGit, ['config', '--type=path', '--get', 'core.hooksPath'], dirs.root, env);
  }
  const read = { key: key ?? '', files: [...files], targets: [...targets], ...(hooksPath ? { hooksPath } : {}) };
  if (key !== undefined) asked.set(dirs.root, read);
  else asked.delete(dirs.root);
  return read;
}

/**
 * git's configuration as git lists it, every level with the files it includes: [scope, origin,
 * `<key>` LF `<value>`] per entry, in the order git reads them. `-z`: a value may hold any byte
 * but NUL; an included file's entries carry the scope of the file that includes it. A git older
 * than `--show-scope` (2.26) lists without it: an entry is then taken as the repository's unless
 * it comes from the system's or the user's own config file (what a user-level file includes counts
 * as the repository's: more is kept from tools, nothing less).
 */
function configEntries(dirs: RepoDirs, realGit: string, env: NodeJS.ProcessEnv): Array<[string, string, string]> {
  const scoped = gitOut(realGit, ['config', '-z', '--show-scope', '--show-origin', '--includes', '--list'], dirs.root, env);
  const out: Array<[string, string, string]> = [];
  if (scoped !== undefined) {
    const parts = scoped.split('\0');
    for (let i = 0; i + 2 < parts.length; i += 3) out.push([parts[i]!, parts[i + 1]!, parts[i + 2]!]);
    return out;
  }
  const user = new Set(gitConfigFiles(dirs, env).slice(0, -2));
  const parts = (gitOut(realGit, ['config', '-z', '--show-origin', '--includes', '--list'], dirs.root, env) ?? '').split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const from = parts[i]!;
    const origin = from.startsWith('file:') ? resolve(dirs.root, from.slice('file:'.length)) : '';
    out.push([user.has(origin) ? 'global' : from.startsWith('file:') ? 'local' : 'command', from, parts[i + 1]!]);
  }
  return out;
}

/** The files the repository's git config includes that are there (git's own list). */
export function gitConfigIncludes(dirs: RepoDirs, realGit: string): string[] {
  const env = cleanGitEnv();
  return askGit(dirs, realGit, env, gitConfigKey(dirs, env)).files;
}

/** The effective core.hooksPath, as git says it (its includes read). */
export function hooksPathOf(dirs: RepoDirs, realGit: string): string | undefined {
  const env = cleanGitEnv();
  return askGit(dirs, realGit, env, gitConfigKey(dirs, env)).hooksPath;
}

/**
 * Every path outside the git directory that git reads as configuration or runs as hooks here:
 * the hooks folder, and each file git's configuration includes, there or not (the config files
 * themselves, the user's, are not among them). The repository's own includes come from git's
 * parse of its config (so a config hermesd's reader is not sure of still names them); the
 * user-level ones from the reader (config-files.ts), where it is sure.
 */
export function gitReadPaths(dirs: RepoDirs, realGit: string): string[] {
  const env = cleanGitEnv();
  const read = configRead(dirs, env);
  const { files, targets, hooksPath } = askGit(dirs, realGit, env, read?.key);
  const out = new Set([...files, ...targets]);
  if (hooksPath) out.add(resolve(dirs.root, hooksPath));
  const base = new Set(gitConfigFiles(dirs, env));
  for (const f of read?.files ?? []) if (!base.has(f)) out.add(f);
  return [...out];
}

/** Why a write to one of gitReadPaths is refused, as the model reads it. */
export const GIT_READ_REASON =
  "git reads it as configuration or runs it as a hook (core.hooksPath, or a file git's config includes): what an agent wrote there would run at the user's next git command. Ask the user to make this change.";

/**
 * The first of `paths` (absolute) a write may not reach: one of `reads` or inside one (the hooks
 * folder), or a folder that is there and holds one (a command that removes or replaces it).
 */
export function gitReadHit(reads: string[], paths: string[]): string | undefined {
  return paths.find((p) => reads.some((r) => within(r, p) || (within(p, r) && lstatSync(p, { throwIfNoEntry: false })?.isDirectory())));
}
