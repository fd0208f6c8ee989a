/**
 * `hermesd init`: installs the git hooks with husky's layout (core.hooksPath → <dir>/_)
 * and keeps every hook the repository already had running; `--uninstall` puts back what was
 * there. Both are idempotent. What init changed is recorded in <git-dir>/hermesd/install.json
 * so that uninstall restores exactly that, and a re-run does not mistake our own hooks
 * path for the user's previous one.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import husky from 'husky';
import { ConfigError } from '../errors/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { git, gitTry } from './git.js';

/** The hooks the daemon answers. */
import { HERMESD_HOOKS, type HookName } from './names.js';
export { HERMESD_HOOKS, type HookName };
/**
 * The hooks init installs. commit-msg has nothing to judge yet, and every installed hook
 * costs each commit a few shell starts; it is installed when the repository had one to chain.
 */
export const INSTALLED_HOOKS: readonly string[] = ['pre-commit', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'];

/** Husky 9 writes a stub for each of these; any other hook a repository had gets a stub from us. */
const HUSKY_STUBS = ['pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-rebase', 'post-rewrite', 'post-checkout', 'post-merge', 'pre-push', 'pre-auto-gc'];

const BLOCK_BEGIN = '# >>> hermesd (added by `hermesd init`; `hermesd init --uninstall` removes it) >>>';
const BLOCK_END = '# <<< hermesd <<<';
const RUNNER = 'hermesd';
const STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"';
/**
 * What init writes in place of husky's stub in a husky layout it created: husky's runner `h`
 * costs each hook four forks (dirname, basename, dirname, dirname) and two more `sh` starts
 * before hermesd's own; this one sources hermesd's runner in the shell git started, which
 * does what `h` does (see hooks/hermesd-hook.sh). Without the runner, husky's `h` as before.
 */
export const DIRECT_STUB = [
  '#!/bin/sh',
  '# Written by `hermesd init` in place of husky\'s stub (`. "$(dirname "$0")/h"`): the same, without its forks.',
  'if [ -f "${0%/*}/hermesd" ]; then hermesd_direct=1; . "${0%/*}/hermesd"; else . "${0%/*}/h"; fi',
  '',
].join('\n');
/** Default of hooks.timeoutMs baked into the runner until the daemon refreshes hook-settings. */
const BAKED_TIMEOUT_MS = 10_000;

export type Repo = { root: string; gitDir: string; commonDir: string };

type InstallState = {
  version: 1;
  /** core.hooksPath in the repository's own config before init (null: unset). */
  previousHooksPath: string | null;
  /** The directory whose hooks ran before init and that the runner chains (null: none). */
  chainDir: string | null;
  /** The husky directory, relative to the work tree root. */
  huskyDir: string;
  createdHuskyDir: boolean;
  createdHuskyInternal: boolean;
  /** Hook files under huskyDir that init created (removed again on uninstall when only our block is left). */
  createdFiles: string[];
  installedAt: string;
};

export type InstallReport = {
  root: string;
  hooksPath: string;
  huskyDir: string;
  previousHooksPath: string | null;
  chained: string[];
  hooks: string[];
  config: { path: string; written: boolean };
  reinstalled: boolean;
};

export type UninstallReport = { root: string; removedBlocks: string[]; hooksPath: string | null; removedFiles: string[]; wasInstalled: boolean };

/** Where package files (hooks/, templates/) are: the nearest package.json above this module. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'hooks'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('hermesd package root not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

function statePath(repo: Repo): string {
  return join(repo.gitDir, 'hermesd', 'install.json');
}

export function readInstallState(repo: Repo): InstallState | undefined {
  try {
    return JSON.parse(readFileSync(statePath(repo), 'utf8')) as InstallState;
  } catch {
    return undefined;
  }
}

function localHooksPath(repo: Repo): string | null {
  const r = gitTry(['config', '--local', '--get', 'core.hooksPath'], { cwd: repo.root });
  return r.status === 0 ? r.stdout.trim() : null;
}

function effectiveHooksDir(repo: Repo): string {
  return git(['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], { cwd: repo.root }).trim();
}

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The runner: baked settings, then hooks/hermesd-hook.sh. */
export function runnerScript(repo: Repo, opts: { nodePath: string; cliPath: string; chainDir: string | null; timeoutMs: number }): string {
  const body = readFileSync(join(packageRoot(), 'hooks', 'hermesd-hook.sh'), 'utf8');
  const hash = createHash('sha256').update(repo.root).digest('hex').slice(0, 16);
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return [
    '#!/bin/sh',
    '# Generated by `hermesd init`, which rewrites it; edit hooks/hermesd-hook.sh in hermesd instead.',
    `HERMESD_NODE=${shQuote(opts.nodePath)}`,
    `HERMESD_CLI=${shQuote(opts.cliPath)}`,
    `HERMESD_ROOT=${shQuote(repo.root)}`,
    `HERMESD_ROOT_HASH=${hash}`,
    `HERMESD_GIT_DIR=${shQuote(repo.gitDir)}`,
    `HERMESD_COMMON_DIR=${shQuote(repo.commonDir)}`,
    `HERMESD_PREV_HOOKS=${shQuote(opts.chainDir ?? '')}`,
    `HERMESD_UID=${uid}`,
    `HERMESD_TIMEOUT_MS=${opts.timeoutMs}`,
    body,
  ].join('\n');
}

/** HERMESD_BLOCK_DONE: the direct stub ran hermesd already and now runs this file for your commands. */
function block(hook: string): string {
  return `${BLOCK_BEGIN}\nif [ -x "\${0%/*}/_/${RUNNER}" ] && [ "\${HERMESD_BLOCK_DONE:-}" != "$PPID" ]; then "\${0%/*}/_/${RUNNER}" ${hook} "$@"; fi\n${BLOCK_END}\n`;
}

/** Removes our block from a hook file's text; returns undefined when there was none. */
export function withoutBlock(text: string): string | undefined {
  const start = text.indexOf(BLOCK_BEGIN);
  if (start < 0) return undefined;
  const endAt = text.indexOf(BLOCK_END, start);
  if (endAt < 0) return undefined;
  let end = endAt + BLOCK_END.length;
  if (text[end] === '\n') end++;
  return text.slice(0, start) + text.slice(end);
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

function isExecutableFile(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** An existing husky 9 setup: core.hooksPath = <dir>/_ with husky's runner `h` in it. */
function existingHuskyDir(repo: Repo, hooksPath: string | null): string | undefined {
  if (!hooksPath) return undefined;
  const abs = isAbsolute(hooksPath) ? hooksPath : resolve(repo.root, hooksPath);
  if (!abs.endsWith('/_') || !existsSync(join(abs, 'h'))) return undefined;
  const dir = relative(repo.root, dirname(abs));
  return dir && !dir.startsWith('..') ? dir : undefined;
}

function writeConfigFromTemplate(repo: Repo): { path: string; written: boolean } {
  const path = join(repo.root, '.hermes', 'config.yaml');
  if (existsSync(path)) return { path, written: false };
  const template = join(packageRoot(), 'templates', 'config.yaml');
  const text = existsSync(template) ? readFileSync(template, 'utf8') : FALLBACK_CONFIG;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { flag: 'wx' });
  return { path, written: true };
}

/** Used only when the package's templates/config.yaml is missing (a broken install). */
const FALLBACK_CONFIG = `# hermesd repository configuration (see the README: "Repository rules and checks").
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
  if (message) throw new ConfigError(`husky could not install the hooks in ${repo.root}: ${message}${message.includes('HUSKY=0') ? ' (unset HUSKY to let hermesd init install them)' : ''}`);
}

export function installHooks(repo: Repo, opts: { nodePath: string; cliPath: string; timeoutMs?: number; longPreCommit?: boolean }): InstallReport {
  const previous = readInstallState(repo);
  const currentPath = localHooksPath(repo);
  const husky9 = existingHuskyDir(repo, currentPath);
  const huskyDir = previous?.huskyDir ?? husky9 ?? '.husky';
  const ours = `${huskyDir}/_`;
  const reinstalled = previous !== undefined && currentPath === ours;

  let state: InstallState;
  if (reinstalled) {
    state = previous!;
  } else {
    const effective = effectiveHooksDir(repo);
    const huskyAbs = join(repo.root, huskyDir);
    // Husky's own dirs run <huskyDir>/<hook> already; chaining them would run hooks twice.
    const chainDir = effective === huskyAbs || effective === join(huskyAbs, '_') || !existsSync(effective) ? null : effective;
    state = {
      version: 1,
      previousHooksPath: currentPath,
      chainDir,
      huskyDir,
      createdHuskyDir: !existsSync(huskyAbs),
      createdHuskyInternal: !existsSync(join(huskyAbs, '_')),
      createdFiles: [],
      installedAt: new Date().toISOString(),
    };
  }

  const huskyAbs = join(repo.root, huskyDir);
  const internal = join(huskyAbs, '_');
  // Re-running husky's installer over a project's own husky setup would replace its runner.
  if (!(currentPath === ours && existsSync(join(internal, 'h')))) runHuskyInstaller(repo, huskyDir);

  const timeoutMs = opts.timeoutMs ?? BAKED_TIMEOUT_MS;
  writeFileSync(join(internal, RUNNER), runnerScript(repo, { nodePath: opts.nodePath, cliPath: opts.cliPath, chainDir: state.chainDir, timeoutMs }), { mode: 0o755 });
  chmodSync(join(internal, RUNNER), 0o755);

  const chained: string[] = [];
  if (state.chainDir && existsSync(state.chainDir)) {
    for (const name of readdirSync(state.chainDir).sort()) {
      if (!name.endsWith('.sample') && isExecutableFile(join(state.chainDir, name))) chained.push(name);
    }
  }
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
      if (!existsSync(stub) || readFileSync(stub, 'utf8') !== DIRECT_STUB) writeFileSync(stub, DIRECT_STUB, { mode: 0o755 });
      chmodSync(stub, 0o755);
    } else if (!existsSync(stub)) writeFileSync(stub, STUB, { mode: 0o755 });
    const file = join(huskyAbs, hook);
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (before === undefined && !state.createdFiles.includes(hook)) state.createdFiles.push(hook);
    const after = withBlock(before ?? '', hook);
    if (after !== before) writeFileSync(file, after, { mode: 0o755 });
  }

  mkdirSync(dirname(statePath(repo)), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(statePath(repo), JSON.stringify(state, null, 2) + '\n');
  writeHookSettings(repo.gitDir, { timeoutMs, longPreCommit: opts.longPreCommit });
  const config = writeConfigFromTemplate(repo);
  return { root: repo.root, hooksPath: ours, huskyDir, previousHooksPath: state.previousHooksPath, chained, hooks, config, reinstalled };
}

export function uninstallHooks(repo: Repo): UninstallReport {
  const state = readInstallState(repo);
  const currentPath = localHooksPath(repo);
  const huskyDir = state?.huskyDir ?? existingHuskyDir(repo, currentPath) ?? '.husky';
  const huskyAbs = join(repo.root, huskyDir);
  const removedBlocks: string[] = [];
  const removedFiles: string[] = [];

  if (existsSync(huskyAbs)) {
    for (const name of readdirSync(huskyAbs)) {
      const file = join(huskyAbs, name);
      if (!statSync(file).isFile()) continue;
      const text = readFileSync(file, 'utf8');
      const stripped = withoutBlock(text);
      if (stripped === undefined) continue;
      removedBlocks.push(name);
      if (state?.createdFiles.includes(name) && stripped.trim() === '') {
        rmSync(file);
        removedFiles.push(`${huskyDir}/${name}`);
      } else writeFileSync(file, stripped);
    }
  }
  const internal = join(huskyAbs, '_');
  if (state?.createdHuskyInternal) {
    if (existsSync(internal)) removedFiles.push(`${huskyDir}/_/`);
    rmSync(internal, { recursive: true, force: true });
  } else {
    rmSync(join(internal, RUNNER), { force: true });
    // Stubs we added for hooks husky does not know; husky's own stubs stay.
    for (const name of existsSync(internal) ? readdirSync(internal) : []) {
      if (!HUSKY_STUBS.includes(name) && name !== 'h' && name !== 'husky.sh' && name !== '.gitignore' && readFileSync(join(internal, name), 'utf8') === STUB && state) {
        rmSync(join(internal, name));
      }
    }
  }
  if (state?.createdHuskyDir && existsSync(huskyAbs) && readdirSync(huskyAbs).length === 0) {
    rmSync(huskyAbs, { recursive: true });
    removedFiles.push(`${huskyDir}/`);
  }

  let hooksPath = currentPath;
  // Only undo our own setting: a hooks path the user changed since init is theirs.
  if (state && currentPath === `${huskyDir}/_`) {
    if (state.previousHooksPath === null) gitTry(['config', '--local', '--unset', 'core.hooksPath'], { cwd: repo.root });
    else git(['config', '--local', 'core.hooksPath', state.previousHooksPath], { cwd: repo.root });
    hooksPath = state.previousHooksPath;
  }
  rmSync(statePath(repo), { force: true });
  rmSync(join(repo.gitDir, 'hermesd', 'hook-settings'), { force: true });
  return { root: repo.root, removedBlocks, hooksPath, removedFiles, wasInstalled: state !== undefined };
}

/**
 * The settings the sh runner sources before talking to the daemon (it cannot read YAML).
 * Written by init and refreshed by the daemon whenever it handles a hook.
 */
export type HookSettings = {
  timeoutMs: number;
  /** The pre-commit may run for long (checks or generators): the sh client bounds silence, not the whole run. */
  longPreCommit?: boolean;
};

export function hookSettingsText(settings: HookSettings): string {
  return `HERMESD_TIMEOUT_MS=${Math.max(1, Math.round(settings.timeoutMs))}\nHERMESD_LONG_PRECOMMIT=${settings.longPreCommit === false ? 0 : 1}\n`;
}

export function writeHookSettings(gitDir: string, settings: HookSettings): void {
  const file = join(gitDir, 'hermesd', 'hook-settings');
  const text = hookSettingsText(settings);
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // not written yet
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, text, 0o644);
}
