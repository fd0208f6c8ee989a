/**
 * Every path the daemon and its clients use is computed here, and nowhere else:
 * repository discovery, the runtime folder in the git dir, the socket, the log.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, NotARepository } from '../errors/index.js';

/** Linux sun_path is 108 bytes including the terminating NUL; macOS allows 104. */
export const SOCKET_PATH_MAX_BYTES = process.platform === 'linux' ? 107 : 103;

export type RepoPaths = {
  /** Top of the work tree (realpath). */
  root: string;
  /** This work tree's git dir (for a linked worktree: .git/worktrees/<name>). */
  gitDir: string;
  /** The repository's common git dir, shared by all worktrees. */
  commonDir: string;
  /** `<git-dir>/hermesd`: this worktree's daemon runtime. */
  runtimeDir: string;
  daemonJson: string;
  logFile: string;
  lockFile: string;
  socketDir: string;
  socket: string;
};

export function hermesHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.HERMES_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), '.hermes');
}

export function socketDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HERMESD_SOCKET_DIR) return resolve(env.HERMESD_SOCKET_DIR);
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const base = env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : '/tmp';
  return join(base, `hermesd-${uid}`);
}

/** Why `cwd` has no work tree, in words that say what to do: a bare repository, the inside of a git dir, or no repository at all. */
function notAWorkTree(cwd: string): string {
  let where: string[] = [];
  try {
    where = execFileSync('git', ['rev-parse', '--is-bare-repository', '--is-inside-git-dir', '--absolute-git-dir'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n');
  } catch {
    return `Not inside a git work tree: ${cwd}. Run hermesd from a directory of a git repository (git init creates one).`;
  }
  const [bare, insideGitDir, gitDir] = where;
  if (bare === 'true') {
    return `${cwd} is in a bare repository (${gitDir}): it has no work tree for hermesd to serve. Run hermesd in a clone of it (git clone ${gitDir} <dir>) or in a linked worktree (git -C ${gitDir} worktree add <dir> <branch>).`;
  }
  if (insideGitDir === 'true') return `${cwd} is inside the git directory ${gitDir}; run hermesd from the work tree instead.`;
  return `Not inside a git work tree: ${cwd}. Run hermesd from a directory of a git repository (git init creates one).`;
}

/** Finds the git work tree containing `cwd`; throws NotARepository outside one. */
export function findRepo(cwd: string = process.cwd()): { root: string; gitDir: string; commonDir: string } {
  let out: string;
  try {
    out = execFileSync('git', ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch {
    throw new NotARepository(notAWorkTree(cwd));
  }
  const [top, gitDir, common] = out.trimEnd().split('\n');
  if (!top || !gitDir || !common) {
    throw new NotARepository(`Not inside a git work tree: ${cwd} (bare repositories have no work tree for hermesd to serve).`);
  }
  const root = realpathSync(top);
  const gitDirReal = realpathSync(gitDir);
  const commonDir = realpathSync(isAbsolute(common) ? common : resolve(cwd, common));
  return { root, gitDir: gitDirReal, commonDir };
}

export function repoPaths(repo: { root: string; gitDir: string; commonDir: string }, env: NodeJS.ProcessEnv = process.env): RepoPaths {
  const runtimeDir = join(repo.gitDir, 'hermesd');
  const dir = socketDir(env);
  const hash = createHash('sha256').update(repo.root).digest('hex').slice(0, 16);
  const socket = join(dir, `${hash}.sock`);
  return {
    ...repo,
    runtimeDir,
    daemonJson: join(runtimeDir, 'daemon.json'),
    logFile: join(runtimeDir, 'daemon.log'),
    lockFile: join(runtimeDir, 'daemon.lock'),
    socketDir: dir,
    socket,
  };
}

/** Throws a ConfigError naming the override when the socket path would not fit in sun_path. */
export function checkSocketPath(socket: string): void {
  const bytes = Buffer.byteLength(socket);
  if (bytes > SOCKET_PATH_MAX_BYTES) {
    throw new ConfigError(
      `Socket path is ${bytes} bytes, over the ${SOCKET_PATH_MAX_BYTES}-byte limit of a Unix socket address: ${socket}. ` +
        `Set HERMESD_SOCKET_DIR to a short directory (e.g. export HERMESD_SOCKET_DIR=${join(tmpdir(), 'hd')}).`,
    );
  }
}

export function resolvePaths(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): RepoPaths {
  return repoPaths(findRepo(cwd), env);
}

/** `$HERMES_HOME/memories`: MEMORY.md and USER.md. */
export function memoriesDir(home: string): string {
  return join(home, 'memories');
}

/** `$HERMES_HOME/state.db`: SessionDB, shared by every repository. */
export function sessionDbPath(home: string): string {
  return join(home, 'state.db');
}

/** `<socket dir>/<hash>.agent.sock`, next to the daemon's own socket (same private directory): sandboxed commands reach the daemon here. */
export function agentSocketPath(paths: Pick<RepoPaths, 'socketDir' | 'socket'>): string {
  return join(paths.socketDir, basename(paths.socket).replace(/\.sock$/, '.agent.sock'));
}
