/**
 * The guard around one `terminal` command: before it, a snapshot of the protected files
 * and the git state, the git shim on PATH and the secret values to redact; after it, every
 * protected file put back, refused git state undone, and a report the tool result quotes.
 *
 *   const run = prepareGuardEnv({ root, gitDir, commonDir, config, realGit });
 *   spawn('sh', ['-c', command], { env: run.env, cwd: root });
 *   const report = run.finish();      // then run.redact(output)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, type Dirent, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { cleanGitEnv, findRealGit, runGit } from './git.js';
import { join } from 'node:path';
import { gitPolicyOf, type GitPolicyName, type GuardConfig } from './config.js';
import { discardSnapshot, describeProtectedChanges, restoreProtected, restoreProtectedIndex, snapshotProtected, type ProtectedChange } from './protect.js';
import { isSecretPath, redactSecrets, secretValuesIn, type RedactResult } from './secrets.js';
import { installShim } from './shim.js';
import { captureRepoState, verifyRepoState, type GitViolation } from './verify.js';

export type GitRefusal = { policy: GitPolicyName; message: string; argv: string[] };

export type GuardReport = {
  /** Protected files the command changed, each put back. */
  protected: ProtectedChange[];
  /** git state the command changed against the policy (found after the fact). */
  git: GitViolation[];
  /** git invocations the shim refused while the command ran. */
  refusals: GitRefusal[];
  /** What to tell the model; undefined when the command broke no rule. */
  notice?: string;
};

export type GuardRun = {
  /** The environment to run the command in: the shim first on PATH, hook-skipping variables removed. */
  env: NodeJS.ProcessEnv;
  /** Restores and verifies; call once, after the command ended (also after a timeout or kill). */
  finish(): GuardReport;
  /** Redacts secret-shaped values and the values of the repository's secret files. */
  redact(text: string): RedactResult;
};

export type GuardOptions = {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  /** The real git, by absolute path, captured at daemon start (findRealGit). */
  realGit: string;
  /** Base environment of the command (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where the shim lives (default `<git-dir>/hermesd/guard/bin`). */
  shimDir?: string;
  /** Whether a pre-commit judged a tree since a time (default: the daemon's in-memory record of its hooks). */
  precommitJudged?: (tree: string, sinceMs: number) => boolean;
};

/** Secret files deeper than this are not read for their values (redaction by shape still applies). */
const SECRET_SCAN_MAX_DEPTH = 4;
const SECRET_SCAN_MAX_ENTRIES = 5000;
/** Secret files larger than this are not key=value files worth scanning. */
const SECRET_FILE_MAX_BYTES = 256 * 1024;
const SKIP_DIRS = new Set(['.git', 'node_modules', 'dist', 'build', 'target', 'vendor', '.venv', 'venv', '__pycache__']);

const knownCache = new Map<string, { key: string; values: string[] }>();

/** The assignment values of the secret files in the repository (.env and friends), cached until one changes. */
export function knownSecretValues(root: string, config: GuardConfig): string[] {
  const files: Array<{ rel: string; mtime: number; size: number }> = [];
  let budget = SECRET_SCAN_MAX_ENTRIES;
  const walk = (rel: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of entries) {
      if (budget-- <= 0) return;
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        if (depth < SECRET_SCAN_MAX_DEPTH && !SKIP_DIRS.has(d.name)) walk(r, depth + 1);
        continue;
      }
      // Only names that are secret files are worth a stat.
      if (!(d.isFile() || d.isSymbolicLink()) || !isSecretPath(r, config, { root })) continue;
      try {
        const st = statSync(join(root, r));
        if (st.isFile() && st.size <= SECRET_FILE_MAX_BYTES) files.push({ rel: r, mtime: st.mtimeMs, size: st.size });
      } catch {
        // vanished
      }
    }
  };
  walk('', 0);
  const key = files.map((f) => `${f.rel}:${f.mtime}:${f.size}`).join('|');
  const cached = knownCache.get(root);
  if (cached && cached.key === key) return cached.values;
  const values = new Set<string>();
  for (const f of files) {
    try {
      for (const v of secretValuesIn(readFileSync(join(root, f.rel), 'utf8'))) values.add(v);
    } catch {
      // unreadable: nothing to learn
    }
  }
  const out = [...values];
  knownCache.set(root, { key, values: out });
  return out;
}

/** The real git, resolved when the daemon loaded the guard (before any shim dir is on a PATH). */
const REAL_GIT_AT_START = findRealGit();
const repoDirs = new Map<string, { gitDir: string; commonDir: string }>();

/**
 * The guard for a terminal command in the work tree `root` (what the agent's terminal tool
 * calls): git dirs looked up once per root, the real git captured at start.
 */
export function prepareTerminalGuard(root: string, config: GuardConfig, env?: NodeJS.ProcessEnv): GuardRun {
  let dirs = repoDirs.get(root);
  if (!dirs) {
    const out = runGit(REAL_GIT_AT_START, ['rev-parse', '--absolute-git-dir', '--path-format=absolute', '--git-common-dir'], { cwd: root, env: cleanGitEnv() });
    const [gitDir, commonDir] = out.stdout.trim().split('\n');
    if (out.code !== 0 || !gitDir || !commonDir) throw new Error(`hermesd guard: ${root} is not a git work tree (${out.stderr.trim()})`);
    dirs = { gitDir: realpathSync(gitDir), commonDir: realpathSync(commonDir) };
    repoDirs.set(root, dirs);
  }
  return prepareGuardEnv({ root, ...dirs, config, realGit: REAL_GIT_AT_START, env });
}

export function prepareGuardEnv(opts: GuardOptions): GuardRun {
  const policy = gitPolicyOf(opts.config);
  const guardDir = join(opts.gitDir, 'hermesd', 'guard');
  const shimDir = opts.shimDir ?? join(guardDir, 'bin');
  const shimOpts = { dir: shimDir, realGit: opts.realGit, commonDir: opts.commonDir, policy };
  installShim(shimOpts);
  const runsDir = join(guardDir, 'runs');
  mkdirSync(runsDir, { recursive: true, mode: 0o700 });
  const log = join(runsDir, `${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);

  const snapshot = snapshotProtected(opts.root, opts.config, { gitBin: opts.realGit, spillDir: guardDir });
  const before = captureRepoState({ root: opts.root, gitDir: opts.gitDir, commonDir: opts.commonDir, gitBin: opts.realGit, judged: opts.precommitJudged });
  const known = knownSecretValues(opts.root, opts.config);

  const base = opts.env ?? process.env;
  const env: NodeJS.ProcessEnv = { ...base, PATH: `${shimDir}:${base.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`, HERMESD_GUARD_LOG: log };
  // Inherited from the daemon's own environment these would silently turn the hooks off.
  delete env.HERMESD_SKIP;
  if (env.HUSKY === '0') delete env.HUSKY;

  let report: GuardReport | undefined;
  return {
    env,
    redact: (text) => redactSecrets(text, { known }),
    finish() {
      if (report) return report;
      const changes = restoreProtected(snapshot, { generatorEnv: env });
      const git = verifyRepoState(before, policy);
      changes.push(...restoreProtectedIndex(snapshot, opts.gitDir, before.index));
      discardSnapshot(snapshot);
      installShim(shimOpts);
      const refusals = readRefusals(log);
      report = { protected: changes, git, refusals, notice: noticeOf(changes, git, refusals) };
      return report;
    },
  };
}

function readRefusals(log: string): GitRefusal[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  } finally {
    rmSync(log, { force: true });
  }
  const out: GitRefusal[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as GitRefusal);
    } catch {
      // a line cut short by a killed shim
    }
  }
  return out;
}

function noticeOf(changes: ProtectedChange[], git: GitViolation[], refusals: GitRefusal[]): string | undefined {
  const lines: string[] = [];
  if (changes.length > 0) lines.push(describeProtectedChanges(changes));
  for (const r of refusals) lines.push(`git ${r.argv.join(' ')} was refused (policy ${r.policy}): ${r.message}`);
  for (const g of git) lines.push(`${g.undone ? 'Undone' : 'Found'} (policy ${g.policy}): ${g.message}`);
  if (lines.length === 0) return undefined;
  return `hermesd guard: this command broke repository rules.\n${lines.join('\n')}`;
}

export type GuardedResult = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  guard: GuardReport;
  redactions: Array<{ kind: string }>;
};

/** Output kept per stream; the terminal tool caps what it shows further. */
const OUTPUT_MAX_BYTES = 1024 * 1024;

/** Runs `command` with `sh -c` in the repository under the guard, then restores, verifies and redacts. */
export async function runGuarded(
  command: string,
  opts: GuardOptions & { timeoutMs?: number; signal?: AbortSignal; cwd?: string },
): Promise<GuardedResult> {
  const run = prepareGuardEnv(opts);
  const { code, signal, timedOut, stdout, stderr } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; stdout: string; stderr: string }>((resolveRun) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: opts.cwd ?? opts.root, env: run.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (out.length < OUTPUT_MAX_BYTES) out += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < OUTPUT_MAX_BYTES) err += d.toString('utf8');
    });
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = opts.timeoutMs ? setTimeout(() => ((timedOut = true), kill()), opts.timeoutMs) : undefined;
    const onAbort = () => kill();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('close', (c, s) => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolveRun({ code: c, signal: s, timedOut, stdout: out, stderr: err });
    });
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      resolveRun({ code: 127, signal: null, timedOut, stdout: out, stderr: err + String(e) });
    });
  });
  const guard = run.finish();
  const o = run.redact(stdout);
  const e = run.redact(stderr);
  return { exitCode: code, signal, timedOut, stdout: o.text, stderr: e.text, guard, redactions: [...o.redactions, ...e.redactions] };
}
