/**
 * The hook's side of "never lose work": when the daemon dies while it works on a commit
 * (a pre-commit check had checked out the staged snapshot), the hook process is still alive
 * and puts the user's work back itself before git returns — the backup the daemon made for
 * this attempt, restored as `hermesd hook restore` does (the current state saved first,
 * anything newer than the backup moved aside, never overwritten). Bounded: it waits at most
 * SELF_RESTORE_WAIT_MS for the backup's owner to be gone (a daemon shutting down restores
 * by itself); a backup whose owner still runs (a hung, stopped daemon) is left for the
 * next-command notice. Used by the Node fallback of the hooks (src/cli/commands/hook.ts),
 * which the sh hook calls when its connection to the daemon broke mid-hook.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive } from '../storage/lock.js';
import { backupsDir } from '../paths/index.js';
import { BackupGone, readWorkState, recoverBackup, type RestoreResult, type WorkState } from './backup.js';

/** How long the hook waits for a dying daemon to be gone before it restores (a SIGTERM shutdown restores by itself within its grace). */
export const SELF_RESTORE_WAIT_MS = 4_000;
/** Poll interval while waiting for the owner to go. */
const POLL_MS = 25;

export type SelfRestore = {
  /** Backups put back by this hook. */
  restored: Array<RestoreResult & { safetyId: string }>;
  /** Backups of this attempt still held by a live process when the wait ended. */
  waiting: WorkState[];
};

/** The backups a hook of `attempt` may own: made for that attempt, or (no attempt id) by that daemon pid. */
function backupsOf(gitDir: string, match: { attempt?: string; daemonPid?: number }): WorkState[] {
  let names: string[];
  try {
    names = readdirSync(backupsDir(gitDir));
  } catch {
    return [];
  }
  const out: WorkState[] = [];
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const state = readWorkState(join(backupsDir(gitDir), name));
    if (!state) continue;
    if (match.attempt ? state.attempt === match.attempt : match.daemonPid !== undefined && state.pid === match.daemonPid) out.push(state);
  }
  return out;
}

/**
 * Restores the backups of this hook's attempt whose owner (the daemon) is gone, waiting a
 * bounded time for an owner that is still exiting. Never touches a backup a live process holds.
 */
export async function restoreAfterDaemonLoss(
  gitDir: string,
  match: { attempt?: string; daemonPid?: number },
  waitMs = SELF_RESTORE_WAIT_MS,
): Promise<SelfRestore> {
  const restored: SelfRestore['restored'] = [];
  const deadline = Date.now() + waitMs;
  for (;;) {
    const mine = backupsOf(gitDir, match);
    for (const state of mine.filter((s) => !pidAlive(s.pid))) {
      try {
        restored.push(recoverBackup(gitDir, state.id));
      } catch (err) {
        if (!(err instanceof BackupGone)) throw err;
        // another restorer (a new daemon, `hermesd hook restore`) got there first
      }
    }
    const waiting = backupsOf(gitDir, match);
    if (waiting.length === 0 || Date.now() >= deadline) return { restored, waiting };
    await sleep(POLL_MS);
  }
}

/** What the hook says after restoring; empty when there was nothing to restore. */
export function selfRestoreMessage(r: SelfRestore): string {
  const lines: string[] = [];
  for (const x of r.restored) {
    lines.push(
      `hermesd: your work tree and index are back as they were before this commit (the hook restored backup ${x.id} itself; undo: hermesd hook restore ${x.safetyId}).`,
    );
    if (x.displaced.length) lines.push(`hermesd: files changed while the hook ran were moved to ${x.displacedDir}: ${x.displaced.join(', ')}`);
  }
  if (r.waiting.length) {
    lines.push(
      `hermesd: backup ${r.waiting.map((s) => s.id).join(', ')} of your work is still held by process ${[...new Set(r.waiting.map((s) => s.pid))].join(', ')} (a daemon that stopped answering); ` +
        'it puts your work back when it resumes or exits. If it does not: hermesd hook restore',
    );
  }
  return lines.join('\n');
}
