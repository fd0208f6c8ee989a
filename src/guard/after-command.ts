/**
 * What a command did, judged when it ends: one judgement for hermesd's own `terminal` and for
 * every other agent's shell call. The command is judged by its effects, never by its text: the
 * names it planted at the top of a git directory go first (before any git runs again), then
 * every protected file it created, changed or deleted is put back (a generator's files kept
 * where the generator, run in the same sandbox, reproduces them), then every commit a ref
 * reaches that no ref reached before is judged by content and, where it breaks a rule, the refs
 * that reach it are put back — whatever made the commit (`--no-verify`, `HERMESD_SKIP`,
 * plumbing, a killed daemon). Where the command could reach the hooks, the config and
 * hermesd's runners (no sandbox around it), their state is verified and put back too.
 */
import type { HermesConfig } from '../config/schema.js';
import type { CommandWrap } from '../process/run.js';
import type { GitPolicy, GuardConfig } from './guard-config.js';
import { discardSnapshot, restoreProtected, restoreProtectedIndex, type ProtectedChange, type ProtectedSnapshot } from './protect.js';
import { AGENT_CONFIG_PATHS, HOOK_MANAGER_FILES } from './sandbox-plan.js';
import { captureRefState, undoBadCommits, undoGitReadNames, verifyRepoStateWith, type GitReadNames, type GitViolation, type RepoState } from './verify.js';

/**
 * The implicit rule of confined commands: a commit they make may not change what the guard
 * reads (the repository config, hook managers' files, other agents' hooks). Applies to commits
 * made in a sandbox, not to the user's own.
 */
export const GUARD_FILES_RULE = {
  id: 'hermesd-guard-files',
  message: "hermesd's guard reads these files; only the user changes them (a loosening takes effect after `hermesd config approve`).",
  protect: ['.hermes/**', ...[...HOOK_MANAGER_FILES, ...AGENT_CONFIG_PATHS].flatMap((p) => [p, `${p}/**`])],
};

/** What a command is judged against: taken before it starts. */
export type BeforeCommand = {
  snapshot: ProtectedSnapshot;
  /** Refs, HEAD and the index (and, for `full`, the hooks, the config's hooks path and hermesd's runners). */
  state: RepoState;
  /** The names at the top of every git directory, and the files git's configuration includes that are not there. */
  names: GitReadNames;
};

export type CommandEffects = { protected: ProtectedChange[]; git: GitViolation[] };

export type JudgeEffectsOptions = {
  config: GuardConfig;
  /** The git policy to verify the whole state with (a command that could reach the hooks and the config); omitted: refs and commits only. */
  policy?: GitPolicy;
  /** How a protected rule's generator runs (the command's own sandbox). */
  restore: { generatorEnv?: NodeJS.ProcessEnv; runGenerator?: (command: string) => number | null; wrap?: CommandWrap };
  /** Whether the pre-commit hook passed `tree` during the command: such a commit was judged already. */
  judged: (tree: string) => boolean;
};

/** Whether a ref or HEAD moved since `before` (from git's files: no git process where they can be read). */
function refsMoved(before: RepoState): boolean {
  const now = captureRefState(before);
  if (now.headOid !== before.headOid || now.refs.size !== before.refs.size) return true;
  for (const [ref, oid] of before.refs) if (now.refs.get(ref) !== oid) return true;
  return false;
}

/** Judges what the command did and undoes what the rules refuse; call once, after it ended (a timeout or a kill included). */
export async function judgeCommandEffects(before: BeforeCommand, o: JudgeEffectsOptions): Promise<CommandEffects> {
  // First, before any git runs again: a `commondir` the command left would send git elsewhere, an included config file would set what git runs.
  const planted = undoGitReadNames(before.names);
  const changes = await restoreProtected(before.snapshot, o.restore);
  const git: GitViolation[] = [...planted];
  let moved: boolean;
  if (o.policy) {
    const verified = verifyRepoStateWith(before.state, o.policy);
    git.push(...verified.violations);
    moved = verified.refsMoved;
  } else {
    moved = refsMoved(before.state);
  }
  if (moved) {
    const rules = { ...(o.config as HermesConfig), rules: (o.config.rules ?? []) as HermesConfig['rules'] };
    git.push(
      ...(await undoBadCommits(before.state, rules, { judged: o.judged, always: { ...rules, rules: [GUARD_FILES_RULE as HermesConfig['rules'][number]] } })),
    );
  }
  changes.push(...restoreProtectedIndex(before.snapshot, before.state.gitDir, before.state.index));
  discardSnapshot(before.snapshot);
  return { protected: changes, git };
}
