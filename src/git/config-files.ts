/**
 * The files git reads its configuration from, and a key that changes whenever one of them
 * does: a process that asked git for a setting keeps the answer under the key, and asks again
 * only when the key moved (a stat per file, not a git process).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readTextIfAny } from '../storage/read.js';
import { stampOf } from '../storage/file-stamp.js';

/** How recent a change may be and still leave the stamp it had (as the index reader's RACY_MS). */
const RACY_MS = 20;

/** The largest config file read for its includes; a larger one is asked of git. */
const CONFIG_MAX_BYTES = 1024 * 1024;

/** Where git's own system-wide configuration may be, by how git was built (a distribution's, /usr/local's, Homebrew's). */
const SYSTEM_CONFIGS = ['/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig'];

/** A repository's git folders. */
export type GitDirs = { gitDir: string; commonDir: string };

/** Every file git reads its configuration from for this repository, in `env`: system, global (XDG's and ~/.gitconfig), the repository's, the worktree's. */
export function gitConfigFiles(dirs: GitDirs, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config');
  const system = env.GIT_CONFIG_NOSYSTEM ? [] : env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : SYSTEM_CONFIGS;
  const global = env.GIT_CONFIG_GLOBAL ? [env.GIT_CONFIG_GLOBAL] : [join(xdg, 'git', 'config'), join(home, '.gitconfig')];
  return [...system, ...global, join(dirs.commonDir, 'config'), join(dirs.gitDir, 'config.worktree')];
}

/** Whether a config file's text, by its stamp, includes another file (include.path, includeIf): read once per stamp. */
const includes = new Map<string, boolean>();

/**
 * git's configuration for this repository in `env`, as a key: the same key, the same settings.
 * Undefined where a file includes another (include.path, includeIf), whose changes no stamp
 * here would show: then ask git every time.
 */
export function gitConfigKey(dirs: GitDirs, env: NodeJS.ProcessEnv): string | undefined {
  const parts: string[] = [];
  const now = Date.now();
  for (const file of gitConfigFiles(dirs, env)) {
    const found = stampOf(file);
    if (!found) {
      parts.push('-');
      continue;
    }
    // Two writes within one tick of the file system's clock can leave one stamp: a file this fresh is no key yet.
    if (now - found.changedMs <= RACY_MS) return undefined;
    const { stamp } = found;
    parts.push(stamp);
    const at = `${file}\0${stamp}`;
    let included = includes.get(at);
    if (included === undefined) {
      // A file too large or not a regular one (a FIFO would hold the read) counts as one that includes: ask git.
      included = /^\s*\[\s*include/im.test(readTextIfAny(file, { maxBytes: CONFIG_MAX_BYTES }) ?? '[include]');
      if (includes.size > 64) includes.clear();
      includes.set(at, included);
    }
    if (included) return undefined;
  }
  for (const k of Object.keys(env).sort()) if (k.startsWith('GIT_CONFIG')) parts.push(`${k}=${env[k]}`);
  return parts.join('|');
}
