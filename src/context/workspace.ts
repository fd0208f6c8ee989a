/**
 * The workspace snapshot of the context tier: branch, HEAD and dirty counts from one
 * `git status --porcelain=v2`. Callers cache it and recompute only when the watcher says
 * the tree or the git state changed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkspaceSnapshot } from './tiers.js';
import { parseStatus } from '../git/parse.js';
import { gitAsync } from '../git/run.js';

/** git status on a very large tree can take seconds; past this the snapshot says "unknown". */
export const GIT_STATUS_TIMEOUT_MS = 10_000;
/** A status listing past this is not a work tree a prompt can describe anyway. */
const STATUS_MAX_BYTES = 64 * 1024 * 1024;

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
    // --no-optional-locks: never take index.lock for a stat refresh, so we cannot collide with the user's git.
    const out = await gitAsync(['--no-optional-locks', 'status', '--porcelain=v2', '--branch', '-z'], {
      cwd: root,
      timeoutMs: GIT_STATUS_TIMEOUT_MS,
      maxBuffer: STATUS_MAX_BYTES,
    });
    snapshot = parseStatus(out.toString('utf8'));
  } catch {
    snapshot = { branch: '(unknown)', head: '(unknown)', staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  }
  const op = gitDir ? gitOperation(gitDir) : undefined;
  return op ? { ...snapshot, operation: op } : snapshot;
}
