/**
 * The files git reads its configuration from, and a key that changes whenever one of them
 * does: a process that asked git for a setting keeps the answer under the key, and asks again
 * only when the key moved (a stat per file, not a git process). The files a config file
 * includes (`include.path`, `includeIf.<condition>.path`) are in the key too, found by reading
 * the file as git would; where that reading is not sure, there is no key and git is asked.
 */
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { readTextIfAny } from '../storage/read.js';
import { stampOf } from '../storage/file-stamp.js';

/** How recent a change may be and still leave the stamp it had (as the index reader's RACY_MS). */
const RACY_MS = 20;

/** The largest config file read for its includes; a larger one is asked of git. */
const CONFIG_MAX_BYTES = 1024 * 1024;

/** git's own limit on includes within includes ("exceeded maximum include depth"). */
const MAX_INCLUDE_DEPTH = 10;

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

/** The include paths a config file's text names (as written), by the file's stamp: read once per stamp. Undefined: not sure, ask git. */
const named = new Map<string, string[] | undefined>();

/**
 * git's configuration for this repository in `env`, as a key: the same key, the same settings.
 * Undefined where the key cannot be sure of that (a file changed within the racy window, an
 * include this cannot follow, a file too large to read): then ask git every time.
 */
export function gitConfigKey(dirs: GitDirs, env: NodeJS.ProcessEnv): string | undefined {
  return configRead(dirs, env)?.key;
}

/** Every file git reads its configuration from here, with the files they include (missing ones too: their creation counts); undefined where not sure. */
export function gitConfigFilesIncluded(dirs: GitDirs, env: NodeJS.ProcessEnv): string[] | undefined {
  return configRead(dirs, env)?.files;
}

/**
 * Both at once, from one reading: the key (gitConfigKey; none while a file is within the racy
 * window) and the files (gitConfigFilesIncluded); undefined where the files themselves are not
 * sure (an include this cannot follow, a file too large to read).
 */
export function configRead(dirs: GitDirs, env: NodeJS.ProcessEnv): { key?: string; files: string[] } | undefined {
  const configEnv = Object.keys(env)
    .filter((k) => k.startsWith('GIT_CONFIG'))
    .sort()
    .map((k) => `${k}=${env[k]}`);
  // Settings given on git's command line, or in its environment, may include files of their own.
  if (configEnv.some((e) => /include/i.test(e))) return undefined;
  const home = env.HOME || homedir();
  const files: string[] = [];
  const stamps: string[] = [];
  const now = Date.now();
  let keyed = true;
  const visit = (file: string, depth: number): boolean => {
    files.push(file);
    const found = stampOf(file);
    if (!found) {
      stamps.push('-');
      return true;
    }
    // Two writes within one tick of the file system's clock can leave one stamp: a file this fresh
    // gives no key yet, and its text is read again each time (not kept under that stamp). What it
    // includes is still known: the list of files does not wait for the clock.
    const fresh = now - found.changedMs <= RACY_MS;
    if (fresh) keyed = false;
    const { stamp } = found;
    stamps.push(stamp);
    const at = `${file}\0${stamp}`;
    let paths: string[] | undefined;
    if (!fresh && named.has(at)) paths = named.get(at);
    else {
      // A file too large or not a regular one (a FIFO would hold the read) cannot be read here: ask git.
      const text = readTextIfAny(file, { maxBytes: CONFIG_MAX_BYTES });
      paths = text === undefined ? undefined : includePaths(text);
      if (!fresh) {
        if (named.size > 64) named.clear();
        named.set(at, paths);
      }
    }
    if (paths === undefined) return false;
    if (paths.length > 0 && depth >= MAX_INCLUDE_DEPTH) return false;
    for (const p of paths) {
      const included = includedFile(p, file, home);
      if (included === undefined || !visit(included, depth + 1)) return false;
    }
    return true;
  };
  for (const file of gitConfigFiles(dirs, env)) if (!visit(file, 0)) return undefined;
  return keyed ? { key: [...stamps, ...configEnv].join('|'), files } : { files };
}

/**
 * The file an include path names, as git resolves it: `~/` from the home folder, a relative
 * path from the folder of the file that includes it. Undefined for what this does not resolve
 * (`~user/`, `%(prefix)/`, an optional include).
 */
export function includedFile(path: string, from: string, home: string): string | undefined {
  if (path === '~' || path.startsWith('~/')) return join(home, path.slice(1));
  if (path.startsWith('~') || path.startsWith('%(') || path.startsWith(':(')) return undefined;
  return isAbsolute(path) ? path : resolve(dirname(from), path);
}

/**
 * The include paths of a config file's text, in order, whatever their conditions (a file
 * included only under one is still in the key: its change shows, at worst, when it would not
 * have mattered). Undefined where this reading could miss one: a line continued on the next,
 * a value with escapes, a header or line it does not know, an `onbranch:` condition (which
 * turns on the branch checked out, a file no stamp here covers).
 */
export function includePaths(text: string): string[] | undefined {
  const paths: string[] = [];
  let including = false;
  for (const raw of text.split('\n')) {
    if (/\\\s*$/.test(raw)) return undefined;
    let line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) {
      const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"\\]*)")?\s*\](.*)$/.exec(line);
      if (!header) return undefined;
      const section = header[1]!.toLowerCase();
      const condition = header[2];
      // `[include.x]` or `[includeIf.x]`: the old way of naming a subsection, not read here.
      if (/^include(?:if)?\./.test(section)) return undefined;
      if (section === 'includeif' && condition !== undefined && /^onbranch:/i.test(condition)) return undefined;
      including = (section === 'include' && condition === undefined) || (section === 'includeif' && condition !== undefined);
      line = header[3]!.trim();
      if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line);
    if (!entry) return undefined;
    if (!including || entry[1]!.toLowerCase() !== 'path' || entry[2] === undefined) continue;
    const value = plainValue(entry[2]);
    if (value === undefined) return undefined;
    if (value !== '') paths.push(value);
  }
  return paths;
}

/** A config value without its comment and quotes; undefined where it holds an escape or an unclosed quote. */
function plainValue(raw: string): string | undefined {
  if (raw.includes('\\')) return undefined;
  let out = '';
  let quoted = false;
  // Whitespace outside quotes is dropped at both ends: `kept` is where the value ends.
  let kept = 0;
  for (const ch of raw) {
    const space = !quoted && /\s/.test(ch);
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '#' || ch === ';')) break;
    else if (!(space && out === '')) out += ch;
    if (!space) kept = out.length;
  }
  if (quoted) return undefined;
  return out.slice(0, kept);
}
