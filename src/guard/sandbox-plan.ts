/**
 * What the sandbox of one repository looks like: which paths stay read-only inside the
 * writable work tree (everything the guard reads or enforces with), which secrets are
 * masked, where the git shim and the agent socket are bound, and the environment a command
 * starts with. Plain data in, a SandboxPlan out; sandbox.ts turns it into bwrap arguments.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import picomatch from 'picomatch';
import type { GuardConfig } from './guard-config.js';
import { existingReal, realOf, within, type SandboxPlan } from './sandbox.js';
import { userConfigPath } from '../paths/index.js';

/** Files of the hook managers hermesd works with: they decide what runs at commit time. */
export const HOOK_MANAGER_FILES = [
  '.husky',
  '.pre-commit-config.yaml',
  '.pre-commit-hooks.yaml',
  'lefthook.yml',
  'lefthook.yaml',
  '.lefthook.yml',
  '.lefthook.yaml',
  'lefthook-local.yml',
  'lefthook-local.yaml',
  '.lefthook',
  '.lintstagedrc',
  '.lintstagedrc.json',
  '.lintstagedrc.yaml',
  '.lintstagedrc.yml',
  '.lintstagedrc.js',
  '.lintstagedrc.cjs',
  '.lintstagedrc.mjs',
  'lint-staged.config.js',
  'lint-staged.config.cjs',
  'lint-staged.config.mjs',
];

/**
 * Other agents' and editors' configuration in the work tree: hooks and MCP servers that run
 * code on the user's behalf (`hermesd init --agents` writes some of them). The same list
 * sandbox-runtime keeps read-only.
 */
export const AGENT_CONFIG_PATHS = ['.claude', '.codex', '.cursor', '.gemini', '.mcp.json', '.vscode', '.idea'];

/**
 * What agents, shells and git read as configuration in a home folder, wherever it lies: no tool
 * writes through one of these names outside the work tree (guard/tool-judge.ts), and a confined
 * shell sees them read-only where a home holds a writable tree (guard/agent-shell.ts).
 */
export const USER_CONFIG_NAMES: readonly string[] = [
  '.gitconfig',
  '.git-credentials',
  '.config',
  '.claude',
  '.claude.json',
  '.codex',
  '.gemini',
  '.cursor',
  '.hermes',
  '.bashrc',
  '.bash_profile',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.npmrc',
  '.ssh',
];

/**
 * Whether a repository-relative path is one the guard reads or enforces with (the config,
 * hook managers' files, other agents' hooks): no tool writes it.
 */
export function guardOwnedPath(rel: string): boolean {
  const p = rel.replace(/^\.\//, '');
  return ['.hermes', ...HOOK_MANAGER_FILES, ...AGENT_CONFIG_PATHS].some((g) => p === g || p.startsWith(g + '/'));
}

/**
 * The writable part of a git directory: what git itself writes when it commits, fetches,
 * merges, rebases, bisects, stashes or packs (objects, refs, logs, the index, HEAD and the
 * other state files, lock files). Everything else git or hermesd reads there — config,
 * config.worktree, hooks, info/ (attributes, grafts, exclude, sparse-checkout), commondir,
 * gitdir, hermesd/ (the hook runner every hook sources, the daemon's runtime), old-style
 * remotes/ and branches/ — is read-only in the sandbox. A command can still create a new name
 * at the top (git's lock files need the folder writable): one git or hermesd reads
 * (GIT_DIR_READ) is removed after the command (verify.ts).
 */
const GIT_DIR_WRITABLE = new Set([
  'objects',
  'refs',
  'logs',
  'index',
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'MERGE_HEAD',
  'MERGE_MSG',
  'MERGE_MODE',
  'MERGE_RR',
  'MERGE_AUTOSTASH',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'REBASE_HEAD',
  'COMMIT_EDITMSG',
  'SQUASH_MSG',
  'TAG_EDITMSG',
  'NOTES_EDITMSG',
  'EDIT_DESCRIPTION',
  'packed-refs',
  'shallow',
  'sequencer',
  'rebase-merge',
  'rebase-apply',
  'rr-cache',
  'worktrees',
  'modules',
  'lfs',
  'gc.pid',
  'gc.log',
]);
/** Families of git's state files: a bisect's, a notes merge's, split-index files, temporary indexes and lock files. */
const GIT_DIR_WRITABLE_FAMILY = /^(?:BISECT_|NOTES_MERGE_|sharedindex\.|index\.stash\.|next-index-)|\.lock$/;

/**
 * Names at the top of a git directory that git or hermesd read as configuration, code or a
 * pointer elsewhere: `commondir` (another common dir, so another config), `gitdir`,
 * `config.worktree`, `info/` (attributes, grafts, sparse-checkout), `hooks/`, `remotes/` and
 * `branches/` (remote definitions), `hermesd/`. Created by a command where there was none,
 * each is removed after it.
 */
export const GIT_DIR_READ = new Set(['commondir', 'gitdir', 'config', 'config.worktree', 'info', 'hooks', 'remotes', 'branches', 'hermesd']);

/** Whether a command may write `name` at the top of a git directory (see GIT_DIR_WRITABLE). */
export function gitDirWritable(name: string): boolean {
  return GIT_DIR_WRITABLE.has(name) || GIT_DIR_WRITABLE_FAMILY.test(name);
}

/**
 * The git directories of a repository whose non-writable entries the sandbox keeps read-only:
 * the common dir, every linked work tree's git dir under worktrees/, and submodules' git dirs
 * under modules/ (a submodule's hooks run when the user commits in it), a few levels deep.
 */
export function gitDirsOf(commonDir: string, gitDir: string): string[] {
  const out = new Set([commonDir, gitDir]);
  const below = (dir: string, sub: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, sub));
    } catch {
      return;
    }
    for (const name of names) {
      const d = join(dir, sub, name);
      if (!existsSync(join(d, 'HEAD'))) {
        // modules/<a>/<b>: a submodule named with a slash
        if (sub === 'modules' && depth < MODULE_DEPTH) below(join(dir, sub), name, depth + 1);
        continue;
      }
      out.add(d);
      if (depth < MODULE_DEPTH) below(d, 'modules', depth + 1);
    }
  };
  below(commonDir, 'worktrees', 0);
  below(commonDir, 'modules', 0);
  return [...out];
}
/** How deep nested submodules' git dirs are followed. */
const MODULE_DEPTH = 3;

/** Credentials in the user's home: masked inside the sandbox (directories empty, files unreadable). */
export const HOME_SECRET_DIRS = ['.ssh', '.aws', '.gnupg', '.kube', '.config/gcloud', '.config/gh', '.azure', '.docker'];
export const HOME_SECRET_FILES = ['.git-credentials', '.netrc', '.npmrc', '.pypirc', '.config/hub', '.vault-token'];

/**
 * Sockets of services that act with more rights than the command (a container engine is
 * root by another name). Path sockets stay reachable on a read-only mount, so each is
 * covered; the user's runtime directory ($XDG_RUNTIME_DIR: session bus, agents) is hidden.
 */
export const PRIVILEGED_SOCKETS = [
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/run/podman/podman.sock',
  '/run/containerd/containerd.sock',
  '/run/crio/crio.sock',
];

/** Variables a command gets from the daemon's environment, by name; everything else (API keys above all) stays out. */
const ENV_ALLOW = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'NO_COLOR',
  'FORCE_COLOR',
  'CI',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_CONFIG_GLOBAL',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
]);

/**
 * The environment of a sandboxed (or unsandboxed) command: the allowed names from `base`,
 * the configured extra names, TMPDIR, and what git hooks need to find the daemon.
 */
export function sandboxEnv(base: NodeJS.ProcessEnv, opts: { extra?: string[]; home: string; socketDir?: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const extra = new Set(opts.extra ?? []);
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    if (ENV_ALLOW.has(k) || k.startsWith('LC_') || extra.has(k)) env[k] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TMPDIR = '/tmp';
  env.HERMES_HOME = opts.home;
  // Hooks compute the socket path from this; inside the sandbox the agent socket sits there.
  if (opts.socketDir) env.HERMESD_SOCKET_DIR = opts.socketDir;
  return env;
}

/** Resolves `~/…` and relative entries of `guard.sandbox.writable`. */
export function expandHome(p: string, userHome: string): string {
  if (p === '~') return userHome;
  if (p.startsWith('~/')) return join(userHome, p.slice(2));
  return isAbsolute(p) ? p : resolve(userHome, p);
}

export type PlanInput = {
  root: string;
  gitDir: string;
  commonDir: string;
  /** $HERMES_HOME. */
  home: string;
  /** The user's HOME. */
  userHome?: string;
  config: GuardConfig;
  /** Existing protected files (repository-relative) and whether their rule has a generator. */
  protectedFiles: Array<{ rel: string; generator: boolean }>;
  /** Secret files found in the work tree (absolute). */
  secretFiles: string[];
  /** The effective core.hooksPath (as configured), if any. */
  hooksPath?: string;
  /** Host directory bound at /tmp, private to the command's session; undefined: /tmp as it is (see `sharedTmp`). */
  tmp?: string;
  /** Temporary folders commands share with the rest of the machine, writable (another agent's shell: /tmp and its TMPDIR). */
  sharedTmp?: string[];
  /** Whether the user's credentials (~/.ssh, ~/.aws …) are masked; hermesd's own secrets always are. Default true. */
  maskUserSecrets?: boolean;
  empty: string;
  /** Read-only file binds (the git shim over git binaries, the real git at its hidden path). */
  files: Array<[string, string]>;
  /** Writable file binds into read-only directories (the hooks' answer files). */
  scratch?: Array<[string, string]>;
  socketDir?: string;
  socket?: [string, string];
  /** Paths commands must be able to read even under /tmp (the hermesd package, node). */
  alsoVisible: string[];
  /** Config files git reads for this repository beyond .git/config (its includes): read-only too. */
  gitConfigFiles?: string[];
  /** The user's runtime directory ($XDG_RUNTIME_DIR), hidden inside. */
  runtimeDir?: string;
};

/** Whether glob `g` covers everything below its static prefix (`dir/**`) or names one path exactly. */
function coversWholeBase(g: string): boolean {
  const scan = picomatch.scan(g);
  return !scan.isGlob || scan.glob === '**' || scan.glob === '**/*';
}

export function sandboxPlan(input: PlanInput): SandboxPlan {
  const { root, gitDir, commonDir, home } = input;
  const userHome = input.userHome || homedir();
  const sandbox = input.config.guard?.sandbox ?? {};

  // The git directories are mount points of their own, even inside the work tree: a mount point
  // cannot be renamed, so `mv .git elsewhere` and a new .git with a config of the command's fail.
  const writable = existingReal([root, commonDir, gitDir, ...(input.sharedTmp ?? []), ...(sandbox.writable ?? []).map((p) => expandHome(p, userHome))]);
  const inWritable = (p: string) => writable.some((w) => within(w, p));

  const readOnly = new Set<string>();
  const ro = (p: string) => {
    const real = realOf(p);
    if (real && inWritable(real)) readOnly.add(real);
  };
  ro(join(root, '.hermes'));
  for (const f of [...HOOK_MANAGER_FILES, ...AGENT_CONFIG_PATHS]) ro(join(root, f));
  // Git directories: writable only where git writes its own state (GIT_DIR_WRITABLE).
  for (const dir of gitDirsOf(commonDir, gitDir)) {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      // not there (yet)
    }
    for (const name of names) if (!gitDirWritable(name)) ro(join(dir, name));
  }
  // A linked work tree's `.git` file names its git dir: rewritten, it would send the user's git elsewhere.
  const dotGit = join(root, '.git');
  try {
    if (lstatSync(dotGit).isFile()) ro(dotGit);
  } catch {
    // no .git here (the work tree is elsewhere)
  }
  if (input.hooksPath) ro(resolve(root, input.hooksPath));
  // A file .git/config includes could set core.hooksPath or core.fsmonitor (a program git runs) if writable.
  for (const f of input.gitConfigFiles ?? []) ro(f);
  // Protected paths whose rule has no generator can be read-only outright; a generator's
  // files must stay writable so the agent can regenerate them (judged after the command).
  const byBase = new Set<string>();
  for (const rule of input.config.rules ?? []) {
    if (!rule.protect || rule.generator || (rule.exclude && rule.exclude.length > 0)) continue;
    for (const g of rule.protect) {
      const base = picomatch.scan(g).base;
      if (base && coversWholeBase(g)) {
        ro(join(root, base));
        byBase.add(base);
      }
    }
  }
  for (const f of input.protectedFiles) if (!f.generator && ![...byBase].some((b) => f.rel === b || f.rel.startsWith(b + '/'))) ro(join(root, f.rel));
  for (const p of [home, userHome]) if (inWritable(p)) ro(p);

  const maskFiles = new Set<string>();
  const maskDirs = new Set<string>();
  for (const f of input.secretFiles) {
    const real = realOf(f);
    if (real) maskFiles.add(real);
  }
  const userSecrets = input.maskUserSecrets !== false;
  for (const d of userSecrets ? HOME_SECRET_DIRS : []) {
    const real = realOf(join(userHome, d));
    if (real) maskDirs.add(real);
  }
  // The user config holds the model's API key when one is set there: commands do not need it.
  const userConfig = userConfigPath(home);
  const keyInConfig = (() => {
    try {
      return /^\s*apiKey\s*:/m.test(readFileSync(userConfig, 'utf8'));
    } catch {
      return false;
    }
  })();
  for (const f of [
    ...(userSecrets ? HOME_SECRET_FILES.map((x) => join(userHome, x)) : []),
    join(home, '.env'),
    join(home, 'auth.json'),
    ...(keyInConfig ? [userConfig] : []),
    ...PRIVILEGED_SOCKETS,
  ]) {
    const real = realOf(f);
    if (real) maskFiles.add(real);
  }

  // The private /tmp hides whatever lived under the real one (tests keep HOME and HERMES_HOME there).
  const tmpRoot = realOf('/tmp') ?? '/tmp';
  const visible = input.tmp ? existingReal([home, userHome, ...input.alsoVisible]).filter((p) => within(tmpRoot, p) && !inWritable(p)) : [];

  // A mask under the private /tmp is only needed where the real path is visible again.
  const seen = (p: string) => !input.tmp || !within(tmpRoot, p) || inWritable(p) || visible.some((v) => within(v, p));
  return {
    cwd: root,
    writable,
    readOnly: [...readOnly],
    maskFiles: [...maskFiles].filter(seen),
    maskDirs: [...maskDirs].filter(seen),
    visible,
    ...(input.tmp ? { tmp: input.tmp } : {}),
    empty: input.empty,
    files: input.files,
    scratch: input.scratch ?? [],
    hide: [...(input.runtimeDir && realOf(input.runtimeDir) ? [realOf(input.runtimeDir)!] : []), ...(input.socketDir ? [input.socketDir] : [])],
    socket: input.socket,
    network: sandbox.network === true,
  };
}

/**
 * Whether a command confined by `plan` may write the real path `abs`: inside a writable tree and
 * under none of its read-only paths, masks or hidden folders. The same answer the mounts give a
 * process inside, asked by an agent's file tool that runs outside them.
 */
export function planAllowsWrite(plan: Pick<SandboxPlan, 'writable' | 'readOnly' | 'maskFiles' | 'maskDirs' | 'hide' | 'tmp'>, abs: string): boolean {
  if (!plan.writable.some((w) => within(w, abs))) return false;
  return ![...plan.readOnly, ...plan.maskFiles, ...plan.maskDirs, ...plan.hide].some((p) => within(p, abs));
}
