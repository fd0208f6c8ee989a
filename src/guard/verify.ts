/**
 * Verification after the fact: what a command did to the repository's git state, judged
 * by comparing before and after (refs, HEAD, the index bytes, core.hooksPath and the hook
 * scripts, hermesd's own hook runner, replace refs and grafts, what sits at the top of each
 * git directory). It closes what a PATH shim cannot: `/usr/bin/git commit --no-verify`,
 * `env PATH=… git`, editing .git/config or a hook file. What can be undone is undone.
 */
import { readBytesIfAny } from '../storage/read.js';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { HermesConfig } from '../config/schema.js';
import { commitsBetween, describeBadCommits, judgeCommits } from './commits.js';
import type { GitPolicy, GitPolicyName } from './guard-config.js';
import { cleanGitEnv } from '../git/env.js';
import { gitOut, runGit } from '../git/run.js';
import { precommitPassed } from '../rules/precommit-marker.js';
import { guardDir, sharedRuntimeDirOf } from '../paths/index.js';
import { readHead, refMap } from '../git/refs.js';
import { GIT_DIR_READ, gitDirsOf } from './sandbox-plan.js';
import { gitReadPaths } from './git-reads.js';

/**
 * `policy` 'rules': a new commit broke repository rules (judged by content); `rules`
 * names them. 'guard': what hermesd runs or reads was changed (its hook runner, a name at the
 * top of a git directory outside what git writes): always undone, whatever the config allows.
 */
export type GitViolation = { policy: GitPolicyName | 'rules' | 'guard'; message: string; undone: boolean; rules?: string[] };

type FileCopy = { sha: string; bytes: Buffer; mode: number };

export type RepoState = {
  root: string;
  gitDir: string;
  commonDir: string;
  gitBin: string;
  takenAt: number;
  headRef?: string;
  headOid?: string;
  refs: Map<string, string>;
  index?: Buffer;
  hooksPath?: string;
  hooksDirs: string[];
  hooks: Map<string, FileCopy>;
  /** A pre-commit hook that calls hermesd is installed: commits must show a pre-commit pass. */
  hermesHook: boolean;
  /** `<common-dir>/hermesd`'s runners: the hook runner every git hook sources, chained hooks, the agents' runners. */
  runtime: Map<string, FileCopy>;
  /** `info/grafts` of the common dir (undefined: none). */
  grafts?: Buffer;
  /** The files git's configuration includes that are there (git-reads.ts), put back when a command changed them (empty for a confined call: they are read-only there). */
  includes: Map<string, FileCopy>;
  /** Whether a pre-commit judged `tree` since `sinceMs` (default: the daemon's in-memory record). */
  judged: (tree: string, sinceMs: number) => boolean;
};

function sha1(b: Buffer): string {
  return createHash('sha1').update(b).digest('hex');
}

function inside(parent: string, child: string): boolean {
  const r = relative(parent, child);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The directories whose files are the repository's hooks (husky: `.husky/_` and the `.husky` scripts it calls). */
function hooksDirsOf(root: string, commonDir: string, hooksPath: string | undefined): string[] {
  const dir = hooksPath ? resolve(root, hooksPath) : join(commonDir, 'hooks');
  if (!inside(root, dir) && !inside(commonDir, dir)) return [];
  const dirs = [dir];
  if (basename(dir) === '_' && basename(dirname(dir)) === '.husky') dirs.push(dirname(dir));
  return dirs;
}

function readHooks(dirs: string[]): Map<string, FileCopy> {
  const out = new Map<string, FileCopy>();
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) readFileCopy(join(dir, name), out);
  }
  return out;
}

function readFileCopy(file: string, into: Map<string, FileCopy>): void {
  try {
    const st = lstatSync(file);
    if (!st.isFile()) return;
    const bytes = readFileSync(file);
    into.set(file, { sha: sha1(bytes), bytes, mode: st.mode });
  } catch {
    // absent, or vanished between readdir and read
  }
}

/**
 * What git hooks run from `<common-dir>/hermesd` (shared by every work tree): the hook runner
 * every hook sources, the agents' hook and MCP runners, and the folders of hooks it chains or
 * points core.hooksPath at. (In the main work tree this folder is also the daemon's runtime
 * folder, whose log and records the daemon writes itself: those are not read.)
 */
const RUNNER_FILES = ['hook', 'agent-hook', 'mcp'];
const RUNNER_DIRS = ['chained', 'hooks'];

function readRunners(commonDir: string): Map<string, FileCopy> {
  const shared = sharedRuntimeDirOf(commonDir);
  const out = readHooks(RUNNER_DIRS.map((d) => join(shared, d)));
  for (const f of RUNNER_FILES) readFileCopy(join(shared, f), out);
  return out;
}

function isRunner(commonDir: string, file: string): boolean {
  const shared = sharedRuntimeDirOf(commonDir);
  return RUNNER_FILES.some((f) => file === join(shared, f)) || RUNNER_DIRS.some((d) => dirname(file) === join(shared, d));
}

/**
 * What git reads by name and a command may not plant: the names at the top of each git directory
 * of the repository (its own, the common one, linked work trees', submodules'), and what git reads
 * as configuration or runs as hooks outside them (git-reads.ts: a file git's config includes, the
 * core.hooksPath folder) where nothing is there — created, one would give git settings or hooks
 * of the command's (an fsmonitor program, a pre-commit git runs).
 */
export type GitReadNames = { dirs: Map<string, Set<string>>; absentReads: string[] };

export function gitReadNames(repo: { root: string; gitDir: string; commonDir: string }, gitBin: string): GitReadNames {
  const dirs = new Map<string, Set<string>>();
  for (const dir of gitDirsOf(repo.commonDir, repo.gitDir)) {
    try {
      dirs.set(dir, new Set(readdirSync(dir)));
    } catch {
      // gone
    }
  }
  // Nothing at the path, not even a link: what a command creates there, git would read.
  return { dirs, absentReads: gitReadPaths(repo, gitBin).filter((f) => !lstatSync(f, { throwIfNoEntry: false })) };
}

/**
 * Removes what a command created that git or hermesd reads by name: at the top of a git
 * directory (a `commondir` that sends git to another common dir and its config, a
 * `config.worktree`, an `info/` that was missing: GIT_DIR_READ), and a file git's configuration
 * includes that was not there. Called first after the command, before any git runs again.
 * Other new names (a tool's state file) are left alone: git reads none of them.
 */
export function undoGitReadNames(before: GitReadNames): GitViolation[] {
  const removed: string[] = [];
  for (const [dir, names] of before.dirs) {
    let now: string[];
    try {
      now = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of now) {
      if (names.has(name) || !GIT_DIR_READ.has(name)) continue;
      rmSync(join(dir, name), { recursive: true, force: true });
      removed.push(join(dir, name));
    }
  }
  const included: string[] = [];
  for (const file of before.absentReads) {
    if (!lstatSync(file, { throwIfNoEntry: false })) continue;
    rmSync(file, { recursive: true, force: true });
    included.push(file);
  }
  const out: GitViolation[] = [];
  if (removed.length > 0)
    out.push({
      policy: 'guard',
      undone: true,
      message: `The command created ${removed.join(', ')} in the git directory: git or hermesd reads it (configuration, hooks, or where the repository is). Removed.`,
    });
  if (included.length > 0)
    out.push({
      policy: 'guard',
      undone: true,
      message: `The command created ${included.join(', ')}, which git reads as configuration or runs as hooks (a file git's config includes, or the core.hooksPath folder): git would take its settings or run its hooks from it. Removed.`,
    });
  return out;
}

function readRefs(gitBin: string, root: string): Map<string, string> {
  const refs = new Map<string, string>();
  // Every ref, not only branches and tags: a commit parked under refs/anything can be merged or pushed later.
  const out = gitOut(gitBin, ['for-each-ref', '--format=%(objectname) %(refname)'], root, cleanGitEnv()) ?? '';
  for (const line of out.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) refs.set(line.slice(at + 1), line.slice(0, at));
  }
  return refs;
}

/**
 * The refs, HEAD and index alone, read from git's files (no git process where they can be): what
 * a command confined where it cannot touch the hooks, the config or hermesd's runners is judged
 * against (undoBadCommits). verifyRepoStateWith needs the whole state (captureRepoState).
 */
export function captureRefState(opts: { root: string; gitDir: string; commonDir: string; gitBin: string; judged?: RepoState['judged'] }): RepoState {
  const { root, gitDir, commonDir, gitBin } = opts;
  const head = readHead({ gitDir, commonDir });
  let index: Buffer | undefined;
  try {
    index = readFileSync(join(gitDir, 'index'));
  } catch {
    index = undefined;
  }
  return {
    root,
    gitDir,
    commonDir,
    gitBin,
    takenAt: Date.now(),
    headRef: head ? (head.branch ?? undefined) : headRefOf(gitDir),
    headOid: head ? (head.commit ?? undefined) : gitOut(gitBin, ['rev-parse', '--verify', '-q', 'HEAD'], root, cleanGitEnv()) || undefined,
    refs: readRefsFast(gitBin, root, { gitDir, commonDir }),
    index,
    hooksDirs: [],
    hooks: new Map(),
    hermesHook: false,
    runtime: new Map(),
    includes: new Map(),
    judged: opts.judged ?? ((tree, sinceMs) => precommitPassed(gitDir, tree, { sinceMs })),
  };
}

function headRefOf(gitDir: string): string | undefined {
  try {
    return /^ref:\s*(\S+)/.exec(readFileSync(join(gitDir, 'HEAD'), 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/** Every ref, from git's files where they can be read that way (refs.ts), else from git. */
function readRefsFast(gitBin: string, root: string, dirs: { gitDir: string; commonDir: string }): Map<string, string> {
  return refMap(dirs) ?? readRefs(gitBin, root);
}

/** Captures what verifyRepoState compares against: the refs, HEAD and the index, then the hooks, core.hooksPath, hermesd's runners and grafts. */
export function captureRepoState(opts: { root: string; gitDir: string; commonDir: string; gitBin: string; judged?: RepoState['judged'] }): RepoState {
  const { root, commonDir, gitBin } = opts;
  const hooksPath = gitOut(gitBin, ['config', '--get', 'core.hooksPath'], root, cleanGitEnv()) || undefined;
  const hooksDirs = hooksDirsOf(root, commonDir, hooksPath);
  const hooks = readHooks(hooksDirs);
  return {
    ...captureRefState(opts),
    hooksPath,
    hooksDirs,
    hooks,
    hermesHook: [...hooks].some(([file, c]) => basename(file) === 'pre-commit' && runsHermesd(root, c.bytes)),
    runtime: readRunners(commonDir),
    grafts: readBytesIfAny(join(commonDir, 'info', 'grafts')),
    includes: readIncludes(opts),
  };
}

/** The bytes of the files git's configuration includes that are there (the hooks folder is read with the hooks). */
function readIncludes(opts: { root: string; gitDir: string; commonDir: string; gitBin: string }): Map<string, FileCopy> {
  const out = new Map<string, FileCopy>();
  for (const f of gitReadPaths(opts, opts.gitBin)) readFileCopy(f, out);
  return out;
}

/** Hook managers whose pre-commit stub runs what their config names: hermesd runs when the config names it. */
const MANAGER_CONFIGS: Array<{ stub: string; configs: string[] }> = [
  { stub: 'pre-commit', configs: ['.pre-commit-config.yaml'] },
  { stub: 'lefthook', configs: ['lefthook.yml', 'lefthook.yaml', '.lefthook.yml', '.lefthook.yaml', '.config/lefthook.yml', '.config/lefthook.yaml'] },
];

/** Whether git's pre-commit hook runs hermesd: directly (hermesd's own stub or block), or through a hook manager's config. */
function runsHermesd(root: string, hook: Buffer): boolean {
  if (hook.includes('hermesd')) return true;
  const text = hook.toString('utf8');
  return MANAGER_CONFIGS.some(
    (m) =>
      text.includes(m.stub) &&
      m.configs.some((f) => {
        try {
          return readFileSync(join(root, f), 'utf8').includes('hermesd');
        } catch {
          return false;
        }
      }),
  );
}

function restoreIndex(before: RepoState): void {
  const file = join(before.gitDir, 'index');
  if (before.index) writeFileSync(file, before.index);
  else rmSync(file, { force: true });
}

function isAncestor(s: RepoState, a: string, b: string): boolean {
  return runGit(s.gitBin, ['merge-base', '--is-ancestor', a, b], { cwd: s.root, env: cleanGitEnv() }).code === 0;
}

function isPushed(s: RepoState, oid: string): boolean {
  return !!gitOut(s.gitBin, ['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${oid}`, 'refs/remotes'], s.root, cleanGitEnv());
}

function moveRef(s: RepoState, ref: string, to: string | undefined, from: string | undefined): void {
  const env = cleanGitEnv();
  const msg = ['-m', 'hermesd guard: undo a change the git policy refuses'];
  if (to) runGit(s.gitBin, ['update-ref', ...msg, ...(ref === 'HEAD' ? ['--no-deref'] : []), ref, to, ...(from ? [from] : [])], { cwd: s.root, env });
  else runGit(s.gitBin, ['update-ref', '-d', ref], { cwd: s.root, env });
}

/** New commits made by `git commit` (per the HEAD reflog) since the state was taken. */
function commitsMadeSince(before: RepoState, after: RepoState): string[] {
  if (!after.headOid) return [];
  const env = cleanGitEnv();
  const known = [...new Set([...before.refs.values(), ...(before.headOid ? [before.headOid] : [])])];
  const fresh = new Set((gitOut(before.gitBin, ['rev-list', after.headOid, '--not', ...known], before.root, env) ?? '').split('\n').filter(Boolean));
  if (fresh.size === 0) return [];
  const log = gitOut(before.gitBin, ['log', '-g', '-n', '100', '--format=%H%x09%gs', 'HEAD'], before.root, env);
  if (log === undefined) return [...fresh];
  const out: string[] = [];
  for (const line of log.split('\n')) {
    const [oid, subject = ''] = line.split('\t');
    if (oid && fresh.has(oid) && /^commit( \((amend|initial|merge)\))?:/.test(subject) && !out.includes(oid)) out.push(oid);
  }
  return out;
}

/**
 * Compares the repository with `before` and undoes what the policy refuses: one violation
 * per finding (`undone` says whether it was rolled back), and whether any ref or HEAD moved
 * during the command (only then are new commits looked for, so a command that
 * moved nothing costs no more git).
 */
export function verifyRepoStateWith(before: RepoState, policy: GitPolicy): { violations: GitViolation[]; refsMoved: boolean } {
  const after = captureRepoState(before);
  const refsMoved = !(before.headOid === after.headOid && before.refs.size === after.refs.size && [...before.refs].every(([r, o]) => after.refs.get(r) === o));
  return { violations: verifyAgainst(before, after, policy), refsMoved };
}

/** Puts files back as `before` had them (changed, deleted or added ones); the paths changed, relative to `root`. */
function restoreFiles(root: string, before: Map<string, FileCopy>, after: Map<string, FileCopy>, isOurs: (file: string) => boolean): string[] {
  const changed: string[] = [];
  for (const [file, copy] of before) {
    const now = after.get(file);
    if (now && now.sha === copy.sha && (now.mode & 0o777) === (copy.mode & 0o777)) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, copy.bytes);
    chmodSync(file, copy.mode & 0o7777);
    changed.push(relative(root, file));
  }
  for (const file of after.keys()) {
    if (before.has(file) || !isOurs(file)) continue;
    rmSync(file, { force: true });
    changed.push(relative(root, file));
  }
  return changed;
}

function verifyAgainst(before: RepoState, after: RepoState, policy: GitPolicy): GitViolation[] {
  const v: GitViolation[] = [];
  const env = cleanGitEnv();

  // hermesd's own runner, which every git hook of every work tree sources: never the command's to change.
  const runner = restoreFiles(before.root, before.runtime, after.runtime, (file) => isRunner(before.commonDir, file));
  if (runner.length > 0)
    v.push({
      policy: 'guard',
      undone: true,
      message: `hermesd's hook runner was changed (${runner.join(', ')}); every git hook runs it, outside the sandbox. It has been restored.`,
    });

  // A file git's configuration includes sets what git runs (core.hooksPath, core.fsmonitor): never the command's to change.
  const included = restoreFiles(before.root, before.includes, after.includes, () => false);
  if (included.length > 0)
    v.push({
      policy: 'guard',
      undone: true,
      message: `The command changed ${included.join(', ')}, which git's configuration includes: git takes its settings from it (which hooks run, programs git starts). It has been restored.`,
    });

  if (policy.hookConfig === 'refuse') {
    // Replace refs and grafts make git show other commits than it stores (hermesd's judgements read the stored ones).
    const replaced: string[] = [];
    for (const [ref, oid] of after.refs) {
      if (!ref.startsWith('refs/replace/') || before.refs.get(ref) === oid) continue;
      moveRef(before, ref, before.refs.get(ref), oid);
      replaced.push(ref);
    }
    for (const [ref, oid] of before.refs) {
      if (ref.startsWith('refs/replace/') && !after.refs.has(ref)) {
        moveRef(before, ref, oid, undefined);
        replaced.push(ref);
      }
    }
    if (replaced.length > 0)
      v.push({
        policy: 'hookConfig',
        undone: true,
        message: `Replace refs were changed (${replaced.join(', ')}): git would show other commits in place of the ones it stores. They have been put back.`,
      });
    const graftFile = join(before.commonDir, 'info', 'grafts');
    if (!(before.grafts && after.grafts ? before.grafts.equals(after.grafts) : before.grafts === after.grafts)) {
      if (before.grafts) writeFileSync(graftFile, before.grafts);
      else rmSync(graftFile, { force: true });
      v.push({
        policy: 'hookConfig',
        undone: true,
        message: `${relative(before.root, graftFile)} was changed: grafts make git show other parents than the commits store. It has been put back.`,
      });
    }
  }

  if (policy.hookConfig === 'refuse') {
    if (after.hooksPath !== before.hooksPath) {
      if (before.hooksPath === undefined) runGit(before.gitBin, ['config', '--unset-all', 'core.hooksPath'], { cwd: before.root, env });
      else runGit(before.gitBin, ['config', '--replace-all', 'core.hooksPath', before.hooksPath], { cwd: before.root, env });
      v.push({
        policy: 'hookConfig',
        undone: true,
        message: `core.hooksPath was changed (${before.hooksPath ?? 'unset'} → ${after.hooksPath ?? 'unset'}); it has been set back.`,
      });
    }
    const changed = restoreFiles(before.root, before.hooks, after.hooks, (file) => before.hooksDirs.includes(dirname(file)));
    if (changed.length > 0)
      v.push({ policy: 'hookConfig', undone: true, message: `Hook scripts were changed (${changed.join(', ')}); they have been restored.` });
  }

  const indexSame = (before.index && after.index && before.index.equals(after.index)) || (!before.index && !after.index);
  const refsSame = before.headOid === after.headOid && before.refs.size === after.refs.size && [...before.refs].every(([r, o]) => after.refs.get(r) === o);
  if (indexSame && refsSame) return v;

  let headRestored = false;
  if (policy.noVerify === 'refuse' && before.hermesHook) {
    const unjudged = commitsMadeSince(before, after).filter((oid) => {
      const tree = gitOut(before.gitBin, ['rev-parse', `${oid}^{tree}`], before.root, env);
      return !tree || !before.judged(tree, before.takenAt);
    });
    if (unjudged.length > 0) {
      const ref = after.headRef && after.headRef === before.headRef ? after.headRef : 'HEAD';
      moveRef(before, ref, before.headOid, after.headOid);
      restoreIndex(before);
      headRestored = true;
      v.push({
        policy: 'noVerify',
        undone: true,
        message: `A commit was made without the pre-commit hook judging it (${unjudged.map((o) => o.slice(0, 10)).join(', ')}); HEAD and the index have been put back. Commit with plain \`git commit\` so the hooks run.`,
      });
    }
  }

  if (policy.rewritePushed === 'refuse') {
    // Read after the noVerify undo above (it may have moved HEAD's branch); each move below touches only its own ref.
    const current = readRefs(before.gitBin, before.root);
    for (const [ref, old] of before.refs) {
      if (!ref.startsWith('refs/heads/')) continue;
      const now = current.get(ref);
      if (!now || now === old || isAncestor(before, old, now) || !isPushed(before, old)) continue;
      moveRef(before, ref, old, now);
      const isHead = ref === before.headRef;
      if (isHead && !headRestored) restoreIndex(before);
      v.push({
        policy: 'rewritePushed',
        undone: true,
        message: `${ref.slice('refs/heads/'.length)} was moved off commits that are already pushed (history rewrite); the branch${isHead ? ' and the index have' : ' has'} been put back.${isHead ? ' The work tree may differ from HEAD now: check `git status`.' : ''}`,
      });
    }
  }

  if (policy.forcePush === 'refuse') {
    for (const [ref, old] of before.refs) {
      if (!ref.startsWith('refs/remotes/')) continue;
      const now = after.refs.get(ref);
      if (!now || now === old || isAncestor(before, old, now)) continue;
      v.push({
        policy: 'forcePush',
        undone: false,
        message: `${ref.slice('refs/remotes/'.length)} moved from ${old.slice(0, 10)} to ${now.slice(0, 10)} without containing it: the remote was force-pushed. This cannot be undone locally; tell the user (the old commit is ${old}).`,
      });
    }
  }

  if (policy.addIgnored === 'refuse') {
    const nowIndex = (() => {
      try {
        return readFileSync(join(before.gitDir, 'index'));
      } catch {
        return undefined;
      }
    })();
    if (nowIndex && !(before.index && before.index.equals(nowIndex))) {
      const added = newlyStagedIgnored(before);
      if (added.length > 0) {
        runGit(before.gitBin, ['update-index', '--force-remove', '--', ...added], { cwd: before.root, env });
        v.push({
          policy: 'addIgnored',
          undone: true,
          message: `Ignored files were staged (${added.slice(0, 5).join(', ')}${added.length > 5 ? ', …' : ''}); they have been unstaged (the files themselves are untouched).`,
        });
      }
    }
  }
  return v;
}

/** Ignored files in the index now that were not in it before. */
function newlyStagedIgnored(before: RepoState): string[] {
  const env = cleanGitEnv();
  const list = (e: NodeJS.ProcessEnv) => {
    const r = runGit(before.gitBin, ['ls-files', '-z', '--cached', '--ignored', '--exclude-standard'], { cwd: before.root, env: e });
    return r.code === 0 ? r.stdout.split('\0').filter(Boolean) : [];
  };
  const now = list(env);
  if (now.length === 0) return [];
  let was = new Set<string>();
  if (before.index) {
    const tmp = join(guardDir(before.gitDir), `index-before-${process.pid}`);
    mkdirSync(dirname(tmp), { recursive: true });
    writeFileSync(tmp, before.index);
    try {
      const r = runGit(before.gitBin, ['ls-files', '-z', '--cached'], { cwd: before.root, env: { ...env, GIT_INDEX_FILE: tmp } });
      was = new Set(r.stdout.split('\0').filter(Boolean));
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return now.filter((f) => !was.has(f));
}

// --- commits judged by content ---------------------------------------------------

/** HEAD's commit from the HEAD file and the refs just read (no git process): a branch's tip, or a detached id. */
function headOf(gitDir: string, refs: Map<string, string>): string | undefined {
  try {
    const text = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    const m = /^ref:\s*(\S+)/.exec(text);
    if (m) return refs.get(m[1]!);
    return /^[0-9a-f]{40,64}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Refs whose new commits are judged: everything but remote-tracking refs (those hold what others pushed). */
const isRemoteRef = (ref: string) => ref.startsWith('refs/remotes/');

/**
 * Every commit a ref reaches now that no ref reached before (nor any remote-tracking ref
 * now), judged by content: one that breaks a rule — and that the pre-commit hook did not
 * pass — takes every ref that reaches it back where it was (a new ref is deleted), and the
 * index too when HEAD's branch moves back. Whatever made the commits; the reflog is not read.
 */
export async function undoBadCommits(
  before: RepoState,
  config: HermesConfig,
  opts: { judged?: (tree: string) => boolean; always?: HermesConfig } = {},
): Promise<GitViolation[]> {
  const now = readRefsFast(before.gitBin, before.root, before);
  const headNow = headOf(before.gitDir, now);
  const moved: Array<{ ref: string; old?: string; now: string }> = [];
  for (const [ref, oid] of now) if (!isRemoteRef(ref) && before.refs.get(ref) !== oid) moved.push({ ref, old: before.refs.get(ref), now: oid });
  let detachedHead = false;
  if (!before.headRef && headNow && headNow !== before.headOid) {
    moved.push({ ref: 'HEAD', old: before.headOid, now: headNow });
    detachedHead = true;
  }
  if (moved.length === 0) return [];
  const base = [
    ...[...before.refs].filter(([r]) => /^refs\/(heads|tags|remotes)\//.test(r)).map(([, o]) => o),
    ...[...now].filter(([r]) => isRemoteRef(r)).map(([, o]) => o),
    ...(before.headOid ? [before.headOid] : []),
  ];
  const fresh = commitsBetween(
    before.root,
    moved.map((m) => m.now),
    base,
    before.gitBin,
  );
  if (fresh.length === 0) return [];
  const bad = await judgeCommits(before.root, config, fresh, { gitBin: before.gitBin, judged: opts.judged, always: opts.always });
  if (bad.length === 0) return [];
  const badSet = new Set(bad.map((b) => b.commit));
  const undone: string[] = [];
  let indexBack = false;
  for (const m of moved) {
    const reaches = commitsBetween(before.root, [m.now], base, before.gitBin).some((c) => badSet.has(c.commit));
    if (!reaches) continue;
    moveRef(before, m.ref, m.old, m.now);
    undone.push(m.ref === 'HEAD' ? 'HEAD' : m.ref.replace(/^refs\/(heads|tags)\//, ''));
    if (m.ref === before.headRef || (m.ref === 'HEAD' && detachedHead)) indexBack = true;
  }
  if (indexBack) restoreIndex(before);
  const rules = [...new Set(bad.flatMap((b) => b.violations.map((v) => v.rule)))];
  return [
    {
      policy: 'rules',
      undone: undone.length > 0,
      rules,
      message:
        `New commits break repository rules (judged by their content, however they were made):\n${describeBadCommits(bad)}\n` +
        (undone.length > 0
          ? `${undone.join(', ')} ${undone.length === 1 ? 'has' : 'have'} been put back where ${undone.length === 1 ? 'it was' : 'they were'}${indexBack ? ', with the index' : ''}. Make the change the rules allow and commit with plain \`git commit\`.`
          : ''),
    },
  ];
}
