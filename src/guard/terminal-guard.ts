/**
 * The guard around one `terminal` command. Before it: the command's sandbox (sandbox.ts),
 * its clean environment, a snapshot of the protected files and of git's state, the secret
 * values to redact. After it: every protected file put back, refused git state undone, every
 * new commit judged by content, and a report the tool result quotes. Commands of one
 * repository run one at a time, so one command's changes are never judged as another's.
 *
 *   const run = await prepareTerminalGuard(root, config, { port, sessionId });
 *   // bwrap … sh -c 'npm test'
 *   const r = await runCommand('npm test', { cwd: root, env: run.env, wrap: (c) => run.command(c) });
 *   const report = await run.finish();                  // then run.redact(output)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SandboxUnavailable } from '../errors/index.js';
import { gitPolicyOf, type GitPolicyName, type GuardConfig } from './guard-config.js';
import { cleanGitEnv } from '../git/env.js';
import { findRealGit } from '../git/real-git.js';
import { gitOut, runGit } from '../git/run.js';
import { binShell, runCommandSync, runCommand, type CommandWrap } from '../process/run.js';
import { precommitPassed } from '../rules/precommit-marker.js';
import { describeProtectedChanges, snapshotProtected, type ProtectedChange } from './protect.js';
import { GUARD_FILES_RULE, judgeCommandEffects } from './after-command.js';
import { realOf, recordDaemonNamespace, sandboxAvailability, sandboxCommand, sandboxFor, type SandboxAvailability } from './sandbox.js';
import { sandboxEnv, sandboxPlan } from './sandbox-plan.js';
import { refusedWrites, type RefusedWrite } from './refused-writes.js';
import { SecretValues } from '../security/secret-values.js';
import { redactSecrets, type RedactResult } from '../security/redact.js';
import { installShim, shimEntry } from './shim.js';
import { captureRepoState, gitReadNames, type GitViolation } from './verify.js';
import { guardDir, sandboxDir } from '../paths/index.js';
import { gitConfigIncludes } from './git-reads.js';

export type GitRefusal = { policy: GitPolicyName; message: string; argv: string[] };

export type GuardReport = {
  /** Protected files the command changed, each put back. */
  protected: ProtectedChange[];
  /** git state the command changed against the policy or the rules (found after the fact). */
  git: GitViolation[];
  /** git invocations the shim refused while the command ran. */
  refusals: GitRefusal[];
  /** What to tell the model; undefined when the command broke no rule. */
  notice?: string;
};

export type GuardRun = {
  /** The environment to run the command in: an allowlist of the daemon's, never its keys. */
  env: NodeJS.ProcessEnv;
  /** The program and arguments that run `sh -c command` (in the sandbox when there is one). */
  command(command: string): { file: string; args: string[] };
  /** Which sandbox the command runs in ('none': unsandboxed, the after-the-fact checks only). */
  sandbox: SandboxAvailability['kind'];
  /** Said with every unsandboxed command (a machine without a sandbox, allowed by config). */
  warning?: string;
  /** Restores and verifies; call once, after the command ended (also after a timeout or kill). */
  finish(): Promise<GuardReport>;
  /** Redacts the known secret values (and their encodings), then secret-shaped ones. */
  redact(text: string): RedactResult;
  /** The writes the command's output says the sandbox refused, each with the rule (or guard) that keeps the path read-only. */
  refusedWrites(output: string): RefusedWrite[];
};

/** What the daemon gives the terminal guard (src/server/services/guard.ts); a standalone run has none of it. */
export type GuardPort = {
  secrets: SecretValues;
  /** $HERMES_HOME. */
  home: string;
  /** The daemon's environment: what a command's environment is chosen from. */
  env: NodeJS.ProcessEnv;
  /** The daemon's socket directory and socket (hooks look for the daemon there). */
  socketDir: string;
  socket: string;
  /** The agent socket (git hooks and the push broker only), started on first use. */
  agentSocket(): Promise<string | undefined>;
  /** Whether the pre-commit hook passed `tree` since `sinceMs` (default: the record in the git dir). */
  judged?(tree: string, sinceMs: number): boolean;
};

/** How a guarded command is sandboxed (undefined: not at all). */
export type SandboxSetup = {
  availability: Exclude<SandboxAvailability, { kind: 'none' }>;
  /** Host directory bound at /tmp. */
  tmp: string;
  home: string;
  userHome?: string;
  /** The daemon's socket directory, hidden inside (undefined: no daemon, a standalone run). */
  socketDir?: string;
  /** [host path of the agent socket, the daemon socket path it is bound at]. */
  socket?: [string, string];
};

export type GuardOptions = {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  /** The real git, by absolute path, captured at daemon start (findRealGit). */
  realGit: string;
  /** Base environment of the command (default process.env); only allowed names pass. */
  env?: NodeJS.ProcessEnv;
  /** Where the PATH shim of an unsandboxed command lives (default `<git-dir>/hermesd/guard/bin`). */
  shimDir?: string;
  sandbox?: SandboxSetup;
  /** The secret values to redact (default: a scan of this work tree and `env`). */
  secrets?: SecretValues;
  /** Whether the pre-commit hook passed a tree during the command. */
  judged?: (tree: string, sinceMs: number) => boolean;
};

/** A generator the guard re-runs after a command (in the command's sandbox) is stopped after this long. */
const GUARD_GENERATOR_TIMEOUT_MS = 5 * 60_000;

/** A `terminal` command's scratch /tmp is removed once its session has been idle this long. */
const SESSION_TMP_TTL_MS = 6 * 60 * 60 * 1000;

/** The real git, resolved when the daemon loaded the guard (before any shim dir is on a PATH). */
const REAL_GIT_AT_START = findRealGit();
const repoDirs = new Map<string, { gitDir: string; commonDir: string }>();
const standaloneSecrets = new Map<string, SecretValues>();
const repoQueues = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier guarded command of `root` ended: the guard judges one command at a time. */
export function withRepoLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const prev = repoQueues.get(root) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  repoQueues.set(root, tail);
  void tail.then(() => {
    if (repoQueues.get(root) === tail) repoQueues.delete(root);
  });
  return run;
}

function dirsOf(root: string): { gitDir: string; commonDir: string } {
  let dirs = repoDirs.get(root);
  if (!dirs) {
    const out = runGit(REAL_GIT_AT_START, ['rev-parse', '--absolute-git-dir', '--path-format=absolute', '--git-common-dir'], { cwd: root, env: cleanGitEnv() });
    const [gitDir, commonDir] = out.stdout.trim().split('\n');
    if (out.code !== 0 || !gitDir || !commonDir) throw new Error(`hermesd guard: ${root} is not a git work tree (${out.stderr.trim()})`);
    dirs = { gitDir: realpathSync(gitDir), commonDir: realpathSync(commonDir) };
    repoDirs.set(root, dirs);
  }
  return dirs;
}

/** The sentence every unsandboxed command carries. */
function unsandboxedWarning(why: string, install: string): string {
  return `This command ran WITHOUT a sandbox (${why}); protected files, git state and secrets were checked only after it. To sandbox commands, ${install}.`;
}

/**
 * The guard for a terminal command in the work tree `root` (what the agent's terminal tool
 * calls): the sandbox guard.sandbox asks for, or a SandboxUnavailable error when there is
 * none and the config says to refuse.
 */
export async function prepareTerminalGuard(
  root: string,
  config: GuardConfig,
  opts: { port?: GuardPort; sessionId?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<GuardRun> {
  const dirs = dirsOf(root);
  const { port } = opts;
  const settings = config.guard?.sandbox ?? {};
  const env = opts.env ?? port?.env ?? process.env;
  let sandbox: SandboxSetup | undefined;
  let warning: string | undefined;
  if (settings.enabled === false) {
    warning = unsandboxedWarning('guard.sandbox.enabled is false', 'remove guard.sandbox.enabled: false from the config');
  } else {
    const availability = sandboxFor(config, env);
    if (availability.kind === 'none') {
      if (settings.ifUnavailable !== 'unsandboxed') {
        throw new SandboxUnavailable(
          `hermesd runs terminal commands in a sandbox, and this machine has none: ${availability.reason}. To fix it, ${availability.install}. ` +
            `(The user can allow unsandboxed commands with guard.sandbox.ifUnavailable: unsandboxed in .hermes/config.yaml.) Until then, use the file tools.`,
        );
      }
      warning = unsandboxedWarning(availability.reason, availability.install);
    } else {
      const home = port?.home ?? env.HERMES_HOME ?? join(env.HOME ?? '', '.hermes');
      const socketDir = port?.socketDir;
      const agent = port ? await port.agentSocket() : undefined;
      sandbox = {
        availability,
        tmp: sessionTmp(dirs.gitDir, opts.sessionId ?? 'standalone'),
        home,
        userHome: env.HOME,
        socketDir,
        ...(agent && port ? { socket: [agent, port.socket] as [string, string] } : {}),
      };
    }
  }
  let secrets = port?.secrets;
  if (!secrets) {
    secrets = standaloneSecrets.get(root);
    if (!secrets) standaloneSecrets.set(root, (secrets = new SecretValues({ root, config, env })));
  }
  const judged = port?.judged ? (tree: string, since: number) => port.judged!(tree, since) : undefined;
  const run = prepareGuardEnv({ root, ...dirs, config, realGit: REAL_GIT_AT_START, env, sandbox, secrets, judged });
  return warning ? { ...run, warning } : run;
}

/** The /tmp of one session's commands, kept between them; other sessions' idle ones are removed. */
function sessionTmp(gitDir: string, sessionId: string): string {
  const base = join(sandboxDir(gitDir), 'tmp');
  const dir = join(base, sessionId.replace(/[^A-Za-z0-9_-]/g, '_'));
  try {
    statSync(dir);
  } catch {
    try {
      for (const name of readdirSync(base)) {
        const p = join(base, name);
        if (Date.now() - statSync(p).mtimeMs > SESSION_TMP_TTL_MS) rmSync(p, { recursive: true, force: true });
      }
    } catch {
      // no other sessions yet
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

let gitBinaries: string[] | undefined;

/**
 * The git binaries a command runs by name or by the usual paths: on PATH and in git's
 * exec-path. (Not the dashed builtins git-core also holds, nor a copy of the binary: a mount
 * each costs every command; what those do is judged after the command all the same.)
 */
function gitBinariesToShadow(realGit: string, env: NodeJS.ProcessEnv): string[] {
  if (gitBinaries) return gitBinaries;
  const out = new Set<string>();
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!dir.startsWith('/')) continue;
    const real = realOf(join(dir, 'git'));
    if (real && !real.includes(`${join('hermesd', 'guard')}`)) out.add(real);
  }
  const execPath = gitOut(realGit, ['--exec-path'], '/', cleanGitEnv());
  if (execPath) {
    const inCore = realOf(join(execPath, 'git'));
    if (inCore) out.add(inCore);
  }
  gitBinaries = [...out];
  return gitBinaries;
}

/**
 * The sandbox of one repository's commands: the git shim installed where the sandbox binds
 * it, the mount plan, and the environment. `command(cmd, cwd)` gives the program and
 * arguments; a `cwd` outside the work tree (a generator's scratch checkout) is made writable.
 */
function sandboxRunner(o: {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  realGit: string;
  base: NodeJS.ProcessEnv;
  sandbox: SandboxSetup;
  policy: ReturnType<typeof gitPolicyOf>;
  protectedFiles: Array<{ rel: string; generator: boolean }>;
  secretFiles: string[];
  hooksPath?: string;
}): { env: NodeJS.ProcessEnv; command(cmd: string, cwd?: string): { file: string; args: string[] } } {
  const { sandbox } = o;
  const guard = guardDir(o.gitDir);
  // The shim the sandbox binds over every git binary; the real git is bound at a path inside the
  // read-only runtime dir, named `git` (git reads its own name: `git-real` would be taken for a dashed builtin).
  const shimDir = join(guard, 'sandbox');
  const realInside = join(shimDir, 'real', 'git');
  // Folders git reads that a repository may lack (`git init --template=`): made here so they are read-only inside, not the command's to create.
  for (const d of ['info', 'hooks']) mkdirSync(join(o.commonDir, d), { recursive: true });
  installShim({ dir: shimDir, realGit: realInside, commonDir: o.commonDir, policy: o.policy, broker: sandbox.socket?.[1], placeholder: join('real', 'git') });
  const empty = join(sandboxDir(o.gitDir), 'empty');
  mkdirSync(empty, { recursive: true, mode: 0o500 });
  const shim = join(shimDir, 'git');
  const files: Array<[string, string]> = [[o.realGit, realInside], ...gitBinariesToShadow(o.realGit, o.base).map((b) => [shim, b] as [string, string])];
  const input = {
    root: o.root,
    gitDir: o.gitDir,
    commonDir: o.commonDir,
    home: sandbox.home,
    userHome: sandbox.userHome,
    config: o.config,
    protectedFiles: o.protectedFiles,
    secretFiles: o.secretFiles,
    hooksPath: o.hooksPath,
    tmp: sandbox.tmp,
    empty,
    files,
    socketDir: sandbox.socketDir,
    socket: sandbox.socket,
    // The hermesd package (<pkg>/dist/src/guard/git-shim.js → <pkg>: the shim, the hooks' CLI, its node_modules) and node.
    alsoVisible: [dirname(dirname(dirname(dirname(shimEntry())))), dirname(process.execPath)],
    gitConfigFiles: gitConfigIncludes({ root: o.root, gitDir: o.gitDir, commonDir: o.commonDir }, o.realGit),
    runtimeDir: o.base.XDG_RUNTIME_DIR,
  };
  const plan = sandboxPlan(input);
  const env = sandboxEnv(o.base, { extra: o.config.guard?.sandbox?.env, home: sandbox.home, socketDir: sandbox.socketDir });
  if (sandbox.availability.kind === 'sandbox-exec') env.HERMESD_SANDBOX = '1';
  recordDaemonNamespace(o.gitDir);
  return {
    env,
    command(cmd, cwd = o.root) {
      if (cwd === o.root) return sandboxCommand(sandbox.availability, plan, cmd);
      const inTree = plan.writable.some((w) => cwd === w || cwd.startsWith(w + '/'));
      return sandboxCommand(sandbox.availability, { ...plan, cwd, writable: inTree ? plan.writable : [...plan.writable, cwd] }, cmd);
    },
  };
}

/**
 * How the daemon runs a command on behalf of a commit made in the sandbox (its pre-commit
 * checks and generators): in the same sandbox, so code the agent wrote or edited never runs
 * outside it. Undefined when this machine has no sandbox (then the commands ran unsandboxed too).
 */
export function sandboxWrapFor(root: string, config: GuardConfig, port: GuardPort, agentSocket: string | undefined): CommandWrap | undefined {
  const availability = sandboxFor(config, port.env);
  if (availability.kind === 'none' || config.guard?.sandbox?.enabled === false) return undefined;
  const dirs = dirsOf(root);
  return (command, cwd) => {
    const sandbox: SandboxSetup = {
      availability,
      tmp: sessionTmp(dirs.gitDir, 'hooks'),
      home: port.home,
      userHome: port.env.HOME,
      socketDir: port.socketDir,
      ...(agentSocket ? { socket: [agentSocket, port.socket] as [string, string] } : {}),
    };
    const runner = sandboxRunner({
      root,
      ...dirs,
      config,
      realGit: REAL_GIT_AT_START,
      base: port.env,
      sandbox,
      policy: gitPolicyOf(config),
      protectedFiles: [],
      secretFiles: port.secrets.secretFiles(),
    });
    return { ...runner.command(command, cwd), env: runner.env };
  };
}

export function prepareGuardEnv(opts: GuardOptions): GuardRun {
  const policy = gitPolicyOf(opts.config);
  const guard = guardDir(opts.gitDir);
  const base = opts.env ?? process.env;
  const secrets = opts.secrets ?? new SecretValues({ root: opts.root, config: opts.config, env: base });
  const sandbox = opts.sandbox;
  const logName = `.hermesd-guard-${process.pid}-${randomBytes(6).toString('hex')}.jsonl`;
  let logHost: string;
  let env: NodeJS.ProcessEnv;
  let command: GuardRun['command'];
  let commandIn: CommandWrap;
  const snapshotConfig: GuardConfig = sandbox ? opts.config : { ...opts.config, rules: [...(opts.config.rules ?? []), GUARD_FILES_RULE] };
  const snapshot = snapshotProtected(opts.root, snapshotConfig, { gitBin: opts.realGit, spillDir: guard });
  const before = captureRepoState({ root: opts.root, gitDir: opts.gitDir, commonDir: opts.commonDir, gitBin: opts.realGit, judged: opts.judged });
  secrets.refresh(before.refs.values());

  if (sandbox) {
    const protectedFiles = [...snapshot.entries.keys()].map((rel) => ({
      rel,
      generator: snapshot.matcher.rules.some((r) => r.generator && r.isMatch(rel) && !r.isExcluded(rel)),
    }));
    const runner = sandboxRunner({ ...opts, base, sandbox, policy, protectedFiles, secretFiles: secrets.secretFiles(), hooksPath: before.hooksPath });
    logHost = join(sandbox.tmp, logName);
    env = { ...runner.env, HERMESD_GUARD_LOG: sandbox.availability.kind === 'sandbox-exec' ? logHost : join('/tmp', logName) };
    command = (cmd) => runner.command(cmd);
    commandIn = (cmd, cwd) => ({ ...runner.command(cmd, cwd), env });
  } else {
    const shimDir = opts.shimDir ?? join(guard, 'bin');
    installShim({ dir: shimDir, realGit: opts.realGit, commonDir: opts.commonDir, policy });
    const runsDir = join(guard, 'runs');
    mkdirSync(runsDir, { recursive: true, mode: 0o700 });
    logHost = join(runsDir, logName);
    const clean = sandboxEnv(base, { extra: opts.config.guard?.sandbox?.env, home: base.HERMES_HOME ?? '', socketDir: base.HERMESD_SOCKET_DIR ?? '' });
    if (!base.HERMES_HOME) delete clean.HERMES_HOME;
    if (!base.HERMESD_SOCKET_DIR) delete clean.HERMESD_SOCKET_DIR;
    env = { ...clean, PATH: `${shimDir}:${base.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`, HERMESD_GUARD_LOG: logHost };
    command = (cmd) => binShell(cmd, opts.root);
    commandIn = (cmd, cwd) => ({ ...binShell(cmd, cwd), env });
  }

  // After the guard's own folders were made (its shim, the sandbox's): what the command adds beside them is judged.
  const names = gitReadNames({ root: opts.root, gitDir: opts.gitDir, commonDir: opts.commonDir }, opts.realGit);
  const judged = (tree: string) => (opts.judged ? opts.judged(tree, before.takenAt) : precommitPassed(opts.gitDir, tree, { sinceMs: before.takenAt }));
  // The generator of a protected rule runs in the same sandbox as the command that changed its files.
  const runGenerator = (cmd: string) => runCommandSync(cmd, { cwd: opts.root, env, wrap: (c) => command(c), timeoutMs: GUARD_GENERATOR_TIMEOUT_MS }).status;

  let report: Promise<GuardReport> | undefined;
  return {
    env,
    command,
    sandbox: sandbox?.availability.kind ?? 'none',
    refusedWrites: (output) => (sandbox ? refusedWrites(output, { root: opts.root, config: opts.config, gitDirs: [opts.gitDir, opts.commonDir] }) : []),
    redact: (text) => {
      const byValue = secrets.redact(text);
      const r = redactSecrets(byValue.text);
      return { text: r.text, redactions: [...Array.from({ length: byValue.count }, () => ({ kind: 'secret-value' })), ...r.redactions] };
    },
    finish() {
      report ??= (async () => {
        const { protected: changes, git } = await judgeCommandEffects(
          { snapshot, state: before, names },
          { config: opts.config, policy, restore: { generatorEnv: env, runGenerator, wrap: commandIn }, judged },
        );
        const refusals = readRefusals(logHost);
        return { protected: changes, git, refusals, notice: noticeOf(changes, git, refusals) };
      })();
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
  for (const g of git)
    lines.push(
      `${g.undone ? 'Undone' : 'Found'} (${g.policy === 'rules' ? 'repository rules' : g.policy === 'guard' ? "hermesd's guard" : `policy ${g.policy}`}): ${g.message}`,
    );
  if (lines.length === 0) return undefined;
  return `hermesd guard: this command broke repository rules.\n${lines.join('\n')}`;
}

/** The rule ids and policy names a report says were broken (the tool result's `rules_broken`). */
export function rulesBroken(report: GuardReport): string[] {
  return [
    ...new Set([
      ...report.protected.map((p) => p.rule),
      ...report.refusals.map((x) => x.policy),
      ...report.git.flatMap((g) => (g.policy === 'rules' ? (g.rules ?? []) : [g.policy])),
    ]),
  ];
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
const OUTPUT_MAX_CHARS = 1024 * 1024;

/** Runs `command` in the repository under the guard (sandboxed when `opts.sandbox` says so), then restores, verifies and redacts. */
export async function runGuarded(command: string, opts: GuardOptions & { timeoutMs?: number; signal?: AbortSignal; cwd?: string }): Promise<GuardedResult> {
  return withRepoLock(opts.root, async () => {
    const run = prepareGuardEnv(opts);
    const r = await runCommand(command, {
      cwd: opts.cwd ?? opts.root,
      env: run.env,
      wrap: (c) => run.command(c),
      timeoutMs: opts.timeoutMs || undefined,
      signal: opts.signal,
      separateChars: OUTPUT_MAX_CHARS,
    });
    const code = r.error ? 127 : r.exitCode;
    const signal = r.error ? null : r.signal;
    const timedOut = r.timedOut;
    const stdout = r.stdout.head;
    const stderr = r.stderr.head + (r.error ? String(r.error) : '');
    const guard = await run.finish();
    const o = run.redact(stdout);
    const e = run.redact(stderr);
    return { exitCode: code, signal, timedOut, stdout: o.text, stderr: e.text, guard, redactions: [...o.redactions, ...e.redactions] };
  });
}

/** The sandbox this machine offers, for a standalone run (tests, the benchmark): null when there is none. */
export function standaloneSandbox(gitDir: string, env: NodeJS.ProcessEnv = process.env): SandboxSetup | undefined {
  const availability = sandboxAvailability(env);
  if (availability.kind === 'none') return undefined;
  return { availability, tmp: sessionTmp(gitDir, 'standalone'), home: env.HERMES_HOME ?? join(env.HOME ?? '', '.hermes'), userHome: env.HOME };
}
