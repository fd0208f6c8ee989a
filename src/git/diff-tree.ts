/**
 * Many commit diffs from one git process: `git diff-tree --stdin`, each input line a commit and
 * the parent it is compared with (none: a root commit, against the empty tree). The range check
 * reads it (rules/engine.ts, checkCommitDiffs); it can start it here before the rules are
 * known, so git diffs while the engine and the config load. The output is split by
 * diff.ts's diffTreeSplitter.
 */
import { gitStart, PLAIN_DIFF, plainGitCall, type GitOptions, type StartedGit } from './run.js';

/** One diff: a commit against one of its parents, or a root commit (no parent) against the empty tree. */
export type CommitDiff = { commit: string; parent?: string };

/** diff-tree at work on `diffs`; `patch`: the patch (`-p -U0`) comes with the raw listings. */
export type StartedDiffs = { diffs: readonly CommitDiff[]; patch: boolean; git: StartedGit };

export function startDiffTree(root: string, diffs: readonly CommitDiff[], opts: GitOptions & { patch: boolean }): StartedDiffs {
  const args = ['diff-tree', '--stdin', '--always', '--root', '-r', '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF, ...(opts.patch ? ['-p', '-U0'] : [])];
  const input = diffs.map((d) => (d.parent ? `${d.commit} ${d.parent}` : d.commit)).join('\n') + '\n';
  // Read as a stream and judged as it comes: the output's size is no memory bound here.
  return { diffs, patch: opts.patch, git: gitStart(args, { ...plainGitCall(root, opts), input, maxBuffer: Number.MAX_SAFE_INTEGER }) };
}
