/**
 * What is left of hermesd in a clone's git dir once `hermesd init --uninstall` has given back
 * every file it changed and this work tree's daemon has stopped: its runtime folder
 * (`<git-dir>/hermesd`: the daemon's log, the runners' settings, the guard's scratch…). It
 * goes, but for the folders that hold the user's work (a hook's backups, what a restore kept
 * or moved aside, fixes proposed and not taken), which stay while they hold anything. In the
 * main work tree that folder is also what the worktrees share (`<common-dir>/hermesd`: the
 * hook runner and client): while another worktree of the clone has hermesd, only this work
 * tree's own files go. An install record uninstall kept (a stub a config you changed still
 * runs) stays for the next uninstall.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  agentsRecordPath,
  backupsDir,
  displacedDirOf,
  confineDir,
  fixDir,
  guardDir,
  installRecordPath,
  keptBackupDir,
  repoPaths,
  restoreLockPath,
  runtimeDirOf,
  sandboxDir,
  settingsPath,
  worktreeGitDirs,
} from '../paths/index.js';

type Repo = { root: string; gitDir: string; commonDir: string };

/** The folders of the user's work in a runtime folder. */
function workFolders(gitDir: string): string[] {
  return [backupsDir(gitDir), dirname(keptBackupDir(gitDir, '-')), dirname(displacedDirOf(gitDir, '-')), dirname(fixDir(gitDir, '-'))];
}

/** Whether another worktree of this clone has hermesd's hooks or agents' hooks installed (they use the shared files). */
function otherWorktreeUses(repo: Repo): boolean {
  return worktreeGitDirs(repo.commonDir)
    .filter((d) => runtimeDirOf(d) !== runtimeDirOf(repo.gitDir))
    .some((d) => existsSync(installRecordPath(d)) || existsSync(agentsRecordPath(d)));
}

function holdsAnything(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

export type RuntimeFolderReport = {
  /** The runtime folder (absolute). */
  dir: string;
  /** Whether there was one. */
  existed: boolean;
  /** Whether it is gone. */
  removed: boolean;
  /** What stays in it, by name: the user's work… */
  keptWork: string[];
  /** …what other worktrees of the clone still use… */
  keptShared: string[];
  /** …and the install records the next uninstall needs. */
  keptRecords: string[];
};

/** The runtime folder as it is, left alone (its daemon could not be stopped). */
export function runtimeFolderKept(repo: Repo): RuntimeFolderReport {
  const dir = runtimeDirOf(repo.gitDir);
  const existed = existsSync(dir);
  return { dir, existed, removed: !existed, keptWork: [], keptShared: [], keptRecords: [] };
}

/**
 * Removes `<git-dir>/hermesd` but for the user's work (and the shared files another worktree
 * still uses). Call it with this work tree's daemon stopped: a running one writes its log there.
 */
export function removeRuntimeFolder(repo: Repo): RuntimeFolderReport {
  const dir = runtimeDirOf(repo.gitDir);
  if (!existsSync(dir)) return { dir, existed: false, removed: true, keptWork: [], keptShared: [], keptRecords: [] };
  const work = workFolders(repo.gitDir);
  const shared = runtimeDirOf(repo.gitDir) === runtimeDirOf(repo.commonDir) && otherWorktreeUses(repo);
  const paths = repoPaths(repo);
  const own = new Set([
    paths.daemonJson,
    paths.lockFile,
    paths.logFile,
    settingsPath(repo.gitDir),
    installRecordPath(repo.gitDir),
    agentsRecordPath(repo.gitDir),
    guardDir(repo.gitDir),
    sandboxDir(repo.gitDir),
    confineDir(repo.gitDir),
    restoreLockPath(repo.gitDir),
  ]);
  const records = [installRecordPath(repo.gitDir), agentsRecordPath(repo.gitDir)];
  const keptWork: string[] = [];
  const keptShared: string[] = [];
  const keptRecords: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const isWork = work.includes(p);
    if (isWork && holdsAnything(p)) keptWork.push(name);
    else if (records.includes(p)) keptRecords.push(name);
    else if (shared && !isWork && !own.has(p)) keptShared.push(name);
    else rmSync(p, { recursive: true, force: true });
  }
  const removed = keptWork.length + keptShared.length + keptRecords.length === 0;
  if (removed) rmSync(dir, { recursive: true, force: true });
  return { dir, existed: true, removed, keptWork, keptShared, keptRecords };
}
