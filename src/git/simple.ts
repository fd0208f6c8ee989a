/**
 * simple-git, for the callers where its API fits and a few milliseconds do not matter: the
 * skills repository hermesd owns (commit, log, show, revert: src/skills/git.ts) and `doctor`.
 * The hot paths — the hooks, the guard, the watcher, the rule engine — keep the raw runner in
 * run.ts: a synchronous spawn with no task queue, no promise chain and no argument parsing
 * between git and an answer git is waiting for (docs/architecture.md, "Two ways to run git").
 * And simple-git waits 50 ms after a command that printed nothing before it resolves (its
 * completion plugin, to catch output that arrives after the exit), so a caller asks for output
 * where git has some to give (`add -v`). Only the modules the dependency rule names import this one.
 */
import { simpleGit, type SimpleGit } from 'simple-git';
import { isolatedGitEnv } from './env.js';

export type { SimpleGit } from 'simple-git';

/**
 * A simple-git instance in `dir` with the environment of a repository hermesd owns
 * (isolatedGitEnv: only what git needs, no system config, no prompts). simple-git drops every
 * GIT_* variable it is not told to keep; these two are hermesd's own.
 */
export function ownedRepoGit(dir: string): SimpleGit {
  const env = isolatedGitEnv();
  return simpleGit({ baseDir: dir, maxConcurrentProcesses: 1, allowEnvironment: Object.keys(env).filter((k) => k.startsWith('GIT_')) }).env(env);
}

/**
 * A simple-git instance that sees what the user's git sees (its version, a config value): the
 * caller's environment, GIT_* included (GIT_CONFIG_GLOBAL and friends change the answer).
 */
export function userGit(dir: string): SimpleGit {
  return simpleGit({ baseDir: dir, allowEnvironment: Object.keys(process.env).filter((k) => k.startsWith('GIT_')) });
}
