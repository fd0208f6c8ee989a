/**
 * Are hermesd's hooks installed, and does git actually run them? Following the hint of a
 * tool that refuses to install (`git config --unset-all core.hooksPath`), `pre-commit install
 * -f`, `lefthook install` over our stubs, a deleted runner: each turns hermesd off without a
 * word. `status` and `doctor` say so, with the fix. Plain reads of the files git would run,
 * plus one `git rev-parse` for the hooks directory when git's configuration changed.
 */
import { readTextIfAny } from '../storage/read.js';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gitConfigKey } from '../git/config-files.js';
import { gitTry } from '../git/run.js';
import { hookOwner, readInstallState, type HookManager, type Repo } from './install.js';
import { findLefthookConfig, PRE_COMMIT_CONFIG } from './manager-config.js';
import type { HookHealthReport } from '../protocol/daemon.js';

/** The hooks directory as git last said, under the key of git's configuration then (gitConfigKey). */
let hooksDirKept: { repo: string; key: string; dir: string } | undefined;

/**
 * Where git runs hooks from (core.hooksPath, else the common dir's hooks/), asked of git again
 * only when its configuration changed: the daemon reads this for every status answer it
 * builds, and a git process held its loop meanwhile.
 */
function hooksDirOf(repo: Repo): string {
  const key = gitConfigKey(repo, process.env);
  if (key !== undefined && hooksDirKept?.repo === repo.gitDir && hooksDirKept.key === key) return hooksDirKept.dir;
  const out = gitTry(['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], { cwd: repo.root });
  const dir = out.status === 0 ? out.stdout.trim() : join(repo.commonDir, 'hooks');
  hooksDirKept = key !== undefined && out.status === 0 ? { repo: repo.gitDir, key, dir } : undefined;
  return dir;
}

/** Whether git runs hermesd's hooks here (the shape GET /v1/status carries: src/protocol/daemon.ts). */
export type HookHealth = HookHealthReport & { manager?: HookManager };

function executable(path: string): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

export function hookHealth(repo: Repo): HookHealth {
  const state = readInstallState(repo);
  if (!state) return { installed: false, active: false, problems: [] };
  const problems: string[] = [];
  const hooksDir = hooksDirOf(repo);
  const health: HookHealth = { installed: true, manager: state.manager, active: false, hooksDir, problems };
  if (!existsSync(state.runner)) problems.push(`the hook runner ${state.runner} is missing: run hermesd init`);

  const pre = join(hooksDir, 'pre-commit');
  const owner = hookOwner(hooksDir, 'pre-commit');
  const ourStub = owner === 'hermesd' || (owner !== 'none' && hookOwner(hooksDir, 'pre-commit.legacy') === 'hermesd' && owner === 'pre-commit');
  if (state.manager === 'husky' && state.huskyDir) {
    // husky 9 runs hooks from <dir>/_, husky 5–8 from <dir> (husky 4's layout has hermesd's own hooks directory: below).
    const wanted = state.huskyLayout === 'husky5-8' ? state.huskyDir : `${state.huskyDir}/_`;
    const userHook = readTextIfAny(join(repo.root, state.huskyDir, 'pre-commit')) ?? '';
    if (hooksDir !== join(repo.root, wanted))
      problems.push(
        `core.hooksPath does not point at ${wanted} (git runs hooks from ${hooksDir}), so hermesd's hooks do not run: ${state.huskyLayout === 'husky5-8' ? "run husky's own install (npx husky install)" : 'run hermesd init'} (or: git config core.hooksPath ${wanted})`,
      );
    else if (!userHook.includes('hermesd'))
      problems.push(`${state.huskyDir}/pre-commit no longer calls hermesd (its block was taken out): run hermesd init to put it back`);
    else {
      health.active = executable(pre);
      health.via = 'husky';
      if (!health.active) problems.push(`${pre} is missing or not executable: run hermesd init`);
    }
  } else if (ourStub) {
    health.active = true;
    health.via = owner === 'pre-commit' ? 'the pre-commit framework (hermesd as its legacy hook)' : `${pre}`;
  } else if (state.manager === 'pre-commit' && owner === 'pre-commit') {
    const config = readTextIfAny(join(repo.root, PRE_COMMIT_CONFIG)) ?? '';
    health.active = config.includes('/hermesd/hook');
    health.via = 'the pre-commit framework';
    if (!health.active) problems.push(`${PRE_COMMIT_CONFIG} no longer runs hermesd: run hermesd init to add its entry again`);
  } else if (state.manager === 'lefthook' && owner === 'lefthook') {
    const found = findLefthookConfig(repo.root);
    const config = found ? (readTextIfAny(join(repo.root, found.file)) ?? '') : '';
    health.active = config.includes('/hermesd/hook');
    health.via = 'lefthook';
    if (!health.active) problems.push(`${found?.file ?? 'lefthook.yml'} no longer runs hermesd: run hermesd init to add its commands again`);
  } else if (owner === 'none') {
    problems.push(`git runs no pre-commit hook (${pre} is missing), so hermesd judges no commit: run hermesd init`);
  } else {
    const who = owner === 'other' ? 'another program' : owner === 'pre-commit' ? 'the pre-commit framework' : owner;
    problems.push(`git runs ${pre}, written by ${who}, which does not call hermesd: run hermesd init to hook hermesd in again`);
  }
  if (health.active && !executable(pre)) {
    health.active = false;
    problems.push(`${pre} is not executable, so git skips it: chmod +x ${pre}`);
  }
  return health;
}

/** One line for `status`. */
export function describeHealth(h: HookHealth): string {
  if (!h.installed) return 'not installed (hermesd init installs them)';
  if (h.active)
    return `active (${h.manager === 'git' ? '.git/hooks' : h.manager}${h.via && h.manager !== 'husky' && h.manager !== 'git' ? `, through ${h.via}` : ''})`;
  return `NOT active: ${h.problems.join('; ')}`;
}
