/** The rule engine: protect / forbid / generator rules judged on the staged snapshot or the work tree. */
export { checkCommit, checkStaged, checkWorktree, compileRules, normalizeRelPath, protectedBy, MAX_ADDED_BYTES_PER_FILE, MAX_VIOLATIONS_PER_FILE_RULE } from './engine.js';
export type { CheckOptions, CheckResult, Violation } from './engine.js';
export { verifyGenerator, GENERATOR_TIMEOUT_MS } from './generator.js';
export type { GeneratorMismatch, GeneratorOptions, GeneratorResult } from './generator.js';
export { formatViolations, BYPASS_HINT } from './format.js';
