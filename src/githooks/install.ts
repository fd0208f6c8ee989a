/**
 * `hermesd init`: installs the git hooks the way the repository's hook manager expects, and
 * keeps every hook the repository already had running; `--uninstall` gives back what init
 * changed. Both are idempotent.
 *
 * - husky: the layout the repository has, never upgraded (src/githooks/husky-layout.ts says
 *   which): husky 9's (`core.hooksPath = .husky/_`, set up when husky is named but not
 *   installed, or chosen with --manager) and husky 5–8's (`core.hooksPath = .husky`, left as
 *   it is) get our block in `.husky/<hook>` (commit those files: teammates get the hooks);
 *   husky 4's scripts in `.git/hooks` are chained in place by hermesd's own hooks directory,
 *   as a custom `core.hooksPath` is.
 * - the pre-commit framework (`.pre-commit-config.yaml`): a `repo: local` entry at the end of
 *   `repos:`; `core.hooksPath` is left alone, so `pre-commit install` works before or after.
 * - lefthook (`lefthook.yml`): a `hermesd` command in its pre-commit section and a re-check in
 *   prepare-commit-msg (the end of lefthook's chain); `core.hooksPath` is left alone.
 * - none (a Go or Python project with no hook manager): small stubs in `.git/hooks` (a hook
 *   that was there keeps running after hermesd's part). Nothing to commit: each clone runs
 *   `hermesd init`, as with `pre-commit install`. No `.husky/` folder in a repository that
 *   never used husky. With a custom `core.hooksPath`, hermesd's own hooks directory takes its
 *   place and chains it.
 *
 * Hooks a manager does not own (post-commit, post-checkout… for evidence) get the same stubs
 * in `.git/hooks`. What init changed (every file's bytes before, config keys) is recorded in
 * <git-dir>/hermesd/install.json (src/githooks/changes.ts says how each is given back).
 */
import { readTextIfAny } from '../storage/read.js';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import husky from 'husky';
import { findHusky, husky4ConfiguredHooks, husky9Dir, type HuskyFound, type HuskyLayout } from './husky-layout.js';
import { ConfigError, UsageError } from '../errors/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { markedSpan } from '../text/marked.js';
import { absPath, Changes, type FileChange, undoChange, type UndoOutcome } from './changes.js';
import { gitSync, gitTry } from '../git/run.js';
import {
  findLefthookConfig,
  lefthookSections,
  PRE_COMMIT_CONFIG,
  readConfig,
  withLefthookEntries,
  withoutConfigEntry,
  withPreCommitEntry,
} from './manager-config.js';
import { clientPath, installRecordPath, settingsPath, sharedRuntimeDirOf, worktreeGitDirs } from '../paths/index.js';
import { defaults } from '../config/schema.js';
import { INIT_CONFIG_TEMPLATE } from '../version.js';
import { installClient } from '../hook-client/build.js';
import { gitRunnerScript, writeRunnerSettings, type RunnerSettings } from '../hook-client/runners.js';
import { shQuote } from '../text/sh-quote.js';

/**
 * The hooks init installs. commit-msg has nothing to judge yet, and every installed hook
 * costs each commit a few shell starts; it is installed when the repository had one to chain.
 */
export const INSTALLED_HOOKS: readonly string[] = ['pre-commit', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'];

export const HOOK_MANAGERS = ['husky', 'pre-commit', 'lefthook', 'git'] as const;
export type HookManager = (typeof HOOK_MANAGERS)[number];

/** Husky 9 writes a stub for each of these; any other hook a repository had gets a stub from us. */
const HUSKY_STUBS = [
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-rebase',
  'post-rewrite',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-auto-gc',
];

const BLOCK_BEGIN = '# >>> hermesd (added by `hermesd init`; `hermesd init --uninstall` removes it) >>>';
const BLOCK_END = '# <<< hermesd <<<';
/** The runner's name in husky's `_` directory (ignored by husky's own .gitignore there). */
const HUSKY_RUNNER = 'hermesd';
const STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"';
/** First line of hermesd's stubs in a hooks directory: how init and doctor recognise them. */
const GIT_STUB_MARK = '# hermesd hook stub';
/**
 * What init writes in place of husky's stub in a husky layout it created: husky's runner `h`
 * costs each hook four forks (dirname, basename, dirname, dirname) and two more `sh` starts
 * before hermesd's own; this one sources hermesd's runner in the shell git started, which
 * does what `h` does (see src/hook-client/runners/git-hook.sh). Without the runner, husky's `h` as before.
 */
export const DIRECT_STUB = [
  '#!/bin/sh',
  '# Written by `hermesd init` in place of husky\'s stub (`. "$(dirname "$0")/h"`): the same, without its forks.',
  'if [ -f "${0%/*}/hermesd" ]; then hermesd_stub=husky; . "${0%/*}/hermesd"; else . "${0%/*}/h"; fi',
  '',
].join('\n');

export type Repo = { root: string; gitDir: string; commonDir: string };

/** How init names a layout when it refreshes an install. */
const LAYOUT_NAMES: Record<HuskyLayout | Exclude<HookManager, 'husky'>, string> = {
  husky4: "husky 4's layout",
  'husky5-8': "husky 5–8's layout",
  husky9: "husky 9's layout",
  'pre-commit': 'the pre-commit framework',
  lefthook: 'lefthook',
  git: 'no hook manager',
};

type InstallState = {
  version: 2;
  manager: HookManager;
  /** core.hooksPath in the repository's own config before init (null: unset). */
  previousHooksPath: string | null;
  /** What init set core.hooksPath to (absent: init left it alone). */
  hooksPathSet?: string;
  /** The runner (absolute). */
  runner: string;
  /** husky: which layout (absent: husky 9's, as every install before husky 4–8 were told apart). */
  huskyLayout?: HuskyLayout;
  /** husky: the husky directory (relative to the root), what init created of it, the hooks directory chained. */
  huskyDir?: string;
  createdHuskyDir?: boolean;
  createdHuskyInternal?: boolean;
  chainDir?: string | null;
  /** Every file init wrote, with its bytes before. */
  files: FileChange[];
  /** Hooks moved aside so they keep running after hermesd's part (absolute paths). */
  moved: Array<{ from: string; to: string }>;
  installedAt: string;
};

/** install.json of hermesd before hook managers (husky only). */
type InstallStateV1 = {
  version: 1;
  previousHooksPath: string | null;
  chainDir: string | null;
  huskyDir: string;
  createdHuskyDir: boolean;
  createdHuskyInternal: boolean;
  createdFiles: string[];
  installedAt: string;
};

export type InstallReport = {
  root: string;
  manager: HookManager;
  /** husky: the layout kept (husky 4's, 5–8's or 9's). */
  huskyLayout?: HuskyLayout;
  /** What init found (for husky, which layout), or that --manager chose: a clause ("found no hook manager"). */
  reason: string;
  /** What init did with it, in words. */
  did: string;
  /** core.hooksPath after init (null: unset, git uses .git/hooks). */
  hooksPath: string | null;
  previousHooksPath: string | null;
  huskyDir?: string;
  runner: string;
  /** Hooks hermesd answers. */
  hooks: string[];
  /** Hooks the repository had that keep running after hermesd's part. */
  chained: string[];
  config: { path: string; written: boolean };
  /** Files to commit so that teammates get the hooks (relative to the root). */
  commit: string[];
  /** The work-tree files that carry hermesd's part, committed or not (empty: the hooks live in this clone only). */
  hookFiles: string[];
  /** Files only this clone has (the runner, stubs in .git/hooks). */
  local: string[];
  /** What to do next, if anything. */
  notes: string[];
  reinstalled: boolean;
};

export type UninstallReport = {
  root: string;
  manager: HookManager | null;
  hooksPath: string | null;
  /** Files whose hermesd block or entry was taken out (your own edits kept). */
  removedBlocks: string[];
  removedFiles: string[];
  restoredFiles: string[];
  /** Files the repository has committed with hermesd's part in them: left as committed (a no-op without hermesd). */
  keptCommitted: string[];
  wasInstalled: boolean;
};

function statePath(repo: Repo): string {
  return installRecordPath(repo.gitDir);
}

export function readInstallState(repo: Repo): InstallState | undefined {
  let raw: InstallState | InstallStateV1;
  try {
    raw = JSON.parse(readFileSync(statePath(repo), 'utf8')) as InstallState | InstallStateV1;
  } catch {
    return undefined;
  }
  if (raw.version === 2) return raw;
  // An install by an earlier hermesd (husky only): the files it created are ours to remove.
  return {
    version: 2,
    manager: 'husky',
    previousHooksPath: raw.previousHooksPath,
    hooksPathSet: `${raw.huskyDir}/_`,
    runner: join(repo.root, raw.huskyDir, '_', HUSKY_RUNNER),
    huskyDir: raw.huskyDir,
    createdHuskyDir: raw.createdHuskyDir,
    createdHuskyInternal: raw.createdHuskyInternal,
    chainDir: raw.chainDir,
    files: raw.createdFiles.map((f) => ({ path: `${raw.huskyDir}/${f}`, before: null, after: '' })),
    moved: [],
    installedAt: raw.installedAt,
  };
}

function localHooksPath(repo: Repo): string | null {
  const r = gitTry(['config', '--local', '--get', 'core.hooksPath'], { cwd: repo.root });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** The hooks directory git uses now (core.hooksPath, local or global, else <common-dir>/hooks). */
function effectiveHooksDir(repo: Repo): string {
  return gitSync(['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], { cwd: repo.root }).trim();
}

/** A stub in a hooks directory (.git/hooks): names its hook (the pre-commit framework runs it as `pre-commit.legacy`), sources the runner. */
function gitStub(hook: string, runner: string, chainDir: string): string {
  return [
    '#!/bin/sh',
    `${GIT_STUB_MARK} (written by \`hermesd init\`; \`hermesd init --uninstall\` puts back what was here)`,
    `hermesd_stub=git hermesd_hook_name=${hook} hermesd_prev_dir=${shQuote(chainDir)}`,
    `if [ -f ${shQuote(runner)} ]; then . ${shQuote(runner)}; exit $?; fi`,
    `echo "hermesd: its hook runner ${runner.replace(/["$`\\]/g, '')} is gone, so this hook judged nothing; run hermesd init (or hermesd init --uninstall)" >&2`,
    `if [ -x "$hermesd_prev_dir/${hook}" ]; then exec "$hermesd_prev_dir/${hook}" "$@"; fi`,
    '',
  ].join('\n');
}

export function isGitStub(text: string): boolean {
  return text.includes(GIT_STUB_MARK);
}

/**
 * Our block in a husky hook file: the runner takes over the rest of the file (run after
 * hermesd's part, then re-checked). The runner runs the file again with HERMESD_BLOCK_DONE
 * set to its pid, so the block steps aside there; husky 5–8's `_/husky.sh` runs the file once
 * more from that shell (`sh -e "$0"`), so the block hands the mark on to the shell it is in.
 * A git hook of a nested git command (its parent is that git) runs hermesd again.
 */
function block(hook: string): string {
  return `${BLOCK_BEGIN}\nif [ "\${HERMESD_BLOCK_DONE:-}" = "$PPID" ]; then HERMESD_BLOCK_DONE=$$; elif [ -x "\${0%/*}/_/${HUSKY_RUNNER}" ]; then "\${0%/*}/_/${HUSKY_RUNNER}" --file "$0" ${hook} "$@"; exit $?; fi\n${BLOCK_END}\n`;
}

/** Removes our block from a hook file's text; returns undefined when there was none. */
export function withoutBlock(text: string): string | undefined {
  const span = markedSpan(text, BLOCK_BEGIN, BLOCK_END);
  return span && text.slice(0, span.from) + text.slice(span.to);
}

/** Puts our block after a shebang line (if any), so it runs before the user's commands. */
function withBlock(text: string, hook: string): string {
  const clean = withoutBlock(text) ?? text;
  if (clean.startsWith('#!')) {
    const nl = clean.indexOf('\n');
    const head = nl < 0 ? clean + '\n' : clean.slice(0, nl + 1);
    return head + block(hook) + (nl < 0 ? '' : clean.slice(nl + 1));
  }
  return block(hook) + clean;
}

/** Whatever hermesd put in a file: our husky block or our config entry. */
function stripOurs(text: string): string | undefined {
  return withoutBlock(text) ?? withoutConfigEntry(text);
}

function isExecutableFile(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Who wrote the hook git runs for `hook` in `dir`: the pre-commit framework, lefthook, hermesd, someone else. */
export function hookOwner(dir: string, hook: string): 'pre-commit' | 'lefthook' | 'hermesd' | 'other' | 'none' {
  const text = readTextIfAny(join(dir, hook));
  if (text === undefined) return 'none';
  if (text.includes('File generated by pre-commit')) return 'pre-commit';
  if (text.includes('call_lefthook') || /lefthook/.test(text.split('\n').slice(0, 30).join('\n'))) return 'lefthook';
  if (isGitStub(text)) return 'hermesd';
  return 'other';
}

/** The husky this repository runs (src/githooks/husky-layout.ts), or undefined. */
function huskyOf(repo: Repo): HuskyFound | undefined {
  return findHusky(repo.root, localHooksPath(repo), join(repo.commonDir, 'hooks'));
}

/** The hook manager this repository uses, what says so, and for husky its layout. */
export function detectManager(repo: Repo): { manager: HookManager; reason: string; husky?: HuskyFound } {
  const found = huskyOf(repo);
  // An installed husky whose hooks git runs through core.hooksPath comes first: nothing else runs beside it.
  if (found?.installed && found.layout !== 'husky4') return { manager: 'husky', reason: found.what, husky: found };
  const hooksDir = effectiveHooksDir(repo);
  const owner = hookOwner(hooksDir, 'pre-commit');
  if (owner === 'pre-commit' && existsSync(join(repo.root, PRE_COMMIT_CONFIG)))
    return { manager: 'pre-commit', reason: 'the pre-commit framework, installed (.git/hooks/pre-commit)' };
  if (owner === 'lefthook' && findLefthookConfig(repo.root)) return { manager: 'lefthook', reason: 'lefthook, installed (.git/hooks/pre-commit)' };
  if (found) return { manager: 'husky', reason: found.what, husky: found };
  const lefthook = findLefthookConfig(repo.root);
  if (lefthook) return { manager: 'lefthook', reason: `lefthook (${lefthook.file})` };
  if (existsSync(join(repo.root, PRE_COMMIT_CONFIG))) return { manager: 'pre-commit', reason: `the pre-commit framework (${PRE_COMMIT_CONFIG})` };
  return { manager: 'git', reason: 'no hook manager' };
}

function writeConfigFromTemplate(repo: Repo): { path: string; written: boolean } {
  const path = join(repo.root, '.hermes', 'config.yaml');
  if (existsSync(path)) return { path, written: false };
  const text = existsSync(INIT_CONFIG_TEMPLATE) ? readFileSync(INIT_CONFIG_TEMPLATE, 'utf8') : FALLBACK_CONFIG;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { flag: 'wx' });
  return { path, written: true };
}

/** Used only when the package's templates/config.yaml is missing (a broken install). */
const FALLBACK_CONFIG = `# hermesd repository configuration (see docs/configuration.md).
rules: []
checks: []
hooks:
  pre-commit:
    rules: true
    checks: []
    fix: propose
`;

function runHuskyInstaller(repo: Repo, huskyDir: string): void {
  const cwd = process.cwd();
  process.chdir(repo.root);
  let message: string;
  try {
    message = husky(huskyDir);
  } finally {
    process.chdir(cwd);
  }
  if (message)
    throw new ConfigError(
      `husky could not install the hooks in ${repo.root}: ${message}${message.includes('HUSKY=0') ? ' (unset HUSKY to let hermesd init install them)' : ''}`,
    );
}

/** lefthook's executable as its own hook script finds it: $LEFTHOOK_BIN, node_modules, PATH. */
function lefthookBinary(root: string): string | undefined {
  const candidates = [
    process.env.LEFTHOOK_BIN,
    join(root, 'node_modules', '.bin', 'lefthook'),
    ...(process.env.PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => join(d, 'lefthook')),
  ];
  return candidates.find((p): p is string => !!p && isExecutableFile(p));
}

/** `<cmd> --version`, or undefined when it is not installed. */
function versionOf(cmd: string): string | undefined {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

type Ctx = {
  repo: Repo;
  state: InstallState;
  changes: Changes;
  chained: string[];
  hooks: string[];
  notes: string[];
  /** What init did, in words (InstallReport.did). */
  did: string;
};

/** hermesd's stubs in git's hooks directory for `hooks`; a hook that was there moves to <common-dir>/hermesd/chained and runs after hermesd's part. */
function stubGitHooks(c: Ctx, hooksDir: string, hooks: readonly string[]): void {
  const chainDir = join(sharedRuntimeDirOf(c.repo.commonDir), 'chained');
  for (const hook of hooks) {
    const file = join(hooksDir, hook);
    const text = readTextIfAny(file);
    if (text !== undefined && !isGitStub(text)) {
      // Keep it running after hermesd's part, byte for byte where it was put back on uninstall.
      const to = join(chainDir, hook);
      mkdirSync(chainDir, { recursive: true });
      if (existsSync(to)) throw new ConfigError(`${to} exists already; move it out of the way and run hermesd init again.`);
      renameSync(file, to);
      c.state.moved.push({ from: file, to });
    }
    if (c.state.moved.some((m) => m.from === file) && isExecutableFile(join(chainDir, hook)) && !c.chained.includes(hook)) c.chained.push(hook);
    c.changes.write(file, gitStub(hook, c.state.runner, chainDir), 0o755);
    if (!c.hooks.includes(hook)) c.hooks.push(hook);
  }
}

/**
 * `chainInPlace`: run the hooks of git's own hooks directory where they are (husky 4's scripts
 * find their husky.sh beside them and take their name from their path), from hermesd's hooks
 * directory; `alsoHooks`: hooks to chain that may not be there yet (husky 4's configured ones).
 */
function installGit(c: Ctx, opts: { onlyHooks?: readonly string[]; chainInPlace?: boolean; alsoHooks?: readonly string[] } = {}): void {
  const { repo, state } = c;
  const current = effectiveHooksDir(repo);
  const standard = join(repo.commonDir, 'hooks');
  let hooksDir = standard;
  if (state.hooksPathSet) {
    hooksDir = absPath(repo.root, state.hooksPathSet);
  } else if (opts.chainInPlace || resolve(current) !== resolve(standard)) {
    // A custom core.hooksPath (githooks/, a user-wide one): hermesd's own directory takes its
    // place and every hook in the old one keeps running after hermesd's part.
    hooksDir = join(sharedRuntimeDirOf(repo.commonDir), 'hooks');
    state.chainDir = opts.chainInPlace ? standard : current;
    mkdirSync(hooksDir, { recursive: true });
    gitSync(['config', '--local', 'core.hooksPath', hooksDir], { cwd: repo.root });
    state.hooksPathSet = hooksDir;
  }
  if (state.chainDir) {
    // Every hook of the old directory: a stub that runs it after hermesd's part (or alone).
    const names = existsSync(state.chainDir)
      ? readdirSync(state.chainDir).filter((n) => !n.endsWith('.sample') && isExecutableFile(join(state.chainDir!, n)))
      : [];
    for (const name of names.sort()) if (!c.chained.includes(name)) c.chained.push(name);
    const hooks = [...new Set([...(opts.onlyHooks ?? INSTALLED_HOOKS), ...names, ...(opts.alsoHooks ?? [])])];
    for (const hook of hooks) {
      c.changes.write(join(hooksDir, hook), gitStub(hook, state.runner, state.chainDir), 0o755);
      if ((opts.onlyHooks ?? INSTALLED_HOOKS).includes(hook) && !c.hooks.includes(hook)) c.hooks.push(hook);
    }
    return;
  }
  stubGitHooks(c, hooksDir, opts.onlyHooks ?? INSTALLED_HOOKS);
}

/**
 * husky 4: its scripts stay in .git/hooks as its installer wrote them (it rewrites them at
 * every npm install); hermesd's hooks directory takes git's place and runs each after
 * hermesd's part, as for a custom core.hooksPath. husky 4's switch (HUSKY_SKIP_HOOKS) skips
 * its scripts; hermesd's hooks are not husky's.
 */
function installHusky4(c: Ctx): void {
  installGit(c, { chainInPlace: true, alsoHooks: husky4ConfiguredHooks(c.repo.root) });
  const dir = relOrAbs(c.repo.root, absPath(c.repo.root, c.state.hooksPathSet!));
  c.did = `core.hooksPath now points at hermesd's hooks directory ${dir}, which runs husky's scripts in .git/hooks after hermesd's part; husky's files are left as they are`;
}

/**
 * husky 5–8: core.hooksPath and husky's `_/husky.sh` are left as they are (husky is never
 * upgraded); our block goes at the top of `<dir>/<hook>`, created when missing (with a
 * shebang: git runs these files itself). The runner (`<dir>/_/hermesd`, ignored as the rest
 * of `_/`) runs the file after hermesd's part, and husky.sh does what it always did there.
 */
function installHusky58(c: Ctx): void {
  const { repo, state } = c;
  const huskyDir = state.huskyDir!;
  state.chainDir = null;
  for (const hook of INSTALLED_HOOKS) {
    const rel = `${huskyDir}/${hook}`;
    const before = readTextIfAny(join(repo.root, rel));
    c.changes.write(rel, withBlock(before ?? '#!/usr/bin/env sh\n', hook), 0o755);
    c.hooks.push(hook);
  }
  c.did = `hermesd's block is at the top of ${INSTALLED_HOOKS.map((h) => `${huskyDir}/${h}`).join(', ')}; core.hooksPath and husky's own files are left as they are (husky is not upgraded)`;
}

function installHusky(c: Ctx, previous: InstallState | undefined): void {
  const { repo, state } = c;
  const currentPath = localHooksPath(repo);
  const huskyDir = state.huskyDir!;
  const ours = `${huskyDir}/_`;
  const huskyAbs = join(repo.root, huskyDir);
  const internal = join(huskyAbs, '_');
  if (!previous) {
    const effective = effectiveHooksDir(repo);
    // Husky's own dirs run <huskyDir>/<hook> already; chaining them would run hooks twice.
    state.chainDir = effective === huskyAbs || effective === internal || !existsSync(effective) ? null : effective;
    state.createdHuskyDir = !existsSync(huskyAbs);
    state.createdHuskyInternal = !existsSync(internal);
  }
  // Re-running husky's installer over a project's own husky setup would replace its runner.
  const ran = !(currentPath === ours && existsSync(join(internal, 'h')));
  if (ran) runHuskyInstaller(repo, huskyDir);
  state.hooksPathSet = ours;

  const chained: string[] = [];
  if (state.chainDir && existsSync(state.chainDir)) {
    for (const name of readdirSync(state.chainDir).sort()) {
      if (!name.endsWith('.sample') && isExecutableFile(join(state.chainDir, name))) chained.push(name);
    }
  }
  c.chained.push(...chained);
  const hooks = [...new Set([...INSTALLED_HOOKS, ...chained])];
  if (state.createdHuskyInternal) {
    // husky stubs every hook it knows; a stub with nothing behind it still costs each commit
    // a shell start (prepare-commit-msg, commit-msg…). Ours alone: keep only what runs.
    for (const name of HUSKY_STUBS) {
      if (!hooks.includes(name) && !existsSync(join(huskyAbs, name))) rmSync(join(internal, name), { force: true });
    }
  }
  for (const hook of hooks) {
    const stub = join(internal, hook);
    // A husky layout of ours gets the direct stub; a project's own keeps husky's runner.
    if (state.createdHuskyInternal) {
      if (readTextIfAny(stub) !== DIRECT_STUB) writeFileSync(stub, DIRECT_STUB, { mode: 0o755 });
      chmodSync(stub, 0o755);
    } else if (!existsSync(stub)) c.changes.write(stub, STUB, 0o755);
    const rel = `${huskyDir}/${hook}`;
    const before = readTextIfAny(join(repo.root, rel));
    c.changes.write(rel, withBlock(before ?? '', hook), 0o755);
    c.hooks.push(hook);
  }
  const files = hooks.map((h) => `${huskyDir}/${h}`).join(', ');
  c.did = state.createdHuskyInternal
    ? `husky 9's layout set up (core.hooksPath = ${ours}) with hermesd's block in ${files}`
    : `hermesd's block is at the top of ${files}; ${ran ? `husky 9's installer set core.hooksPath = ${ours}` : "husky's runner and core.hooksPath are left as they are"}`;
}

function installPreCommitFramework(c: Ctx): void {
  const { repo } = c;
  const hooksDir = effectiveHooksDir(repo);
  // Hooks the framework runs itself get an entry in its config; the others, our stubs.
  const viaFramework = INSTALLED_HOOKS.filter((h) => h === 'pre-commit' || hookOwner(hooksDir, h) === 'pre-commit');
  const text = readConfig(repo.root, PRE_COMMIT_CONFIG) ?? '';
  c.changes.write(PRE_COMMIT_CONFIG, withPreCommitEntry(text, viaFramework, versionOf('pre-commit')));
  c.hooks.push(...viaFramework);
  c.did = `hermesd's entry is at the end of the repos of ${PRE_COMMIT_CONFIG}; core.hooksPath is left alone`;
  const installed = hookOwner(hooksDir, 'pre-commit') === 'pre-commit';
  if (!installed) {
    c.notes.push(
      "the pre-commit framework's hook is not installed in this clone; until `pre-commit install` runs, hermesd's own stub in .git/hooks judges commits (after `pre-commit install`, the framework runs it first and hermesd's entry re-checks at the end)",
    );
  }
  installGit(c, { onlyHooks: INSTALLED_HOOKS.filter((h) => !viaFramework.includes(h) || (h === 'pre-commit' && !installed)) });
}

function installLefthook(c: Ctx): void {
  const { repo } = c;
  const found = findLefthookConfig(repo.root);
  if (!found) throw new ConfigError('no lefthook config found (lefthook.yml); create one or choose another manager with --manager.');
  if (!found.editable) {
    throw new ConfigError(
      `${found.file}: hermesd edits lefthook's YAML config only. Add to it, for pre-commit: a command running \`h="$(git rev-parse --git-common-dir)/hermesd/hook"; [ -f "$h" ] && exec "$h" pre-commit\`, ` +
        'and for prepare-commit-msg the same with `pre-commit-final`; or use a lefthook.yml.',
    );
  }
  const text = readConfig(repo.root, found.file) ?? '';
  const present = lefthookSections(withoutConfigEntry(text) ?? text);
  const viaLefthook = INSTALLED_HOOKS.filter((h) => h === 'pre-commit' || present.includes(h));
  const sections = [
    ...viaLefthook.map((h) => ({ hook: h, run: h })),
    // The end of lefthook's pre-commit chain: git has re-read the index; what changed since the verdict is re-checked.
    { hook: 'prepare-commit-msg', run: 'pre-commit-final' },
  ];
  c.changes.write(found.file, withLefthookEntries(found.file, text, sections));
  c.hooks.push(...viaLefthook);
  c.did = `hermesd's commands are in ${found.file} (${viaLefthook.join(', ')}, and a re-check in prepare-commit-msg); core.hooksPath is left alone`;
  const hooksDir = effectiveHooksDir(repo);
  const installed = hookOwner(hooksDir, 'pre-commit') === 'lefthook';
  if (!installed) {
    c.notes.push(
      "lefthook's hooks are not installed in this clone; until `lefthook install` runs, hermesd's own stub in .git/hooks judges commits (lefthook then takes over and runs hermesd from " +
        found.file +
        ')',
    );
  } else {
    // lefthook writes a git hook per config section, but syncs only when its config looks changed
    // to the second: install the new prepare-commit-msg now, as `lefthook install` would.
    const bin = lefthookBinary(repo.root);
    const hook = join(hooksDir, 'prepare-commit-msg');
    if (bin && hookOwner(hooksDir, 'prepare-commit-msg') !== 'lefthook') {
      const tracked = c.changes.track(hook);
      const r = spawnSync(bin, ['install'], { cwd: repo.root, encoding: 'utf8', timeout: 60_000 });
      tracked.settle();
      if (r.status !== 0)
        c.notes.push(
          `\`lefthook install\` failed (${(r.stderr || r.stdout).trim().split('\n').pop()}); run it yourself so lefthook runs hermesd's re-check in prepare-commit-msg`,
        );
    } else if (!bin && hookOwner(hooksDir, 'prepare-commit-msg') !== 'lefthook') {
      c.notes.push(
        "run `lefthook install` once, so lefthook installs the prepare-commit-msg hook hermesd's re-check runs in (lefthook also does it by itself at the next commit after its config changed)",
      );
    }
  }
  installGit(c, { onlyHooks: INSTALLED_HOOKS.filter((h) => !viaLefthook.includes(h) || (h === 'pre-commit' && !installed)) });
}

export function installHooks(repo: Repo, opts: { nodePath: string; cliPath: string; settings?: RunnerSettings; manager?: HookManager }): InstallReport {
  const previous = readInstallState(repo);
  if (previous && opts.manager && opts.manager !== previous.manager) {
    throw new UsageError(`hermesd is installed here with ${previous.manager}; run hermesd init --uninstall first to switch to ${opts.manager}.`);
  }
  const detected: { manager: HookManager; reason: string; husky?: HuskyFound } = previous
    ? {
        manager: previous.manager,
        reason: `an earlier hermesd init with ${LAYOUT_NAMES[previous.huskyLayout ?? (previous.manager === 'husky' ? 'husky9' : previous.manager)]}`,
      }
    : opts.manager
      ? { manager: opts.manager, reason: opts.manager, ...(opts.manager === 'husky' ? { husky: huskyOf(repo) } : {}) }
      : detectManager(repo);
  const manager = detected.manager;
  const layout: HuskyLayout | undefined =
    manager === 'husky' ? (previous ? (previous.huskyLayout ?? 'husky9') : (detected.husky?.layout ?? 'husky9')) : undefined;
  if (!previous && layout === 'husky5-8' && !detected.husky?.installed) {
    // Installing it would be husky's work (npm install's prepare script), and another husky's installer would upgrade it.
    throw new ConfigError(
      `this repository uses ${detected.reason}. Run husky's own install first (npm install runs it through the "prepare" script, or: npx husky install), then hermesd init again; hermesd never installs or upgrades husky.`,
    );
  }
  const currentPath = localHooksPath(repo);
  const huskyDir = layout && layout !== 'husky4' ? (previous?.huskyDir ?? detected.husky?.dir ?? '.husky') : undefined;
  const runner = huskyDir ? join(repo.root, huskyDir, '_', HUSKY_RUNNER) : join(sharedRuntimeDirOf(repo.commonDir), 'hook');
  const state: InstallState = previous ?? {
    version: 2,
    manager,
    ...(layout && layout !== 'husky9' ? { huskyLayout: layout } : {}),
    previousHooksPath: currentPath,
    runner,
    ...(huskyDir ? { huskyDir } : {}),
    files: [],
    moved: [],
    installedAt: new Date().toISOString(),
  };
  state.runner = runner;
  const c: Ctx = { repo, state, changes: new Changes(repo.root, state.files), chained: [], hooks: [], notes: [], did: '' };

  // The config's bounds and onUnavailable, baked into the runner and its settings file until the daemon refreshes that.
  const settings: RunnerSettings = opts.settings ?? { hooks: defaults().hooks, agents: defaults().agents };
  if (layout === 'husky4') installHusky4(c);
  else if (layout === 'husky5-8') installHusky58(c);
  else if (manager === 'husky') installHusky(c, previous);
  else if (manager === 'pre-commit') installPreCommitFramework(c);
  else if (manager === 'lefthook') installLefthook(c);
  else {
    installGit(c);
    c.did = state.chainDir
      ? `core.hooksPath now points at hermesd's hooks directory ${relOrAbs(repo.root, absPath(repo.root, state.hooksPathSet!))}, which runs the hooks of ${state.chainDir} after hermesd's part`
      : "hermesd's hooks are stubs in .git/hooks, in this clone only";
  }
  if (layout === 'husky4' && !detected.husky?.installed && !previous)
    c.notes.push("husky 4's scripts are not in .git/hooks yet (npm install writes them); hermesd's hooks run them from there once they are");

  // The client, then the runner last: the stubs above name it, and it names nothing of theirs.
  const client = installClient(clientPath(repo.commonDir));
  if (!client.built) c.notes.push(`hermesd's hook client could not be built (${client.error}); the hooks use curl instead, slower (hermesd doctor)`);
  mkdirSync(dirname(runner), { recursive: true });
  writeFileSync(
    runner,
    gitRunnerScript({
      nodePath: opts.nodePath,
      cliPath: opts.cliPath,
      commonDir: repo.commonDir,
      chainDir: huskyDir ? (state.chainDir ?? null) : undefined,
      ...settings.hooks,
    }),
    { mode: 0o755 },
  );
  chmodSync(runner, 0o755);

  mkdirSync(dirname(statePath(repo)), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(statePath(repo), JSON.stringify(state, null, 2) + '\n');
  writeRunnerSettings(repo.gitDir, settings);
  const config = writeConfigFromTemplate(repo);

  // A work-tree file a teammate can get from a commit (not in a git dir, not ignored).
  const inTree = (p: string) => {
    const abs = absPath(repo.root, p);
    if ([repo.gitDir, repo.commonDir].some((d) => abs === d || abs.startsWith(d + '/'))) return undefined;
    const r = relative(repo.root, abs);
    return r && !r.startsWith('..') && !isAbsolute(r) && r !== '.git' && !r.startsWith('.git/') ? r : undefined;
  };
  const ignored = (rel: string) => gitTry(['check-ignore', '-q', '--', rel], { cwd: repo.root }).status === 0;
  const hookFiles = [...new Set(state.files.map((f) => inTree(f.path)).filter((p): p is string => p !== undefined && !ignored(p)))];
  const commit = [
    ...new Set([
      ...(config.written || !isCommitted(repo, '.hermes/config.yaml') ? ['.hermes/config.yaml'] : []),
      ...hookFiles.filter((p) => !isCommitted(repo, p, true)),
    ]),
  ];
  const local = [
    relOrAbs(repo.root, runner),
    ...state.files
      .map((f) => f.path)
      .filter((p) => !inTree(p) || ignored(inTree(p)!))
      .map((p) => relOrAbs(repo.root, absPath(repo.root, p))),
  ];
  return {
    root: repo.root,
    manager,
    ...(layout ? { huskyLayout: layout } : {}),
    reason:
      !previous && opts.manager
        ? `${opts.manager} chosen with --manager${detected.husky ? ` (found ${detected.husky.what})` : ''}`
        : `found ${detected.reason}`,
    did: c.did,
    hooksPath: localHooksPath(repo),
    previousHooksPath: state.previousHooksPath,
    ...(huskyDir ? { huskyDir } : {}),
    runner,
    hooks: [...new Set(c.hooks)],
    chained: [...new Set(c.chained)],
    config,
    commit,
    hookFiles,
    local: [...new Set(local)],
    notes: c.notes,
    reinstalled: previous !== undefined,
  };
}

/** True when HEAD has `rel` with exactly the bytes of the work tree (`same`), or at all. */
function isCommitted(repo: Repo, rel: string, same = false): boolean {
  const r = gitTry(['cat-file', '-e', `HEAD:${rel}`], { cwd: repo.root });
  if (r.status !== 0) return false;
  if (!same) return true;
  const blob = gitTry(['rev-parse', `HEAD:${rel}`], { cwd: repo.root }).stdout.trim();
  const now = gitTry(['hash-object', '--', rel], { cwd: repo.root }).stdout.trim();
  return blob === now;
}

/** Whether another worktree of this clone has hermesd installed (and uses the shared runner). */
function otherInstalls(repo: Repo): boolean {
  return worktreeGitDirs(repo.commonDir)
    .map(installRecordPath)
    .some((f) => f !== statePath(repo) && existsSync(f));
}

function relOrAbs(root: string, abs: string): string {
  const r = relative(root, abs);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : abs;
}

export function uninstallHooks(repo: Repo): UninstallReport {
  const state = readInstallState(repo);
  const currentPath = localHooksPath(repo);
  const report: UninstallReport = {
    root: repo.root,
    manager: state?.manager ?? null,
    hooksPath: currentPath,
    removedBlocks: [],
    removedFiles: [],
    restoredFiles: [],
    keptCommitted: [],
    wasInstalled: state !== undefined,
  };
  const tally = (path: string, outcome: UndoOutcome) => {
    const shown = relOrAbs(repo.root, absPath(repo.root, path));
    if (outcome === 'removed') report.removedFiles.push(shown);
    else if (outcome === 'restored') report.restoredFiles.push(shown);
    else if (outcome === 'unblocked') report.removedBlocks.push(shown);
    else if (outcome === 'kept-committed') report.keptCommitted.push(shown);
  };

  if (state) {
    // A manager installed over one of our stubs keeps it beside its own hook (the pre-commit
    // framework as <hook>.legacy, which it runs; lefthook as <hook>.old): the user's own hook,
    // if we had moved one aside, goes there instead, else our stub just goes.
    for (const change of state.files) {
      const abs = absPath(repo.root, change.path);
      for (const side of [`${abs}.legacy`, `${abs}.old`]) {
        const text = readTextIfAny(side);
        if (text === undefined || !isGitStub(text)) continue;
        const moved = state.moved.find((m) => m.from === abs);
        if (moved && existsSync(moved.to)) {
          renameSync(moved.to, side);
          state.moved = state.moved.filter((m) => m !== moved);
          report.restoredFiles.push(relOrAbs(repo.root, side));
        } else {
          rmSync(side);
          report.removedFiles.push(relOrAbs(repo.root, side));
        }
      }
    }
    for (const change of [...state.files].reverse()) tally(change.path, undoChange(repo.root, change, stripOurs));
    for (const m of [...state.moved].reverse()) {
      // Put a moved hook back where it was, unless something new sits there now.
      const there = readTextIfAny(m.from);
      if (existsSync(m.to) && (there === undefined || isGitStub(there))) {
        mkdirSync(dirname(m.from), { recursive: true });
        renameSync(m.to, m.from);
        report.restoredFiles.push(relOrAbs(repo.root, m.from));
      }
    }
  }
  // Blocks hermesd left in a husky directory it has no record of (a teammate's commit, an old install).
  const huskyDir = state ? state.huskyDir : husky9Dir(repo.root, currentPath);
  if (huskyDir && (!state || state.manager === 'husky')) {
    const huskyAbs = join(repo.root, huskyDir);
    const internal = join(huskyAbs, '_');
    if (state?.createdHuskyInternal) {
      if (existsSync(internal)) report.removedFiles.push(`${huskyDir}/_/`);
      rmSync(internal, { recursive: true, force: true });
    } else {
      rmSync(join(internal, HUSKY_RUNNER), { force: true });
      // Stubs of ours for hooks husky does not know (an install before records existed).
      for (const name of existsSync(internal) ? readdirSync(internal) : []) {
        if (
          state &&
          !HUSKY_STUBS.includes(name) &&
          name !== 'h' &&
          name !== 'husky.sh' &&
          name !== '.gitignore' &&
          readTextIfAny(join(internal, name)) === STUB
        )
          rmSync(join(internal, name));
      }
    }
    if (state?.createdHuskyDir && existsSync(huskyAbs) && readdirSync(huskyAbs).length === 0) {
      rmSync(huskyAbs, { recursive: true });
      report.removedFiles.push(`${huskyDir}/`);
    }
  }

  // Only undo our own setting: a hooks path the user changed since init is theirs.
  if (state?.hooksPathSet && currentPath === state.hooksPathSet) {
    if (state.previousHooksPath === null) gitTry(['config', '--local', '--unset', 'core.hooksPath'], { cwd: repo.root });
    else gitSync(['config', '--local', 'core.hooksPath', state.previousHooksPath], { cwd: repo.root });
    report.hooksPath = state.previousHooksPath;
  }
  if (state && !otherInstalls(repo)) {
    // The runner (but a husky directory's) and the client are shared by the worktrees of this clone: the last one to uninstall removes them.
    if (!state.huskyDir) rmSync(state.runner, { force: true });
    for (const f of [clientPath(repo.commonDir), `${clientPath(repo.commonDir)}.error`]) rmSync(f, { force: true });
    for (const dir of [join(sharedRuntimeDirOf(repo.commonDir), 'chained'), join(sharedRuntimeDirOf(repo.commonDir), 'hooks')]) {
      if (existsSync(dir) && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
    }
  }
  rmSync(statePath(repo), { force: true });
  rmSync(settingsPath(repo.gitDir), { force: true });
  // A stub removed and the hook it stood in for put back: say it once, as restored.
  report.removedFiles = report.removedFiles.filter((f) => !report.restoredFiles.includes(f));
  return report;
}
