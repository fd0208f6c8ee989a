/**
 * Running a shell command: `sh -c <command>` (or what a wrapper makes of it — the guard's
 * sandbox) as its own process group, so a timeout or a cancel stops the whole tree (a test
 * runner's workers too), never leaving orphans behind the daemon; its output kept as a head
 * and a rolling tail, so a runaway command cannot fill memory. The pre-commit checks, the
 * generators, the agent's terminal and the guard's commands all run through here.
 */
import { spawn, spawnSync } from 'node:child_process';

/**
 * How a command is run: the program and arguments for `sh -c command` in `cwd`, and the
 * environment when the wrapper chooses it. The guard passes its sandbox (an
 * agent's generator or check must not run outside the sandbox it came from).
 */
export type CommandWrap = (command: string, cwd: string) => { file: string; args: string[]; env?: NodeJS.ProcessEnv };

/** A plain `sh -c command`. */
export const plainShell: CommandWrap = (command) => ({ file: 'sh', args: ['-c', command] });

/** `/bin/sh -c command`, whatever `sh` a command's PATH would find first (the guard's shim dir sits on it). */
export const binShell: CommandWrap = (command) => ({ file: '/bin/sh', args: ['-c', command] });

/** The output of a stream: its first `head` characters, the last characters after them, and how many there were. */
export type Captured = { head: string; tail: string; total: number };

export type RunOptions = {
  cwd: string;
  /** The environment (default this process's); a wrapper's own environment wins. */
  env?: NodeJS.ProcessEnv;
  wrap?: CommandWrap;
  timeoutMs?: number;
  /** Stops the command when aborted (also when already aborted). */
  signal?: AbortSignal;
  /** SIGTERM to the group first and SIGKILL after this long (default 0: SIGKILL at once). */
  killGraceMs?: number;
  /** After the shell exits, how long its pipes may stay open (background children) before the group is killed (default: until they close). */
  drainMs?: number;
  /** Characters kept of stdout and stderr together: the first `headChars` and the last `tailChars` after them. */
  output?: { headChars?: number; tailChars?: number };
  /** Also keep stdout and stderr apart, each up to this many characters from its start. */
  separateChars?: number;
};

export type CommandResult = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The command could not be started (the wrapper's program is missing…). */
  error?: Error;
  /** stdout and stderr as they interleaved. */
  output: Captured;
  /** With `separateChars`: each stream on its own (else empty). */
  stdout: Captured;
  stderr: Captured;
  durationMs: number;
};

/** Keeps the first `head` characters and a rolling tail of at most `tail` more. */
class Capture {
  private head = '';
  private tail = '';
  private total = 0;
  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  add(s: string): void {
    this.total += s.length;
    if (this.head.length < this.headChars) {
      const take = this.headChars - this.head.length;
      this.head += s.slice(0, take);
      s = s.slice(take);
    }
    if (this.tailChars === 0 || s.length === 0) return;
    this.tail += s;
    // Trimmed in batches: slicing on every chunk would copy the tail each time.
    if (this.tail.length > 2 * this.tailChars) this.tail = this.tail.slice(-this.tailChars);
  }

  result(): Captured {
    return { head: this.head, tail: this.tailChars > 0 ? this.tail.slice(-this.tailChars) : '', total: this.total };
  }
}

/** Runs `command` in its own process group; resolves when it ended, timed out or was stopped — never rejects. */
export function runCommand(command: string, opts: RunOptions): Promise<CommandResult> {
  const started = Date.now();
  const how = (opts.wrap ?? plainShell)(command, opts.cwd);
  const merged = new Capture(opts.output?.headChars ?? 0, opts.output?.tailChars ?? 0);
  const out = new Capture(opts.separateChars ?? 0, 0);
  const err = new Capture(opts.separateChars ?? 0, 0);
  return new Promise((resolve) => {
    const child = spawn(how.file, how.args, { cwd: opts.cwd, env: how.env ?? opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.on('data', (d: Buffer) => {
      const s = d.toString('utf8');
      merged.add(s);
      out.add(s);
    });
    child.stderr.on('data', (d: Buffer) => {
      const s = d.toString('utf8');
      merged.add(s);
      err.add(s);
    });
    let timedOut = false;
    let cancelled = false;
    let error: Error | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // already gone (or never started)
      }
    };
    const stop = () => {
      if (!opts.killGraceMs) return killGroup('SIGKILL');
      killGroup('SIGTERM');
      killTimer ??= setTimeout(() => killGroup('SIGKILL'), opts.killGraceMs);
    };
    const timer = opts.timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), stop()), opts.timeoutMs) : undefined;
    const onAbort = () => ((cancelled = true), stop());
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (opts.drainMs === undefined) return;
      // A background child (`server &`) keeps the pipes open: give it a moment, then end it.
      setTimeout(() => {
        killGroup('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
      }, opts.drainMs).unref();
    });
    child.on('error', (e) => {
      error = e;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: exit?.code ?? code,
        signal: exit?.signal ?? signal,
        timedOut,
        cancelled,
        ...(error ? { error } : {}),
        output: merged.result(),
        stdout: out.result(),
        stderr: err.result(),
        durationMs: Date.now() - started,
      });
    });
  });
}

/**
 * Runs `command` to its end while this process waits (a generator the guard re-runs between
 * two checks). `args` become `$0 $1 …`; `stdio: 'inherit'` hands the terminal to it.
 * Resolves with its exit status (null: killed, or it did not start).
 */
export function runCommandSync(
  command: string,
  opts: { cwd: string; env?: NodeJS.ProcessEnv; wrap?: CommandWrap; timeoutMs?: number; args?: string[]; stdio?: 'ignore' | 'inherit' },
): { status: number | null; signal: NodeJS.Signals | null; error?: Error } {
  const how = (opts.wrap ?? plainShell)(command, opts.cwd);
  const r = spawnSync(how.file, [...how.args, ...(opts.args ?? [])], {
    cwd: opts.cwd,
    env: how.env ?? opts.env ?? process.env,
    stdio: opts.stdio ?? 'ignore',
    timeout: opts.timeoutMs,
  });
  return { status: r.status, signal: r.signal, ...(r.error ? { error: r.error } : {}) };
}
