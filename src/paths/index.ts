/**
 * Every runtime path hermesd uses is computed here, and nowhere else: repository discovery,
 * the runtime folders in the git dir (`<git-dir>/hermesd/`, and `<common-dir>/hermesd/` that
 * all worktrees share), the socket, and the files under $HERMES_HOME.
 */
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, NotARepository } from '../errors/index.js';
import { movesGitsView } from '../git/env.js';
import { gitSync, gitTry } from '../git/run.js';
import { sha256 } from '../text/hash.js';
import { dirProblem, makeWritableDir, prepareSocketDir } from '../storage/private-dir.js';
import { readTextIfAny } from '../storage/read.js';

/** Linux sun_path is 108 bytes including the terminating NUL; macOS allows 104. */
export const SOCKET_PATH_MAX_BYTES = process.platform === 'linux' ? 107 : 103;
/** A short socket folder to suggest: the sun_path limit leaves little room. */
const SHORT_SOCKET_DIR = join(tmpdir(), 'hd');

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
    where = gitSync(['rev-parse', '--is-bare-repository', '--is-inside-git-dir', '--absolute-git-dir'], { cwd, env: process.env }).trim().split('\n');
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

/** A work tree as findRepo gives it. */
type WorkTree = { root: string; gitDir: string; commonDir: string };

/**
 * What a repository's config may say that moves its work tree or stops git from using it:
 * `core.worktree`, `core.bare` other than false, an extension, a version above 1, an included file (which may say any of these).
 */
const CONFIG_GIT_DECIDES =
  /worktree|^\s*bare\s*(=\s*(?!(false|no|off|0)\s*$)\S|$)|^\s*\[\s*(extensions|include)|repositoryformatversion\s*=\s*([2-9]|[1-9]\d)/im;

/** The most of git's small files (a `.git` file, `commondir`, the config) read here. */
const GIT_FILE_MAX_BYTES = 64 * 1024;

/**
 * The work tree around `cwd` found as git finds it, without starting git, for the common
 * layouts: a `.git` folder, or a `.git` file naming a linked worktree's git dir, on the way up
 * from `cwd` within one file system, owned by this user, whose config moves nothing. Undefined
 * wherever git's own rules would need more (a variable that moves git's view, another owner and
 * `safe.directory`, `core.worktree` or `core.bare`, an extension, the inside of a git dir, a
 * file-system boundary): then git is asked. Every command starts here, and a git process is
 * most of what finding the repository cost.
 */
export function workTreeWithoutGit(cwd: string, env: NodeJS.ProcessEnv = process.env): WorkTree | undefined {
  const uid = process.geteuid?.();
  if (uid === undefined || movesGitsView(env)) return undefined;
  try {
    let dir = realpathSync(cwd);
    const device = statSync(dir).dev;
    for (;;) {
      const dotGit = join(dir, '.git');
      const found = lstatSync(dotGit, { throwIfNoEntry: false });
      if (found) {
        let gitDir: string;
        if (found.isDirectory()) gitDir = dotGit;
        else if (found.isFile()) {
          const named = /^gitdir: (.+?)\r?\n?$/.exec(readTextIfAny(dotGit, { maxBytes: GIT_FILE_MAX_BYTES }) ?? '')?.[1];
          if (!named) return undefined;
          gitDir = realpathSync(resolve(dir, named));
        } else return undefined;
        const common = readTextIfAny(join(gitDir, 'commondir'), { maxBytes: GIT_FILE_MAX_BYTES })?.trim();
        const commonDir = realpathSync(common ? resolve(gitDir, common) : gitDir);
        // git's ownership check (safe.directory): the work tree, `.git` and the git dir are this user's.
        if (found.uid !== uid || statSync(dir).uid !== uid || statSync(gitDir).uid !== uid) return undefined;
        // A git dir git would take for one: HEAD, the objects and the refs.
        if (!lstatSync(join(gitDir, 'HEAD'), { throwIfNoEntry: false }) || !statSync(join(commonDir, 'objects')).isDirectory()) return undefined;
        if (!existsSync(join(commonDir, 'refs')) || existsSync(join(gitDir, 'config.worktree'))) return undefined;
        const config = readTextIfAny(join(commonDir, 'config'), { maxBytes: GIT_FILE_MAX_BYTES });
        if (config === undefined || CONFIG_GIT_DECIDES.test(config)) return undefined;
        return { root: dir, gitDir: realpathSync(gitDir), commonDir };
      }
      // A git dir itself (a bare repository, or the inside of one): git says what it is.
      if (existsSync(join(dir, 'HEAD'))) return undefined;
      const parent = dirname(dir);
      if (parent === dir || statSync(parent).dev !== device) return undefined;
      dir = parent;
    }
  } catch {
    return undefined;
  }
}

/** Finds the git work tree containing `cwd`; throws NotARepository outside one. */
export function findRepo(cwd: string = process.cwd()): WorkTree {
  // The caller's own environment decides, as it does for git below.
  const known = workTreeWithoutGit(cwd, process.env);
  if (known) return known;
  let out: string;
  try {
    // The caller's own environment: `hermesd` run from a hook or with GIT_DIR set finds what git would.
    out = gitSync(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], { cwd, env: process.env });
  } catch {
    throw new NotARepository(notAWorkTree(cwd));
  }
  const [top, gitDir, common] = out.trimEnd().split('\n');
  if (!top || !gitDir || !common) {
    throw new NotARepository(`Not inside a git work tree: ${cwd} (bare repositories have no work tree for hermesd to serve).`);
  }
  const root = realpathSync(top);
  const gitDirReal = realpathSync(gitDir);
  // A relative answer is relative to the folder git ran in, which the kernel names by its real path.
  const commonDir = realpathSync(isAbsolute(common) ? common : resolve(realpathSync(cwd), common));
  return { root, gitDir: gitDirReal, commonDir };
}

/** A repository as the commands that read only git's objects see it (check --commits, the server hook): work tree or bare. */
export type GitRepository = {
  gitDir: string;
  commonDir: string;
  bare: boolean;
  /** The work tree's top; undefined in a bare repository or inside a git dir. */ root?: string;
};

/**
 * The repository around `cwd`, with or without a work tree (a server's bare repository, the
 * inside of a git dir where git runs a server hook). Throws NotARepository outside one.
 * Commands that serve a work tree use findRepo, whose errors say what a bare repository lacks.
 */
export function findGitRepository(cwd: string = process.cwd()): GitRepository {
  const known = workTreeWithoutGit(cwd, process.env);
  if (known) return { gitDir: known.gitDir, commonDir: known.commonDir, bare: false, root: known.root };
  // One git process: --show-toplevel fails where there is no work tree, after the other answers.
  const r = gitTry(['rev-parse', '--is-bare-repository', '--is-inside-work-tree', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'], {
    cwd,
    env: process.env,
  });
  const [bare, inWorkTree, gitDir, common, top] = r.stdout.trimEnd().split('\n');
  if (!gitDir || !common)
    throw new NotARepository(`Not inside a git repository: ${cwd}. Run hermesd from a clone or a bare repository (git init creates one).`);
  const repo: GitRepository = {
    gitDir: realpathSync(gitDir),
    commonDir: realpathSync(isAbsolute(common) ? common : resolve(realpathSync(cwd), common)),
    bare: bare === 'true',
  };
  if (inWorkTree === 'true' && top) repo.root = realpathSync(top);
  return repo;
}

export function repoPaths(repo: { root: string; gitDir: string; commonDir: string }, env: NodeJS.ProcessEnv = process.env): RepoPaths {
  const runtimeDir = runtimeDirOf(repo.gitDir);
  const dir = socketDir(env);
  let socket: string | undefined;
  return {
    ...repo,
    runtimeDir,
    daemonJson: join(runtimeDir, 'daemon.json'),
    logFile: join(runtimeDir, 'daemon.log'),
    lockFile: join(runtimeDir, 'daemon.lock'),
    socketDir: dir,
    // Named by a hash of the work tree, computed when first asked for (the MCP server's first answers need no socket).
    get socket() {
      return (socket ??= join(dir, `${sha256(repo.root).slice(0, 16)}.sock`));
    },
  };
}

/** Throws a ConfigError naming the override when the socket path would not fit in sun_path. */
export function checkSocketPath(socket: string): void {
  const bytes = Buffer.byteLength(socket);
  if (bytes > SOCKET_PATH_MAX_BYTES) {
    throw new ConfigError(
      `Socket path is ${bytes} bytes, over the ${SOCKET_PATH_MAX_BYTES}-byte limit of a Unix socket address: ${socket}. ` +
        `Set HERMESD_SOCKET_DIR to a short directory (e.g. export HERMESD_SOCKET_DIR=${SHORT_SOCKET_DIR}).`,
    );
  }
}

/**
 * Makes the socket folder (private, 0700) and proves a socket can be made there; a ConfigError
 * naming the folder and HERMESD_SOCKET_DIR when it cannot (under /proc, read-only, a file, a
 * dangling link, another user's).
 */
export function prepareSocketFolder(dir: string): void {
  try {
    prepareSocketDir(dir);
  } catch (err) {
    throw new ConfigError(
      `The socket folder ${dir} cannot be used: ${dirProblem(dir, err)}. Set HERMESD_SOCKET_DIR to a folder of yours that can be written (e.g. export HERMESD_SOCKET_DIR=${SHORT_SOCKET_DIR}).`,
    );
  }
}

/** Makes $HERMES_HOME and proves it can be written; a ConfigError naming the folder and HERMES_HOME when it cannot. */
export function prepareHome(home: string): void {
  try {
    makeWritableDir(home);
  } catch (err) {
    throw new ConfigError(
      `HERMES_HOME ${home} cannot be used: ${dirProblem(home, err)}. Set HERMES_HOME to a folder of yours that can be written (unset, it is ~/.hermes).`,
    );
  }
}

export function resolvePaths(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): RepoPaths {
  return repoPaths(findRepo(cwd), env);
}

/** `$HERMES_HOME/config.yaml`: the user's configuration. */
export function userConfigPath(home: string): string {
  return join(home, 'config.yaml');
}

/** `<work tree>/.hermes/config.yaml`: the repository's configuration (tracked; wins over the user's). */
export function repoConfigPath(root: string): string {
  return join(root, '.hermes', 'config.yaml');
}

/** `$HERMES_HOME/SOUL.md`: the user's identity for the agent, the same in every repository. */
export function soulPath(home: string): string {
  return join(home, 'SOUL.md');
}

/** `$HERMES_HOME/skills`: the user's skills, a git repository the daemon owns. */
export function userSkillsDir(home: string): string {
  return join(home, 'skills');
}

/** `<work tree>/.hermes/skills`: the project's skills (tracked, read-only to the agent). */
export function projectSkillsDir(root: string): string {
  return join(root, '.hermes', 'skills');
}

/** `$HERMES_HOME/guard/approved`: the user's approvals of guard loosenings, one file per work tree, where no sandboxed command writes. */
export function approvalsDir(home: string): string {
  return join(home, 'guard', 'approved');
}

/**
 * `$HERMES_HOME/guard/approve`: a request to approve a loosening, one file each, made by whoever
 * asks (`hermesd config approve`): only a process that can write $HERMES_HOME can make one, and
 * no confined command can.
 */
export function approvalRequestsDir(home: string): string {
  return join(home, 'guard', 'approve');
}

/** `$HERMES_HOME/memories`: MEMORY.md and USER.md. */
export function memoriesDir(home: string): string {
  return join(home, 'memories');
}

/**
 * The id of a repository under `$HERMES_HOME/projects/`: its folder name (readable) and a hash
 * of its common git dir (unique), so every linked worktree of one repository shares it and
 * two clones of one project do not.
 */
export function projectId(commonDir: string): string {
  const top = basename(commonDir) === '.git' ? basename(dirname(commonDir)) : basename(commonDir).replace(/\.git$/, '');
  const slug =
    top
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 40) || 'repo';
  return `${slug}-${sha256(commonDir).slice(0, 12)}`;
}

/** `$HERMES_HOME/projects/<id>`: what hermesd keeps about one repository outside it (its MEMORY.md), never committed with it. */
export function projectDir(home: string, commonDir: string): string {
  return join(home, 'projects', projectId(commonDir));
}

/** `$HERMES_HOME/proposals`: pending placement and review proposals, one JSON file each, and the rejected ones' fingerprints. */
export function proposalsDir(home: string): string {
  return join(home, 'proposals');
}

/** `$HERMES_HOME/state.db`: SessionDB, shared by every repository. */
export function sessionDbPath(home: string): string {
  return join(home, 'state.db');
}

/** `<socket dir>/<hash>.agent.sock`, next to the daemon's own socket (same private directory): sandboxed commands reach the daemon here. */
export function agentSocketPath(paths: Pick<RepoPaths, 'socketDir' | 'socket'>): string {
  return join(paths.socketDir, basename(paths.socket).replace(/\.sock$/, '.agent.sock'));
}

/** `<git-dir>/hermesd`: this worktree's runtime folder (daemon.json, lock, log, hook settings, backups, guard scratch). */
export function runtimeDirOf(gitDir: string): string {
  return join(gitDir, 'hermesd');
}

/** `<common-dir>/hermesd`: what every worktree of the repository shares (the hook runner, chained hooks, a core.hooksPath folder). */
export function sharedRuntimeDirOf(commonDir: string): string {
  return join(commonDir, 'hermesd');
}

/** What the runners source before they ask the daemon (they cannot read YAML): the bounds and onUnavailable settings in force (src/hook-client/runners.ts). */
export function settingsPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'settings');
}

/** hermesd's client (src/hook-client/client.c), built for this clone: what every hook runs to ask the daemon. */
export function clientPath(commonDir: string): string {
  return join(sharedRuntimeDirOf(commonDir), 'client');
}

/** What `hermesd init` changed in this worktree, so `init --undo` can put it back. */
export function installRecordPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'install.json');
}

/** What `hermesd init --server` changed in a bare repository, so `--uninstall` can give it back. */
export function serverInstallRecordPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'server-install.json');
}

/**
 * The server's pinned rules of a bare repository (`hermesd init --server` writes it; its admin
 * edits it): every push is judged by them and by the rules committed in its base.
 */
export function serverConfigPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'server-config.yaml');
}

/** The work-state backups of hooks in flight (one folder per backup). */
export function backupsDir(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'backups');
}

/** A backup kept after a restore that could not put everything back. */
export function keptBackupDir(gitDir: string, id: string): string {
  return join(runtimeDirOf(gitDir), 'kept', id);
}

/** Content found in the work tree that the user did not have, moved aside by a restore. */
export function displacedDirOf(gitDir: string, id: string): string {
  return join(runtimeDirOf(gitDir), 'displaced', id);
}

/** Held while a backup is restored, by the daemon or by the hook itself. */
export function restoreLockPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'restore.lock');
}

/** A pre-commit fix proposed by the agent: the changed files and one git patch. */
export function fixDir(gitDir: string, id: string): string {
  return join(runtimeDirOf(gitDir), 'fixes', id);
}

/** The guard's scratch (the git shim, scratch indexes); never writable from the sandbox. */
export function guardDir(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'guard');
}

/** Other agents' confine scripts and the library of refused writes they preload: read-only inside the confinement; removed when the daemon stops. */
export function confineDir(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'confine');
}

/** The sandbox's own folders (per-session /tmp, the empty directory masks are bound from, the daemon's pid namespace record). */
export function sandboxDir(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'sandbox');
}

/** What `hermesd init --agents` added to other agents' configs in this worktree, so `--uninstall` can give every file back. */
export function agentsRecordPath(gitDir: string): string {
  return join(runtimeDirOf(gitDir), 'agents.json');
}

/** The committed stub every agent hook command runs (relative to the work tree root; `hermesd init --agents`). */
export const AGENT_STUB = '.hermes/agent-hook';
/** The committed stub every MCP registration runs (relative to the work tree root). */
export const MCP_STUB = '.hermes/mcp';
/** The committed stubs `hermesd init --agents` wrote that are no longer in the work tree at `root` (a `git clean`, a reset). */
export function goneAgentStubs(root: string): string[] {
  return [AGENT_STUB, MCP_STUB].filter((stub) => !existsSync(join(root, stub)));
}
/** The agents' hook runner as the hook commands find it without the stub: in the main work tree's git dir (relative to its root). */
export const MAIN_TREE_AGENT_RUNNER = '.git/hermesd/agent-hook';

/** The agents' hook runner (this install's node and CLI baked in), which the committed `.hermes/agent-hook` sources. */
export function agentRunnerPath(commonDir: string): string {
  return join(sharedRuntimeDirOf(commonDir), 'agent-hook');
}

/** How this clone starts `hermesd mcp` (this install's node and CLI baked in), which the committed `.hermes/mcp` sources. */
export function mcpRunnerPath(commonDir: string): string {
  return join(sharedRuntimeDirOf(commonDir), 'mcp');
}

/** The git dirs of every worktree of a clone: the main one's (the common dir), then the linked ones'. */
export function worktreeGitDirs(commonDir: string): string[] {
  const dirs = [commonDir];
  try {
    for (const w of readdirSync(join(commonDir, 'worktrees'))) dirs.push(join(commonDir, 'worktrees', w));
  } catch {
    // no linked worktrees
  }
  return dirs;
}
