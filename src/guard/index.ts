/** Guardrails no tool call can talk its way around: protected paths, git policy, secrets, skipped hooks. */
export { gitPolicyOf, protectMatcher, GIT_POLICY_NAMES, type GitPolicy, type GitPolicyName, type GuardConfig, type PolicyValue } from './config.js';
export { isSecretPath, secretPathMessage, redactSecrets, secretValuesIn, shannonEntropy, type Redaction, type RedactResult, type SecretPathHit } from './secrets.js';
export { redactForStorage, SECRET_CANDIDATE } from './prefilter.js';
export { snapshotProtected, restoreProtected, discardSnapshot, describeProtectedChanges, type ProtectedChange, type ProtectedSnapshot } from './protect.js';
export { judgeGit, type GitProbe, type Judgement } from './git-policy.js';
export { findRealGit } from './git.js';
export { captureRepoState, verifyRepoState, type GitViolation, type RepoState } from './verify.js';
export { prepareGuardEnv, prepareTerminalGuard, runGuarded, rulesBroken, withRepoLock, standaloneSandbox, type GuardOptions, type GuardPort, type GuardReport, type GuardRun, type GuardedResult, type GitRefusal, type SandboxSetup } from './terminal.js';
export { SecretValues, compileRedactor, envSecretValues } from './secret-values.js';
export { sandboxAvailability, type SandboxAvailability, type SandboxPlan } from './sandbox.js';
export { brokerPush, planPush } from './push-broker.js';
export { undoBadCommits } from './verify.js';
export { recordPrecommitPass, recordStagedPass, precommitPassed, precommitMarkerPath, PRECOMMIT_PASS_TTL_MS } from './precommit-marker.js';
export { postCommitAudit, type CommitAudit } from './audit.js';
