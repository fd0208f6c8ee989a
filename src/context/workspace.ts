/**
 * The workspace snapshot of the context tier: branch, HEAD and dirty counts from one
 * `git status --porcelain=v2`. Callers cache it and recompute only when the watcher says
 * the tree or the git state changed.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkspaceSnapshot } from './tiers.js';

/** git status on a very large tree can take seconds; past this the snapshot says "unknown". */
export const GIT_STATUS_TIMEOUT_MS = 10_000;

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // --no-optional-locks: never take index.lock for a stat refresh, so we cannot collide with the user's git.
    execFile('git', ['--no-optional-locks', ...args], { cwd, encoding: 'utf8', timeout: GIT_STATUS_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

/** Parses `git status --porcelain=v2 --branch -z`. */
export function parseStatus(out: string): Omit<WorkspaceSnapshot, 'operation'> {
  const ws = { branch: '(unknown)', head: '(none)', staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  const records = out.split('\0');
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r.startsWith('# branch.oid ')) {
      const oid = r.slice(13);
      ws.head = oid === '(initial)' ? '(no commits yet)' : oid.slice(0, 7);
    } else if (r.startsWith('# branch.head ')) {
      ws.branch = r.slice(14);
    } else if (r.startsWith('1 ') || r.startsWith('2 ')) {
      const xy = r.slice(2, 4);
      if (xy[0] !== '.') ws.staged++;
      if (xy[1] !== '.') ws.unstaged++;
      // A rename record carries its original path as the next NUL-separated field.
      if (r.startsWith('2 ')) i++;
    } else if (r.startsWith('u ')) {
      ws.conflicted++;
    } else if (r.startsWith('? ')) {
      ws.untracked++;
    }
  }
  return ws;
}

/** The git operation in progress in `gitDir`, if any: while one runs, files and HEAD are in flux. */
export function gitOperation(gitDir: string): string | undefined {
  if (existsSync(join(gitDir, 'rebase-merge')) || existsSync(join(gitDir, 'rebase-apply'))) return 'rebase';
  if (existsSync(join(gitDir, 'MERGE_HEAD'))) return 'merge';
  if (existsSync(join(gitDir, 'CHERRY_PICK_HEAD'))) return 'cherry-pick';
  if (existsSync(join(gitDir, 'REVERT_HEAD'))) return 'revert';
  return undefined;
}

export async function readWorkspace(root: string, gitDir?: string): Promise<WorkspaceSnapshot> {
  let snapshot: WorkspaceSnapshot;
  try {
    snapshot = parseStatus(await git(root, ['status', '--porcelain=v2', '--branch', '-z']));
  } catch {
    snapshot = { branch: '(unknown)', head: '(unknown)', staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  }
  const op = gitDir ? gitOperation(gitDir) : undefined;
  return op ? { ...snapshot, operation: op } : snapshot;
}
