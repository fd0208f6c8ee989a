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
import { resolve } from 'node:path';
import { configRead, gitConfigFiles, gitConfigKey } from '../git/config-files.js';
import { cleanGitEnv } from '../git/env.js';
import { gitOut } from '../git/run.js';
import { within } from './sandbox.js';

/** A repository's folders: its work tree and git directories. */
export type RepoDirs = { root: string; gitDir: string; commonDir: string };

type Asked = { key: string; files: string[]; hooksPath?: string };
const asked = new Map<string, Asked>();

/**
 * The included files that are there, as git lists them for the repository's own config, and
 * the effective core.hooksPath: asked of git again when git's configuration changed
 * (gitConfigKey), every time where that key cannot be sure.
 */
function askGit(dirs: RepoDirs, realGit: string, env: NodeJS.ProcessEnv, key: string | undefined): { files: string[]; hooksPath?: string } {
  const hit = asked.get(dirs.root);
  if (key !== undefined && hit?.key === key) return hit;
  const local = resolve(dirs.commonDir, 'config');
  const out = gitOut(realGit, ['config', '--local', '--includes', '--show-origin', '--name-only', '--list'], dirs.root, env) ?? '';
  const files = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /^file:(.+?)\t/.exec(line);
    const file = m ? resolve(dirs.root, m[1]!) : undefined;
    if (file && file !== local) files.add(file);
  }
  const hooksPath = gitOut(realGit, ['config', '--get', 'core.hooksPath'], dirs.root, env) || undefined;
  const read = { key: key ?? '', files: [...files], ...(hooksPath ? { hooksPath } : {}) };
  if (key !== undefined) asked.set(dirs.root, read);
  else asked.delete(dirs.root);
  return read;
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
 * themselves, the user's, are not among them).
 */
export function gitReadPaths(dirs: RepoDirs, realGit: string): string[] {
  const env = cleanGitEnv();
  const read = configRead(dirs, env);
  const { files, hooksPath } = askGit(dirs, realGit, env, read?.key);
  const out = new Set(files);
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
