/**
 * Running git: the one place hermesd starts a git process. A call is plain data — the
 * arguments and a GitCall (where, which environment, which index, input, bounds) — and the
 * output goes to a parser (parse.ts, diff.ts, index-file.ts), as in simple-git's "task =
 * command + parser". Runners: synchronous (hooks, which answer git while it waits, and the
 * guard's queries), asynchronous (the daemon, which must keep answering) and streamed (a
 * huge staged patch, read line by line instead of whole).
 */
import type { SpawnSyncReturns } from 'node:child_process';
import { gitEnv, type Quarantine } from './env.js';
import { launch, processes } from './spawner.js';

export type GitCall = {
  cwd: string;
  /** The exact environment (default: this process's, through gitEnv). */
  env?: NodeJS.ProcessEnv;
  /** Use this index instead of `.git/index` (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`). */
  indexFile?: string;
  input?: string | Buffer;
  signal?: AbortSignal;
  /** Stop git after this long (default: unbounded; the caller's own work bounds it). */
  timeoutMs?: number;
  /** Largest output kept (default GIT_MAX_BUFFER_BYTES); more fails the call. */
  maxBuffer?: number;
  /** The git binary (default `git` on PATH; the guard passes the real git by absolute path, see real-git.ts). */
  bin?: string;
  /** `-c key=value` pairs placed before the command, left out of error messages. */
  overrides?: readonly string[];
  /** A push's quarantine, kept in the environment gitEnv builds (a pre-receive hook's reads). */
  quarantine?: Quarantine;
};

/** Largest output a git call may produce unless it says otherwise (a binary diff of a big fix). */
export const GIT_MAX_BUFFER_BYTES = 512 * 1024 * 1024;

/**
 * Flags that make diff output independent of the user's git config (prefixes, quoting, drivers,
 * colour, `diff.ignoreSubmodules`): a gitlink whose commit changed is always listed.
 */
export const PLAIN_DIFF = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--no-relative',
  '--ignore-submodules=dirty',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '-M',
];
export const GIT_CONFIG_OVERRIDES = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'core.fsmonitor=false'];

/** Which index a repository read uses (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`), what stops its git, and a push's quarantine it must see. */
export type GitOptions = { indexFile?: string; signal?: AbortSignal; quarantine?: Quarantine };

/** A read of the work tree at `root` whose output does not depend on the user's git config (quoting, diff prefixes, fsmonitor). */
export function plainGitCall(root: string, opts: GitOptions = {}): GitCall {
  return { cwd: root, indexFile: opts.indexFile, signal: opts.signal, overrides: GIT_CONFIG_OVERRIDES, quarantine: opts.quarantine };
}

/** git exited with a failure (or could not run); `code` is null when it did not exit on its own. */
export class GitFailed extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''}`);
  }
}

export type GitResult = { status: number; stdout: string; stderr: string };

function envOf(call: GitCall): NodeJS.ProcessEnv {
  if (!call.env) return gitEnv({ indexFile: call.indexFile, quarantine: call.quarantine });
  return call.indexFile ? { ...call.env, GIT_INDEX_FILE: call.indexFile } : call.env;
}

function argvOf(args: string[], call: GitCall): string[] {
  return call.overrides ? [...call.overrides, ...args] : args;
}

function runSync(args: string[], call: GitCall, encoding: 'utf8' | 'buffer'): SpawnSyncReturns<string | Buffer> {
  return processes().spawnSync(call.bin ?? 'git', argvOf(args, call), {
    cwd: call.cwd,
    env: envOf(call),
    input: typeof call.input === 'string' ? Buffer.from(call.input, 'utf8') : call.input,
    maxBuffer: call.maxBuffer ?? GIT_MAX_BUFFER_BYTES,
    timeout: call.timeoutMs,
    // Bytes unless text is asked for ('buffer' is the default, not an encoding name).
    encoding: encoding === 'utf8' ? 'utf8' : undefined,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs git and returns stdout; throws GitFailed when git fails. */
export function gitSyncBuffer(args: string[], call: GitCall): Buffer {
  const r = runSync(args, call, 'buffer') as SpawnSyncReturns<Buffer>;
  if (r.status !== 0 || r.error) throw new GitFailed(args, r.status, r.error ? String(r.error) : r.stderr.toString('utf8'));
  return r.stdout;
}

/** Runs git and returns stdout as text; throws GitFailed when git fails. */
export function gitSync(args: string[], call: GitCall): string {
  return gitSyncBuffer(args, call).toString('utf8');
}

/** Runs git and returns its status and output instead of throwing (127: git could not run, or was stopped). */
export function gitTry(args: string[], call: GitCall): GitResult {
  const r = runSync(args, call, 'utf8') as SpawnSyncReturns<string>;
  return { status: statusOf(r), stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}

/** gitTry with stdout as bytes (object contents). */
export function gitTryBuffer(args: string[], call: GitCall): { status: number; stdout: Buffer; stderr: string } {
  const r = runSync(args, call, 'buffer') as SpawnSyncReturns<Buffer>;
  return { status: statusOf(r), stdout: r.stdout ?? Buffer.alloc(0), stderr: r.stderr ? r.stderr.toString('utf8') : r.error ? String(r.error) : '' };
}

function statusOf(r: SpawnSyncReturns<unknown>): number {
  return r.status ?? (r.error ? 127 : 1);
}

/**
 * Runs git with this process's stdio (the guard's shim passing a command through to the real
 * git); the caller turns the result into its own exit code.
 */
export function gitPassThrough(args: string[], call: { bin?: string; cwd?: string; env?: NodeJS.ProcessEnv }): Exit {
  const r = processes().spawnSync(call.bin ?? 'git', args, { cwd: call.cwd, env: call.env, stdio: 'inherit' });
  return { status: r.status, signal: r.signal, error: r.error };
}

/** How a process run with inherited stdio ended. */
export type Exit = { status: number | null; signal: NodeJS.Signals | null; error?: Error };

/** A git process already started whose output waits for its reader (gitStart). */
export type StartedGit = {
  /** Hands the output to `onData`, what came before first; resolves when git exits 0, rejects with GitFailed otherwise. */
  read(onData: (chunk: Buffer) => void): Promise<void>;
  /** Stops git (its output will not be read). */
  stop(): void;
};

/**
 * Starts git now and keeps its output until `read` is called: a caller can set git to work
 * before it has what it needs to read the answer (the range check loads the rule engine while
 * git already diffs). gitStream is gitStart and read at once.
 */
export function gitStart(args: string[], call: GitCall): StartedGit {
  const launched = launch(call.bin ?? 'git', argvOf(args, call), { cwd: call.cwd, env: envOf(call), input: call.input, signal: call.signal });
  const max = call.maxBuffer ?? GIT_MAX_BUFFER_BYTES;
  let size = 0;
  let stderr = '';
  let failure: string | undefined;
  let sink: ((chunk: Buffer) => void) | undefined;
  const early: Buffer[] = [];
  const stop = (why: string) => {
    failure ??= why;
    launched.kill('SIGTERM');
  };
  launched.onStdout((chunk) => {
    size += chunk.length;
    if (size > max) stop(`output over ${max} bytes`);
    else if (sink) sink(chunk);
    else early.push(chunk);
  });
  launched.onStderr((d) => {
    if (stderr.length < 8192) stderr += d.toString('utf8');
  });
  const timer = call.timeoutMs ? setTimeout(() => stop(`timed out after ${call.timeoutMs} ms`), call.timeoutMs) : undefined;
  const done = new Promise<void>((resolve, reject) => {
    launched.onEnd((code, error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else if (code === 0 && !failure) resolve();
      else reject(new GitFailed(args, failure ? null : code, failure ?? stderr));
    });
  });
  done.catch(() => undefined); // a failure before anyone reads is reported to the reader, never as unhandled
  return {
    read(onData) {
      sink = onData;
      for (const chunk of early.splice(0)) onData(chunk);
      return done;
    },
    stop: () => stop('stopped by its caller'),
  };
}

/** Runs git, handing stdout chunks to `onData` as they arrive; rejects with GitFailed when git fails. */
export function gitStream(args: string[], onData: (chunk: Buffer) => void, call: GitCall): Promise<void> {
  return gitStart(args, call).read(onData);
}

/** Runs git and resolves with stdout; rejects with GitFailed when git fails. */
export function gitAsync(args: string[], call: GitCall): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return gitStream(args, (c) => chunks.push(c), call).then(() => Buffer.concat(chunks));
}

/** Runs git and resolves with its status and output, never rejecting (127: git could not run, or was stopped). */
export async function gitAsyncTry(args: string[], call: GitCall): Promise<GitResult> {
  const r = await gitAsyncTryBuffer(args, call);
  return { ...r, stdout: r.stdout.toString('utf8') };
}

/** `gitAsyncTry` with the output as bytes. */
export function gitAsyncTryBuffer(args: string[], call: GitCall): Promise<{ status: number; stdout: Buffer; stderr: string }> {
  const chunks: Buffer[] = [];
  return gitStream(args, (c) => chunks.push(c), call).then(
    () => ({ status: 0, stdout: Buffer.concat(chunks), stderr: '' }),
    (err: unknown) => ({
      status: err instanceof GitFailed ? (err.code ?? 127) : 127,
      stdout: Buffer.concat(chunks),
      stderr: err instanceof GitFailed ? err.stderr : String(err),
    }),
  );
}

/** A git call of the guard's own (a ref, a config value) takes milliseconds; this bounds a wedged one. */
const GIT_QUERY_TIMEOUT_MS = 30_000;
/** The guard's queries read at most this much (a cat-file of a protected file). */
const GIT_QUERY_MAX_BYTES = 256 * 1024 * 1024;

/** A guard query: `gitBin` (the real git) with `env` as given (default this process's), bounded. */
export function runGit(
  gitBin: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string | Buffer },
): { code: number; stdout: string; stderr: string } {
  const r = gitTry(args, {
    bin: gitBin,
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    input: opts.input,
    timeoutMs: GIT_QUERY_TIMEOUT_MS,
    maxBuffer: GIT_QUERY_MAX_BYTES,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A guard query's stdout without its final newline, or undefined when git failed. */
const outOf = (r: { code: number; stdout: string }): string | undefined => (r.code === 0 ? r.stdout.replace(/\n$/, '') : undefined);

/** Runs a guard query and returns trimmed stdout, or undefined when git failed. */
export function gitOut(gitBin: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string | undefined {
  return outOf(runGit(gitBin, args, { cwd, env }));
}

/**
 * runGit without holding the daemon's event loop: a synchronous spawn blocks it for the whole
 * git run (the fork of a large process), and the post-commit audit ran five of them.
 */
export async function runGitAsync(
  gitBin: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await gitAsyncTry(args, {
    bin: gitBin,
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    timeoutMs: GIT_QUERY_TIMEOUT_MS,
    maxBuffer: GIT_QUERY_MAX_BYTES,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** gitOut without holding the event loop. */
export async function gitOutAsync(gitBin: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  return outOf(await runGitAsync(gitBin, args, { cwd, env }));
}
