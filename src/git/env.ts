/**
 * The environments git runs in, built from one list of git's variables. hermesd's processes
 * inherit whatever git set for the hook or command that started them: a daemon started from
 * a pre-commit hook carries GIT_DIR and GIT_INDEX_FILE, an agent's command may set anything.
 *
 * Every git that hermesd runs reads what git STORES, not what git's own features show in its
 * place: replace refs (`git replace`, refs/replace/*) and grafts (`info/grafts`) are off, and
 * so is the commit-graph (a cache of commits' parents and trees that a command can write).
 * The rules judge commits with these reads, and a push sends the stored objects whatever
 * the replace refs say.
 */

/** Variables that point git at another repository, work tree or index. */
export const REPO_LOCATING_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
  'GIT_NAMESPACE',
] as const;

/** Variables git sets for the one command a hook runs in (the editor, the reflog message, the quarantine of a push). */
export const HOOK_INVOCATION_ENV = ['GIT_EDITOR', 'GIT_EXEC_PATH', 'GIT_REFLOG_ACTION', 'GIT_QUARANTINE_PATH'] as const;

/** Variables that change git's configuration from outside the repository (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS…). */
const CONFIG_OVERRIDE_ENV = /^GIT_(CONFIG|CEILING_DIRECTORIES)/;

/**
 * Variables beside REPO_LOCATING_ENV that change where git finds the repository and its work
 * tree: a ceiling, discovery across file systems, and settings given on git's command line
 * (`git -c core.worktree=…`, which the repository's config file does not show).
 */
const DISCOVERY_ENV = ['GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'] as const;

/** Whether `env` changes where git finds the repository or its work tree: what git answers there cannot be read from the files alone. */
export function movesGitsView(env: NodeJS.ProcessEnv): boolean {
  return [...REPO_LOCATING_ENV, ...DISCOVERY_ENV].some((k) => env[k] !== undefined);
}

/**
 * What git sets for a pre-receive or update hook: the pushed objects wait in a quarantine
 * directory (GIT_OBJECT_DIRECTORY, with the repository's own objects as its alternate) until
 * the hook accepts the push. A git call of the hook that drops these cannot see what it judges.
 */
const QUARANTINE_ENV = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'] as const;
export type Quarantine = Partial<Record<(typeof QUARANTINE_ENV)[number], string>>;

/** The quarantine of the push this process judges (a pre-receive or update hook), or undefined outside one. */
export function quarantineOf(env: NodeJS.ProcessEnv = process.env): Quarantine | undefined {
  if (!env.GIT_QUARANTINE_PATH && !env.GIT_OBJECT_DIRECTORY) return undefined;
  const out: Quarantine = {};
  for (const k of QUARANTINE_ENV) if (env[k]) out[k] = env[k];
  return out;
}

/**
 * Where grafts are read from: a path that cannot exist (a file under /dev/null), so git reads
 * none and says nothing (it warns about a graft file it cannot open for another reason).
 */
const NO_GRAFT_FILE = '/dev/null/hermesd-reads-no-grafts';

/** Variables that make git show other objects than it stores (a replace ref namespace, a graft file). */
const OBJECT_VIEW_ENV = ['GIT_REPLACE_REF_BASE', 'GIT_GRAFT_FILE'] as const;

/** Configuration every hermesd git runs with: no commit-graph (its parents and trees are a cache a command can write). */
const STORED_VIEW_CONFIG: ReadonlyArray<[string, string]> = [['core.commitGraph', 'false']];

/** `env` with git set to read stored objects only: no replace refs, no grafts, no commit-graph (appended to any GIT_CONFIG_COUNT list). */
function storedView(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  for (const k of OBJECT_VIEW_ENV) delete env[k];
  env.GIT_NO_REPLACE_OBJECTS = '1';
  env.GIT_GRAFT_FILE = NO_GRAFT_FILE;
  const given = Number(env.GIT_CONFIG_COUNT ?? '0');
  let n = Number.isInteger(given) && given > 0 ? given : 0;
  if (n === 0) delete env.GIT_CONFIG_COUNT;
  for (const [key, value] of STORED_VIEW_CONFIG) {
    env[`GIT_CONFIG_KEY_${n}`] = key;
    env[`GIT_CONFIG_VALUE_${n}`] = value;
    n++;
  }
  env.GIT_CONFIG_COUNT = String(n);
  return env;
}

export type GitEnvOptions = {
  /** Use this index instead of `.git/index` (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`). */
  indexFile?: string;
  /** A push's quarantine (quarantineOf): its objects stay visible to git. */
  quarantine?: Quarantine;
};

/**
 * The environment the daemon's git processes start from, fixed once (`fixGitBase`): copying a
 * plain object is cheap, copying `process.env` asks the operating system's table for each variable.
 */
let fixedBase: NodeJS.ProcessEnv | undefined;

/** From now on git starts from a copy of `env` as it is now (the daemon's, once it has left out what its starter set). */
export function fixGitBase(env: NodeJS.ProcessEnv = process.env): void {
  fixedBase = { ...env };
  cleanFixedBase = undefined;
}

/**
 * `base` (default: this process's environment, or the one `fixGitBase` fixed) without the
 * repo-locating variables, reading stored objects only (see above); reads take no optional locks.
 */
export function gitEnv(opts: GitEnvOptions = {}, base: NodeJS.ProcessEnv = fixedBase ?? process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of REPO_LOCATING_ENV) delete env[k];
  env.GIT_OPTIONAL_LOCKS = '0'; // reading must never take index.lock from under a running commit
  if (opts.indexFile) env.GIT_INDEX_FILE = opts.indexFile;
  if (opts.quarantine) Object.assign(env, opts.quarantine);
  return storedView(env);
}

/** `env` without the variables that change git's configuration from outside the repository. */
function withoutConfigOverrides(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const k of Object.keys(out)) if (CONFIG_OVERRIDE_ENV.test(k)) delete out[k];
  return out;
}

/** The fixed base without config overrides, made at its first use. */
let cleanFixedBase: NodeJS.ProcessEnv | undefined;

/**
 * The environment a guard-internal git query runs in: gitEnv's and, beyond it, none of the
 * agent's config overrides.
 */
export function cleanGitEnv(env: NodeJS.ProcessEnv = fixedBase ?? process.env): NodeJS.ProcessEnv {
  if (env !== fixedBase) return gitEnv({}, withoutConfigOverrides(env));
  cleanFixedBase ??= withoutConfigOverrides(env);
  return gitEnv({}, cleanFixedBase);
}

/**
 * `env` without what git set for the command it runs now: for a process that outlives it
 * (the daemon a hook starts), whose later git calls must not see the hook's index or repository.
 */
export function withoutGitInvocation(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const drop = new Set<string>([...REPO_LOCATING_ENV, ...HOOK_INVOCATION_ENV]);
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!drop.has(k)) out[k] = v;
  return out;
}

/**
 * Only what git needs to run, for a repository hermesd owns (the skills repository): no
 * GIT_* of the caller, no editor or pager, no system config, never a credential prompt.
 */
export function isolatedGitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) if (base[k]) env[k] = base[k];
  return env;
}
