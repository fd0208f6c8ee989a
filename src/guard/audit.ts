/**
 * post-commit's audit: a commit whose tree the pre-commit hook never judged (e.g.
 * `git commit --no-verify`, HERMESD_SKIP on the pre-commit only, a hook that was not
 * installed yet) is re-checked against the rules, and a violation is said loudly with the
 * command that undoes the commit. The caller records the result in SessionDB (source 'hook').
 */
import type { HermesConfig } from '../config/schema.js';
import { checkCommit, type Violation } from '../rules/engine.js';
import { commitsBetweenAsync, commitViolations, describeBadCommits, type NewCommit } from './commits.js';
import { cleanGitEnv } from '../git/env.js';
import { readCommitObject } from '../git/objects.js';
import { readHead, type GitDirs } from '../git/refs.js';
import { gitOutAsync } from '../git/run.js';
import { precommitPassed } from '../rules/precommit-marker.js';

export type CommitAudit = {
  commit: string;
  tree: string;
  /** The pre-commit hook passed this tree recently. */
  hookRan: boolean;
  /** Rule violations of the commit; only computed when the hook did not run. */
  violations: Violation[];
  /** The command that takes the commit back, keeping its changes staged. */
  undo: string;
  /** What to print (empty when the hook ran); loud when there are violations. */
  notice: string;
  /**
   * earlier new commits (reachable from HEAD, from none of `since`) that the hook did
   * not judge and that break rules — a commit-tree, a merge — found whatever the reflog says.
   */
  earlier?: Array<{ commit: string; violations: Violation[] }>;
};

/**
/**
 * `hookRan`: the caller knows whether this commit's own pre-commit ran (the hooks service asks
 * by attempt); without it, a tree the pre-commit passed recently counts. `unknown`: the daemon
 * restarted during the commit, so it cannot tell; the notice says so instead of "skipped".
 * `since`: the ref tips the daemon saw last; every commit HEAD reaches that none of them does
 * is judged, not only HEAD. A merge is judged on what it changed against every parent.
 * `dirs`: HEAD and its commit are read from git's files where they can be (no git process), and
 * the git dir is known without asking git.
 */
export async function postCommitAudit(
  root: string,
  config: HermesConfig,
  opts: { gitDir?: string; dirs?: GitDirs; gitBin?: string; now?: number; hookRan?: boolean; unknown?: boolean; since?: string[] } = {},
): Promise<CommitAudit> {
  const gitBin = opts.gitBin ?? 'git';
  const env = cleanGitEnv();
  // Asked at once and without holding the daemon's event loop: a hook or a request that comes
  // meanwhile is answered meanwhile.
  const q = (args: string[]) => gitOutAsync(gitBin, args, root, env);
  const knownGitDir = opts.gitDir ?? opts.dirs?.gitDir;
  const read = headCommit(opts.dirs);
  const [head, headTree, absGitDir, parent] = await Promise.all([
    read ? read.commit : q(['rev-parse', '--verify', '-q', 'HEAD']),
    read ? read.tree : q(['rev-parse', '--verify', '-q', 'HEAD^{tree}']),
    knownGitDir ?? q(['rev-parse', '--absolute-git-dir']),
    read ? read.parents[0] : q(['rev-parse', '--verify', '-q', 'HEAD^1']),
  ]);
  const commit = head ?? '';
  const tree = headTree ?? '';
  const gitDir = absGitDir ?? '';
  const hasParent = parent !== undefined;
  const undo = hasParent ? 'git reset --soft HEAD~1' : 'git update-ref -d HEAD';
  if (!commit) return { commit, tree, hookRan: false, violations: [], undo, notice: '' };
  const earlier: Array<{ commit: string; violations: Violation[] }> = [];
  if (opts.since && opts.since.length > 0) {
    for (const c of await commitsBetweenAsync(root, [commit], opts.since, gitBin, read)) {
      if (c.commit === commit || precommitPassed(gitDir, c.tree, { now: opts.now })) continue;
      const violations = await commitViolations(root, config, c);
      if (violations.length > 0) earlier.push({ commit: c.commit, violations });
    }
  }
  const more = earlier.length ? `\n${earlierNotice(earlier)}` : '';
  const hookRan = opts.hookRan ?? precommitPassed(gitDir, tree, { now: opts.now });
  if (hookRan) return { commit, tree, hookRan, violations: [], undo, notice: more.trim(), ...(earlier.length ? { earlier } : {}) };
  const parents = read?.parents ?? ((await q(['rev-list', '--parents', '-n', '1', commit])) ?? '').split(' ').slice(1);
  const violations = await commitViolations(root, config, { commit, parents });
  return {
    commit,
    tree,
    hookRan,
    violations,
    undo,
    notice: auditNotice(commit, violations, undo, opts.unknown ? 'unknown' : 'skipped') + more,
    ...(earlier.length ? { earlier } : {}),
  };
}

/** HEAD's commit, tree and parents from git's files; undefined when git must be asked (or there is no commit). */
function headCommit(dirs: GitDirs | undefined): NewCommit | undefined {
  const commit = dirs && readHead(dirs)?.commit;
  const object = dirs && commit ? readCommitObject(dirs, commit) : undefined;
  return object && commit ? { commit, tree: object.tree, parents: object.parents } : undefined;
}

function earlierNotice(earlier: Array<{ commit: string; violations: Violation[] }>): string {
  return `hermesd: earlier new commits no hook judged BREAK the repository's rules (made without \`git commit\`, e.g. commit-tree or a merge):\n${describeBadCommits(earlier)}`;
}

/**
 * A commit whose pre-commit ran, but whose tree differs from every tree it judged: a hook that
 * ran after hermesd's (a formatter, lint-staged, a lefthook command with stage_fixed) changed
 * the staged files. Only what changed since the last judged tree is checked.
 */
export async function auditChangedAfterJudgement(
  root: string,
  config: HermesConfig,
  opts: { commit: string; judgedTree: string; gitBin?: string },
): Promise<CommitAudit> {
  const env = cleanGitEnv();
  const gitBin = opts.gitBin ?? 'git';
  const [commitTree, parent] = await Promise.all([
    gitOutAsync(gitBin, ['rev-parse', '--verify', '-q', `${opts.commit}^{tree}`], root, env),
    gitOutAsync(gitBin, ['rev-parse', '--verify', '-q', `${opts.commit}^1`], root, env),
  ]);
  const tree = commitTree ?? '';
  const hasParent = parent !== undefined;
  const undo = hasParent ? 'git reset --soft HEAD~1' : 'git update-ref -d HEAD';
  const { violations } = await checkCommit(root, config, opts.commit, { base: opts.judgedTree });
  return { commit: opts.commit, tree, hookRan: true, violations, undo, notice: violations.length ? auditNotice(opts.commit, violations, undo, 'changed') : '' };
}

function auditNotice(commit: string, violations: Violation[], undo: string, why: 'skipped' | 'unknown' | 'changed'): string {
  const short = commit.slice(0, 10);
  if (violations.length === 0) {
    return why === 'unknown'
      ? `hermesd: the daemon restarted while commit ${short} was made, so it cannot tell whether the pre-commit hook judged it; re-checked against the rules: no violations.`
      : `hermesd: commit ${short} skipped the pre-commit hook; re-checked against the rules: no violations.`;
  }
  const bar = '!'.repeat(72);
  const lines = violations.slice(0, 20).map((v) => `  ${v.file}${v.line ? `:${v.line}` : ''}  [${v.rule}] ${v.message}`);
  if (violations.length > 20) lines.push(`  … and ${violations.length - 20} more`);
  const head = {
    skipped: `hermesd: commit ${short} SKIPPED the pre-commit hook (e.g. --no-verify) and BREAKS the repository's rules:`,
    unknown: `hermesd: commit ${short} BREAKS the repository's rules (the daemon restarted while it was made, so it cannot tell whether the pre-commit hook judged it):`,
    changed: `hermesd: commit ${short} BREAKS the repository's rules in changes made AFTER hermesd's pre-commit judged it (by a hook that ran later in the chain, e.g. a formatter that re-staged files):`,
  }[why];
  const search = why === 'changed' ? 'changed after the pre-commit' : 'skipped the pre-commit hook';
  return [
    bar,
    head,
    ...lines,
    `To undo the commit and keep its changes staged:  ${undo}`,
    `This has been recorded in the session log (hermesd sessions search "${search}").`,
    bar,
  ].join('\n');
}
