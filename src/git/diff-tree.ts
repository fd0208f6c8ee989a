/**
 * Many commit diffs from git's `diff-tree --stdin`, each input line a commit and the parent it
 * is compared with. The range check reads them (rules/engine.ts, checkCommitDiffs); it can start
 * them here before the rules are known, so git diffs while the engine and the config load. The
 * output is split by diff.ts's diffTreeSplitter.
 *
 * Merges go to two more processes. Git's combined diff (`--cc`) shows only what differs from
 * every parent, what the merge itself brought: its added lines are the merge's own. It needs a
 * line of context: at `-U0`, git's combined hunks leave out the lines between changes without
 * counting them, and their line numbers come out wrong. But a merge that takes a file from one
 * parent changes it on the branch of the other, and the combined diff leaves that file out; so
 * each merge is also listed (no patch) against each of its parents, for the paths it changes.
 */
import { gitStart, PLAIN_DIFF, plainGitCall, type GitOptions, type StartedGit } from './run.js';

/**
 * One diff: a commit against `parent`; with none named, a root commit against the empty tree,
 * or, with `merge`, a merge against all its `parents` at once (combined) and against each.
 */
export type CommitDiff = { commit: string; parent?: string; merge?: boolean; parents?: readonly string[] };

/**
 * diff-tree at work on `diffs`; `patch`: the patch comes with the raw listings. Each part: one git
 * process and the indexes of the diffs it prints, in order; `perParent`: the part that lists each
 * merge against each of its parents (an index per parent).
 */
export type StartedDiffs = {
  diffs: readonly CommitDiff[];
  patch: boolean;
  parts: Array<{ indexes: number[]; git: StartedGit; perParent?: boolean }>;
  stop(): void;
};

export function startDiffTree(root: string, diffs: readonly CommitDiff[], opts: GitOptions & { patch: boolean }): StartedDiffs {
  const parts: StartedDiffs['parts'] = [];
  const start = (args: string[], lines: string[]) =>
    gitStart(['diff-tree', '--stdin', '--always', '-r', '--raw', '-z', '--no-abbrev', ...PLAIN_DIFF, ...args], {
      ...plainGitCall(root, opts),
      input: lines.join('\n') + '\n',
      // Read as a stream and judged as it comes: the output's size is no memory bound here.
      maxBuffer: Number.MAX_SAFE_INTEGER,
    });
  for (const merges of [false, true]) {
    const indexes = diffs.flatMap((d, i) => (Boolean(d.merge) === merges ? [i] : []));
    if (indexes.length === 0) continue;
    const args = ['--root', ...(merges ? ['--cc'] : []), ...(opts.patch ? ['-p', merges ? '-U1' : '-U0'] : [])];
    parts.push({
      indexes,
      git: start(
        args,
        indexes.map((i) => (diffs[i]!.parent ? `${diffs[i]!.commit} ${diffs[i]!.parent}` : diffs[i]!.commit)),
      ),
    });
  }
  const perParent = diffs.flatMap((d, i) => (d.merge ? (d.parents ?? []).map((p) => ({ i, line: `${d.commit} ${p}` })) : []));
  // (Paths only: a rename is its two paths either way, so git is spared finding renames.)
  if (perParent.length > 0)
    parts.push({
      indexes: perParent.map((p) => p.i),
      git: start(
        ['--no-renames'],
        perParent.map((p) => p.line),
      ),
      perParent: true,
    });
  return { diffs, patch: opts.patch, parts, stop: () => parts.forEach((p) => p.git.stop()) };
}
