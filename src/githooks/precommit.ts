/**
 * The pre-commit pipeline: rules on the staged snapshot, then the configured checks on the
 * staged snapshot (unstaged work saved and put back around them), then fix requests for the
 * agent when a check with `fix: true` fails. Plain code over injected dependencies; the
 * daemon glue (service.ts) provides the rule engine, the agent and the session log.
 */
import { copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Check, HermesConfig } from '../config/schema.js';
import type { CheckResult } from '../rules/engine.js';
import { fixDir } from '../paths/index.js';
import { BYPASS_HINT, formatViolations } from '../rules/format.js';
import {
  changedSinceSave,
  checkoutIndex,
  finishWorkState,
  gitDirOfBackup,
  restoreWorkState,
  saveWorkState,
  savedIndexFile,
  userHadChanges,
  type WorkState,
} from './backup.js';
import { splitZ } from '../git/parse.js';
import { plainShell, runCommand, type CommandWrap } from '../process/run.js';
import { gitSync, gitSyncBuffer, gitTry } from '../git/run.js';

/** A check that runs longer than this is stopped and counts as failed (10 min: a full test suite). */
export const CHECK_TIMEOUT_MS = 10 * 60 * 1000;
/** Output kept per check run for the message and the fix request (the tail matters most). */
export const CHECK_OUTPUT_MAX_CHARS = 20_000;

export type CheckRun = { id: string; run: string; ok: boolean; exitCode: number | null; output: string; ms: number; timedOut?: boolean };

export type FixReport = {
  mode: 'propose' | 'stage';
  attempts: number;
  sessionIds: string[];
  /** Checks pass on the staged snapshot with the fix applied. */
  passes: boolean;
  /** Paths the fix changed. */
  files: string[];
  /** Written to the work tree (propose) or staged (stage). */
  applied: string[];
  /** Why an attempt failed (the model error), when one did. */
  errors: string[];
  /** `stage` was asked for, but the fix undoes every staged change: nothing would be left to commit. */
  emptied?: boolean;
  /** Not written: the user had their own unstaged version; the fix for them is in `patch`. */
  conflicts: string[];
  /** The whole fix as a git patch. */
  patch?: string;
  staged: boolean;
};

export type HookOutcome = {
  ok: boolean;
  exitCode: number;
  message: string;
  violations?: CheckResult['violations'];
  checks?: CheckRun[];
  fix?: FixReport;
  displaced?: { dir: string; paths: string[] };
};

export type FixRequest = { task: string; turnContext: string; signal: AbortSignal; onProgress: (line: string) => void };
/** `error`: why the agent could not work (the model endpoint unreachable, a key refused…). */
export type FixResult = { sessionId: string | null; status: string; answer: string; error?: { code: string; message: string } };

export type PreCommitDeps = {
  root: string;
  gitDir: string;
  /** The index being committed (the hook's GIT_INDEX_FILE). */
  indexFile: string;
  /** The git command this hook runs in (src/githooks/attempt.ts), recorded in the backup so the hook can restore it if the daemon dies. */
  attempt?: string;
  config: HermesConfig;
  checkStaged: () => Promise<Pick<CheckResult, 'violations' | 'warnings'>>;
  runFix: (req: FixRequest) => Promise<FixResult>;
  progress: (line: string) => void;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** How checks run (the guard's sandbox when the commit comes from one). */
  wrap?: CommandWrap;
};

/** Runs `sh -c <run>` at the root; resolves when it exits, is stopped by `signal`, or times out. */
export async function runCheck(root: string, check: Check, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env, wrap?: CommandWrap): Promise<CheckRun> {
  const limit = check.timeoutMs ?? CHECK_TIMEOUT_MS;
  // `wrap`: the guard's sandbox, for a commit made in one. The check sees the hook's
  // environment without the index of the commit (it runs on the staged snapshot itself).
  const how: CommandWrap = (command, cwd) => {
    const w = (wrap ?? plainShell)(command, cwd);
    const childEnv: NodeJS.ProcessEnv = { ...(w.env ?? env), HERMESD_HOOK: 'pre-commit' };
    delete childEnv.GIT_INDEX_FILE;
    return { ...w, env: childEnv };
  };
  // The check's whole process group goes on a timeout: a test runner's workers must not outlive the hook.
  const r = await runCommand(check.run, { cwd: root, wrap: how, timeoutMs: limit, signal, output: { tailChars: CHECK_OUTPUT_MAX_CHARS } });
  if (r.error) return { id: check.id, run: check.run, ok: false, exitCode: null, output: String(r.error), ms: r.durationMs };
  const tail = r.output.total > CHECK_OUTPUT_MAX_CHARS ? '…' + r.output.tail : r.output.tail;
  return {
    id: check.id,
    run: check.run,
    ok: r.exitCode === 0 && !r.timedOut,
    exitCode: r.exitCode,
    output: r.timedOut ? `${tail}\n(stopped after ${limit} ms)` : tail,
    ms: r.durationMs,
    timedOut: r.timedOut,
  };
}

function fixTask(failed: CheckRun[], attempt: number): string {
  const names = failed.map((c) => `\`${c.id}\` (\`${c.run}\`)`).join(', ');
  return [
    `The pre-commit check${failed.length > 1 ? 's' : ''} ${names} failed on the staged snapshot of this repository (fix attempt ${attempt}).`,
    'Change the code so that the check passes. The work tree holds exactly the staged snapshot; edit files in place.',
    "Respect the repository's rules: never edit protected (generated) files directly; change their sources and run the generator instead.",
    'Keep the change minimal and say in one or two sentences what you changed.',
  ].join('\n');
}

function checkOutputContext(failed: CheckRun[]): string {
  return failed
    .map((c) => `Check \`${c.id}\` (\`${c.run}\`) exited with ${c.timedOut ? 'a timeout' : `code ${c.exitCode}`}. Output:\n${c.output.trim() || '(no output)'}`)
    .join('\n\n');
}

/** Saves the fix (changed paths, their content, one git patch) under <git-dir>/hermesd/fixes/<id>/. */
function saveFix(state: WorkState, paths: string[]): { dir: string; patch: string } {
  const dir = fixDir(gitDirOfBackup(state.dir), state.id);
  mkdirSync(join(dir, 'files'), { recursive: true });
  const parts: Buffer[] = [];
  // One git for all paths; literal, so a path with glob characters names only itself.
  const listed = new Set(splitZ(gitSync(['--literal-pathspecs', 'ls-files', '-z', '--', ...paths], { cwd: state.root, indexFile: savedIndexFile(state) })));
  const tracked = paths.filter((p) => listed.has(p));
  if (tracked.length) {
    parts.push(
      gitSyncBuffer(['diff-files', '-p', '--binary', '--no-color', '--no-ext-diff', '--', ...tracked], { cwd: state.root, indexFile: savedIndexFile(state) }),
    );
  }
  for (const p of paths.filter((x) => !tracked.includes(x))) {
    if (!existsSync(join(state.root, p))) continue;
    const r = gitTry(['diff', '--no-index', '--binary', '--no-color', '--no-ext-diff', '/dev/null', p], { cwd: state.root });
    parts.push(Buffer.from(r.stdout));
  }
  for (const p of paths) {
    const from = join(state.root, p);
    const to = join(dir, 'files', p);
    let st;
    try {
      st = lstatSync(from);
    } catch {
      continue;
    }
    mkdirSync(dirname(to), { recursive: true });
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (st.isFile()) copyFileSync(from, to);
  }
  const patch = join(dir, 'fix.patch');
  writeFileSync(patch, Buffer.concat(parts));
  return { dir, patch };
}

/** Writes the fix's version of `path` (from the fix dir) into the work tree. */
function writeFixed(root: string, fixDir: string, path: string): void {
  const from = join(fixDir, 'files', path);
  const to = join(root, path);
  rmSync(to, { force: true });
  if (!existsSync(from) && !isLink(from)) return; // the fix deleted it
  mkdirSync(dirname(to), { recursive: true });
  if (isLink(from)) symlinkSync(readlinkSync(from), to);
  else copyFileSync(from, to);
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Stages the fix's version of each path in the hook's index (the one being committed). */
function stageFixed(root: string, indexFile: string, fixDir: string, paths: string[]): void {
  for (const p of paths) {
    const file = join(fixDir, 'files', p);
    if (!existsSync(file) && !isLink(file)) {
      gitSync(['update-index', '--force-remove', '--', p], { cwd: root, indexFile });
      continue;
    }
    const link = isLink(file);
    const sha = link
      ? gitSync(['hash-object', '-w', '--stdin'], { cwd: root, input: readlinkSync(file) }).trim()
      : gitSync(['hash-object', '-w', '--no-filters', '--', file], { cwd: root }).trim();
    const mode = link ? '120000' : (lstatSync(file).mode & 0o111) !== 0 ? '100755' : '100644';
    gitSync(['update-index', '--add', '--cacheinfo', `${mode},${sha},${p}`], { cwd: root, indexFile });
  }
}

export async function runPreCommit(deps: PreCommitDeps): Promise<HookOutcome> {
  const settings = deps.config.hooks['pre-commit'];
  if (settings.rules) {
    const result = await deps.checkStaged();
    if (result.violations.length > 0) {
      return {
        ok: false,
        exitCode: 1,
        message: `hermesd: commit refused by the repository's rules (.hermes/config.yaml):\n${formatViolations(result)}`,
        violations: result.violations,
      };
    }
    if (result.warnings.length) deps.progress(formatViolations(result));
  }
  const wanted = settings.checks;
  if (wanted.length === 0) return { ok: true, exitCode: 0, message: '' };
  const checks: Check[] = [];
  for (const id of wanted) {
    const c = deps.config.checks.find((x) => x.id === id);
    if (!c)
      return {
        ok: false,
        exitCode: 2,
        message: `hermesd: hooks.pre-commit.checks names "${id}", which is not a check in .hermes/config.yaml (checks: ${deps.config.checks.map((x) => x.id).join(', ') || 'none'}).`,
      };
    checks.push(c);
  }

  const state = saveWorkState({ root: deps.root, gitDir: deps.gitDir, indexFile: deps.indexFile, reason: 'pre-commit checks', attempt: deps.attempt });
  let outcome: HookOutcome | undefined;
  let fixDir: string | undefined;
  let fix: FixReport | undefined;
  let fixPaths: string[] = [];
  try {
    checkoutIndex(state);
    const runAll = async (list: Check[]) => {
      const runs: CheckRun[] = [];
      for (const c of list) {
        if (deps.signal.aborted) break;
        deps.progress(`hermesd: running check ${c.id}: ${c.run}`);
        const r = await runCheck(deps.root, c, deps.signal, deps.env, deps.wrap);
        deps.progress(`hermesd: check ${c.id} ${r.ok ? 'passed' : 'FAILED'} (${(r.ms / 1000).toFixed(1)} s)`);
        runs.push(r);
      }
      return runs;
    };
    let runs = await runAll(checks);
    const failed = () => runs.filter((r) => !r.ok);
    const mode = settings.fix;
    const fixable = () => failed().filter((r) => checks.find((c) => c.id === r.id)?.fix);
    if (failed().length && mode !== 'off' && fixable().length && settings.maxFixAttempts > 0 && !deps.signal.aborted) {
      fix = { mode, attempts: 0, sessionIds: [], passes: false, files: [], applied: [], conflicts: [], staged: false, errors: [] };
      while (fix.attempts < settings.maxFixAttempts && fixable().length && !deps.signal.aborted) {
        fix.attempts++;
        const toFix = fixable();
        deps.progress(`hermesd: asking the agent to fix ${toFix.map((r) => r.id).join(', ')} (attempt ${fix.attempts} of ${settings.maxFixAttempts})`);
        const r = await deps.runFix({
          task: fixTask(toFix, fix.attempts),
          turnContext: checkOutputContext(toFix),
          signal: deps.signal,
          onProgress: deps.progress,
        });
        if (r.sessionId) fix.sessionIds.push(r.sessionId);
        if (r.error && r.status !== 'completed') fix.errors.push(`${r.error.code}: ${r.error.message}`);
        if (deps.signal.aborted) break;
        runs = await runAll(checks);
        if (r.status !== 'completed' && failed().length) break;
      }
      fix.passes = failed().length === 0 && !deps.signal.aborted;
      fixPaths = changedSinceSave(state);
      fix.files = fixPaths;
      if (fixPaths.length) {
        const saved = saveFix(state, fixPaths);
        fixDir = saved.dir;
        fix.patch = saved.patch;
      }
    }
    outcome = { ok: failed().length === 0, exitCode: failed().length === 0 ? 0 : 1, message: '', checks: runs, fix };
  } finally {
    // Whatever happened above (a failure, an abort), the user's state goes back first.
    const restored = restoreWorkState(state, { restoreIndex: true, known: new Set(fixPaths) });
    if (fix && fixDir && !deps.signal.aborted) {
      // A fix that takes back every staged change would commit nothing under the user's message.
      if (fix.mode === 'stage' && fix.passes && fixUndoesStagedChanges(state, fixPaths)) fix.emptied = true;
      const stage = fix.mode === 'stage' && fix.passes && !fix.emptied;
      if (stage) {
        stageFixed(deps.root, deps.indexFile, fixDir, fixPaths);
        fix.staged = true;
      }
      for (const p of fixPaths) {
        if (userHadChanges(state, p)) fix.conflicts.push(p);
        else {
          writeFixed(deps.root, fixDir, p);
          fix.applied.push(p);
        }
      }
    }
    finishWorkState(state);
    if (outcome && restored.displaced.length && restored.displacedDir) outcome.displaced = { dir: restored.displacedDir, paths: restored.displaced };
  }
  if (!outcome) throw new Error('pre-commit checks ended without an outcome');
  outcome.message = describe(outcome);
  if (outcome.fix?.staged) {
    outcome.ok = true;
    outcome.exitCode = 0;
    outcome.message = describe(outcome);
  } else if (outcome.fix && outcome.fix.files.length) {
    // propose: the fix waits in the work tree for review; this commit does not happen.
    outcome.ok = false;
    outcome.exitCode = 1;
  }
  return outcome;
}

/**
 * True when the fix brings every path the user staged back to HEAD and changes nothing else
 * against HEAD: staging it would leave the index equal to HEAD (an empty commit).
 */
function fixUndoesStagedChanges(state: WorkState, fixPaths: string[]): boolean {
  const staged = splitZ(gitTry(['diff-index', '--cached', '--name-only', '-z', 'HEAD'], { cwd: state.root, indexFile: savedIndexFile(state) }).stdout);
  if (staged.length === 0) return false;
  const fixed = new Set(fixPaths);
  if (!staged.every((p) => fixed.has(p))) return false;
  for (const p of fixPaths) {
    const head = gitTry(['rev-parse', '-q', '--verify', `HEAD:${p}`], { cwd: state.root });
    const file = join(fixDir(gitDirOfBackup(state.dir), state.id), 'files', p);
    const there = existsSync(file) || isLink(file);
    if (head.status !== 0) {
      if (there) return false;
      continue;
    }
    if (!there) return false;
    const blob = gitTry(['hash-object', '--no-filters', '--', file], { cwd: state.root }).stdout.trim();
    if (isLink(file) || blob !== head.stdout.trim()) return false;
  }
  return true;
}

function describe(o: HookOutcome): string {
  const lines: string[] = [];
  for (const r of o.checks ?? []) {
    if (!r.ok) {
      const out = r.output.trim().split('\n').slice(-15).join('\n');
      lines.push(
        `hermesd: check ${r.id} failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}): ${r.run}`,
        out ? out.replace(/^/gm, '  | ') : '  | (no output)',
      );
    }
  }
  const f = o.fix;
  if (f) {
    const sessions = f.sessionIds.length ? ` (agent session${f.sessionIds.length > 1 ? 's' : ''} ${f.sessionIds.join(', ')}; hermesd sessions show <id>)` : '';
    if (f.files.length === 0) {
      lines.push(`hermesd: the agent made no change after ${f.attempts} attempt${f.attempts === 1 ? '' : 's'}${sessions}.`);
      for (const e of [...new Set(f.errors)]) lines.push(`  the agent could not work: ${e}`);
      if (f.errors.length) lines.push('  check the model endpoint with: hermesd doctor');
    } else if (f.emptied) {
      lines.push(
        `hermesd: the agent's fix for the failing check takes back every change you staged${sessions}, so there is nothing left to commit under your message; it was not staged.`,
        `  changed in your work tree, not staged: ${f.applied.join(', ') || '(none: see the patch)'}`,
        '  review it with: git diff',
      );
    } else if (f.staged) {
      lines.push(`hermesd: the agent fixed the failing check${sessions}; the checks pass, and the fix is staged in this commit: ${f.files.join(', ')}.`);
    } else {
      lines.push(`hermesd: the agent proposes a fix${f.passes ? ' (the checks pass with it)' : ' (the checks still fail with it)'}${sessions}.`);
      if (f.applied.length)
        lines.push(
          `  changed in your work tree, not staged: ${f.applied.join(', ')}`,
          '  review it with: git diff',
          '  then stage what you accept (git add -p) and commit again.',
        );
    }
    if (f.conflicts.length) {
      lines.push(
        `  your own unstaged changes to ${f.conflicts.join(', ')} were kept; the fix for ${f.conflicts.length === 1 ? 'it' : 'them'} is in ${f.patch} (apply with: git apply --3way ${f.patch})`,
      );
    } else if (f.patch && !f.staged) lines.push(`  the whole fix is also saved as ${f.patch}`);
  }
  if (o.displaced) lines.push(`hermesd: files created or changed while the checks ran were moved to ${o.displaced.dir}: ${o.displaced.paths.join(', ')}`);
  if (!o.ok && !f?.staged) lines.push(BYPASS_HINT);
  return lines.join('\n');
}
