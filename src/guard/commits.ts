/**
 * Commits judged by content. Whatever made a commit (`git commit --no-verify`, `commit-tree`
 * and `update-ref`, a merge, a cherry-pick, a rebase) and whatever the reflog or a marker
 * file says, every new commit a ref reaches is checked against the rules: its changes
 * against its parent, and for a merge the changes against every parent (what the merge
 * itself brought, not what its branches did — those are new commits of their own and are
 * judged as such). A commit whose tree the pre-commit hook passed is taken as judged.
 */
import type { HermesConfig } from '../config/schema.js';
import { checkCommit, type Violation } from '../rules/engine.js';
import { cleanGitEnv } from '../git/env.js';
import { runGit, runGitAsync } from '../git/run.js';

/** New commits judged per look: a bound on one command's cost (a huge import is judged by its first commits). */
export const JUDGE_MAX_COMMITS = 200;

export type CommitVerdict = { commit: string; violations: Violation[] };

export type JudgeOptions = {
  gitBin: string;
  /** The pre-commit hook passed this tree (an honest `git commit`): no need to judge it again. */
  judged?: (tree: string) => boolean;
  /** Rules judged even when the pre-commit hook passed the tree (the guard's own files: the hook does not know them). */
  always?: HermesConfig;
};

/**
 * Commits reachable from `tips` but from none of `base` (newest first, at most
 * JUDGE_MAX_COMMITS), each with its tree and parents.
 */
export function commitsBetween(root: string, tips: string[], base: string[], gitBin: string): NewCommit[] {
  if (tips.length === 0) return [];
  return newCommitsOf(runGit(gitBin, revListArgs(tips, base), { cwd: root, env: cleanGitEnv() }));
}

/**
 * commitsBetween without holding the daemon's event loop (the post-commit audit). `known`: the
 * one tip's commit, read already; when each of its parents is in `base` (a commit on top of
 * the last look, the usual case) it is the only new one, and git is not asked.
 */
export async function commitsBetweenAsync(root: string, tips: string[], base: string[], gitBin: string, known?: NewCommit): Promise<NewCommit[]> {
  if (tips.length === 0) return [];
  if (known && tips.length === 1 && tips[0] === known.commit && base.length > 0) {
    const seen = new Set(base);
    if (seen.has(known.commit)) return [];
    if (known.parents.every((p) => seen.has(p))) return [known];
  }
  return newCommitsOf(await runGitAsync(gitBin, revListArgs(tips, base), { cwd: root, env: cleanGitEnv() }));
}

export type NewCommit = { commit: string; tree: string; parents: string[] };

function revListArgs(tips: string[], base: string[]): string[] {
  const args = ['rev-list', `--max-count=${JUDGE_MAX_COMMITS}`, '--format=%H %T %P', ...new Set(tips)];
  const notBase = [...new Set(base)];
  if (notBase.length > 0) args.push('--not', ...notBase);
  return args;
}

function newCommitsOf(r: { code: number; stdout: string }): NewCommit[] {
  if (r.code !== 0) return [];
  const out: NewCommit[] = [];
  for (const line of r.stdout.split('\n')) {
    if (!line || line.startsWith('commit ')) continue;
    const [commit, tree, ...parents] = line.trim().split(' ');
    if (commit && tree) out.push({ commit, tree, parents: parents.filter(Boolean) });
  }
  return out;
}

/** The rule violations of one commit: against its parent, or for a merge, those present against every parent. */
export async function commitViolations(root: string, config: HermesConfig, c: { commit: string; parents: string[] }): Promise<Violation[]> {
  if (c.parents.length <= 1) return (await checkCommit(root, config, c.commit)).violations;
  const key = (v: Violation) => `${v.rule}\0${v.file}\0${v.line}`;
  let common: Map<string, Violation> | undefined;
  for (const parent of c.parents) {
    const found = new Map((await checkCommit(root, config, c.commit, { base: parent })).violations.map((v) => [key(v), v] as const));
    common = common ? new Map([...common].filter(([k]) => found.has(k))) : found;
    if (common.size === 0) break;
  }
  return [...(common?.values() ?? [])];
}

/** Judges every commit of `commits` that the pre-commit hook did not pass; returns the ones that break a rule. */
export async function judgeCommits(
  root: string,
  config: HermesConfig,
  commits: Array<{ commit: string; tree: string; parents: string[] }>,
  opts: JudgeOptions,
): Promise<CommitVerdict[]> {
  const bad: CommitVerdict[] = [];
  if (config.rules.length === 0 && !opts.always?.rules.length) return bad;
  for (const c of commits) {
    const violations = opts.always?.rules.length ? await commitViolations(root, opts.always, c) : [];
    if (config.rules.length > 0 && !opts.judged?.(c.tree)) violations.push(...(await commitViolations(root, config, c)));
    if (violations.length > 0) bad.push({ commit: c.commit, violations });
  }
  return bad;
}

/** One line per bad commit for the model (the first violations of each). */
export function describeBadCommits(bad: CommitVerdict[]): string {
  return bad
    .map((b) => {
      const vs = b.violations.slice(0, 3).map((v) => `${v.file}${v.line ? `:${v.line}` : ''} [${v.rule}] ${v.message}`);
      return `commit ${b.commit.slice(0, 10)}: ${vs.join('; ')}${b.violations.length > 3 ? ` (+${b.violations.length - 3} more)` : ''}`;
    })
    .join('\n');
}
