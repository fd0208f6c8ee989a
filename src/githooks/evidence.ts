/**
 * Evidence of what git did, for SessionDB: post-commit, post-merge, post-checkout and
 * post-rewrite each become a short text (commit, message, files) that `hermesd sessions
 * search` finds later. Plain functions over git; the service stores the result.
 */
import { parseRawZ, type Change } from '../git/diff-parse.js';
import { readCommitObject } from '../git/objects.js';
import { readHead, type GitDirs } from '../git/refs.js';
import { gitAsyncTry } from '../git/run.js';

/** Files listed per event; a branch switch across a big refactor needs no thousand lines. */
export const EVIDENCE_MAX_FILES = 200;

export type Evidence = { title: string; text: string };

/** A commit's message and file list; a bigger answer is not evidence anyone reads. */
const EVIDENCE_GIT_MAX_BYTES = 16 * 1024 * 1024;

/** Async, so that recording evidence never stalls the daemon's answers to the next hook; '' when git fails. */
async function run(root: string, args: string[]): Promise<string> {
  const r = await gitAsyncTry(args, { cwd: root, maxBuffer: EVIDENCE_GIT_MAX_BYTES });
  return r.status === 0 ? r.stdout.trim() : '';
}

function fileList(out: string): string {
  const lines = out.split('\n').filter(Boolean);
  const shown = lines.slice(0, EVIDENCE_MAX_FILES).map((l) => `  ${l.replace(/\t/g, ' ')}`);
  if (lines.length > EVIDENCE_MAX_FILES) shown.push(`  … and ${lines.length - EVIDENCE_MAX_FILES} more`);
  return shown.join('\n');
}

async function branch(root: string): Promise<string> {
  return (await run(root, ['symbolic-ref', '--short', '-q', 'HEAD'])) || '(detached HEAD)';
}

export type CommitInfo = { sha: string; tree: string; subject: string; body: string; files: string };

/** Changed files as `git diff-tree --name-status -M` lists them, one per line; paths as they are (not quoted). */
export function nameStatus(changes: readonly Change[]): string {
  return changes.map((c) => (c.oldPath !== undefined ? `${c.score ?? c.status}\t${c.oldPath}\t${c.path}` : `${c.status}\t${c.path}`)).join('\n');
}

/**
 * A commit's id, tree, message and changed files: the message read from the commit object
 * when it is loose (with `dirs`, `rev` a commit id), else git log; the files from git diff-tree
 * — or, given `changes` (what the judgement of its snapshot read: `StagedVerdicts.changesOf`),
 * from them, without git.
 */
export async function readCommit(root: string, rev: string, dirs?: GitDirs, changes?: readonly Change[]): Promise<CommitInfo> {
  const files = changes
    ? Promise.resolve(nameStatus(changes))
    : gitAsyncTry(['diff-tree', '--root', '--no-commit-id', '-r', '-M', '--raw', '-z', '--no-abbrev', rev], {
        cwd: root,
        maxBuffer: EVIDENCE_GIT_MAX_BYTES,
      }).then((r) => (r.status === 0 ? nameStatus(parseRawZ(r.stdout)) : ''));
  const object = dirs ? readCommitObject(dirs, rev) : undefined;
  if (object) return { sha: rev, tree: object.tree, subject: object.subject, body: object.body.trim(), files: await files };
  const log = await run(root, ['log', '-1', '--format=%H%x00%T%x00%s%x00%b', rev]);
  const [sha = '', tree = '', subject = '', body = ''] = log.split('\0');
  return { sha, tree, subject, body: body.trim(), files: await files };
}

/** Where git was when the hook ran; evidence may be written after git has moved on. */
export type Place = { head: string; branch: string };

export async function placeOf(root: string, dirs?: GitDirs): Promise<Place> {
  const read = dirs ? readHead(dirs) : undefined;
  if (read) return { head: read.commit ?? 'HEAD', branch: read.branch?.slice('refs/heads/'.length) ?? '(detached HEAD)' };
  const [head, b] = await Promise.all([run(root, ['rev-parse', '-q', '--verify', 'HEAD']), branch(root)]);
  return { head: head || 'HEAD', branch: b };
}

export async function postCommitEvidence(root: string, at: Place, commit?: CommitInfo): Promise<Evidence> {
  const c = commit ?? (await readCommit(root, at.head));
  const b = at.branch;
  return {
    title: `commit ${c.sha.slice(0, 10)} ${c.subject}`.slice(0, 120),
    text: [`git commit ${c.sha} on ${b}: ${c.subject}`, c.body, 'files:', fileList(c.files)].filter(Boolean).join('\n'),
  };
}

export async function postMergeEvidence(root: string, args: string[], at: Place): Promise<Evidence> {
  const squash = args[0] === '1';
  const b = at.branch;
  const [c, files] = await Promise.all([readCommit(root, at.head), run(root, ['diff', '--name-status', '-M', `${at.head}^1`, at.head])]);
  return {
    title: `merge into ${b}${squash ? ' (squash)' : ''}: ${c.subject}`.slice(0, 120),
    text: [`git merge${squash ? ' --squash' : ''} into ${b}, now at ${c.sha}: ${c.subject}`, 'files changed by the merge:', fileList(files)].join('\n'),
  };
}

export async function postCheckoutEvidence(root: string, args: string[], at: Place): Promise<Evidence> {
  const [prev = '', next = '', flag = '1'] = args;
  const b = at.branch;
  if (flag === '1') {
    const files = prev && next && prev !== next ? await run(root, ['diff', '--name-status', prev, next]) : '';
    return {
      title: `checkout ${b} (${next.slice(0, 10)})`,
      text: [`git checkout of ${b}: HEAD moved from ${prev} to ${next}`, files ? `files that differ:\n${fileList(files)}` : 'no file differs'].join('\n'),
    };
  }
  return { title: `checkout of files at ${next.slice(0, 10)}`, text: `git checkout of files from ${next} on ${b} (HEAD unchanged)` };
}

export async function postRewriteEvidence(root: string, args: string[], stdin: string[], at: Place): Promise<Evidence> {
  const how = args[0] ?? 'rewrite';
  const pairs = stdin.map((l) => l.trim().split(/\s+/)).filter((p) => p.length >= 2);
  const lines = await Promise.all(
    pairs
      .slice(0, EVIDENCE_MAX_FILES)
      .map(async ([from, to]) => `  ${from!.slice(0, 10)} -> ${to!.slice(0, 10)} ${await run(root, ['log', '-1', '--format=%s', to!])}`),
  );
  const b = at.branch;
  return {
    title: `${how}: ${pairs.length} commit${pairs.length === 1 ? '' : 's'} rewritten on ${b}`,
    text: [`git ${how} rewrote ${pairs.length} commit${pairs.length === 1 ? '' : 's'} on ${b}:`, ...lines].join('\n'),
  };
}
