/**
 * Many commit diffs from git's `diff-tree --stdin`, each input line a commit and the parent it
 * is compared with. The range check reads them (rules/engine.ts, checkCommitDiffs); it can start
 * them here before the rules are known, so git diffs while the engine and the config load. The
 * output is split by diff.ts's diffTreeSplitter.
 *
 * Merges go to a second process: git's combined diff (`--cc`), which shows only what differs
 * from every parent, what the merge itself brought. It needs a line of context: at `-U0`, git's
 * combined hunks leave out the lines between changes without counting them, and their line
 * numbers come out wrong.
 */
import { gitStart, PLAIN_DIFF, plainGitCall, type GitOptions, type StartedGit } from './run.js';

/**
 * One diff: a commit against `parent`; with none named, a root commit against the empty tree,
 * or with `merge`, a merge against all its parents at once (combined).
 */
export type CommitDiff = { commit: string; parent?: string; merge?: boolean };

/** diff-tree at work on `diffs`; `patch`: the patch comes with the raw listings. Each part: one git process and the indexes of the diffs it prints, in order. */
export type StartedDiffs = { diffs: readonly CommitDiff[]; patch: boolean; parts: Array<{ indexes: number[]; git: StartedGit }>; stop(): void };

export function startDiffTree(root: string, diffs: readonly CommitDiff[], opts: GitOptions & { patch: boolean }): StartedDiffs {
  const parts: StartedDiffs['parts'] = [];
  for (const merges of [false, true]) {
    const indexes = diffs.flatMap((d, i) => (Boolean(d.merge) === merges ? [i] : []));
    if (indexes.length === 0) continue;
    const args = ['diff-tree', '--stdin', '--always', '--root', '-r', '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF, ...(merges ? ['--cc'] : []), ...(opts.patch ? ['-p', merges ? '-U1' : '-U0'] : [])];
    const input = indexes.map((i) => (diffs[i]!.parent ? `${diffs[i]!.commit} ${diffs[i]!.parent}` : diffs[i]!.commit)).join('\n') + '\n';
    // Read as a stream and judged as it comes: the output's size is no memory bound here.
    parts.push({ indexes, git: gitStart(args, { ...plainGitCall(root, opts), input, maxBuffer: Number.MAX_SAFE_INTEGER }) });
  }
  return { diffs, patch: opts.patch, parts, stop: () => parts.forEach((p) => p.git.stop()) };
}
