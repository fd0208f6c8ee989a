/**
 * The daemon's git processes, started by a small long-lived `/bin/sh` instead of by the daemon.
 *
 * Starting a process from Node forks Node: the kernel copies the parent's page tables, a cost
 * that grows with the daemon's memory, on every `git diff --cached` an index write sets off
 * (measured in docs/benchmarks.md#repo-size). The launcher is forked once; each
 * git process is then forked from it (a shell of a few hundred KB), and the daemon only writes
 * one line and reads the output. Linux only (it relies on how a FIFO reports a writer that has
 * not opened it yet: not as an end of file).
 *
 * One call: the daemon opens a FIFO (a slot of a small pool, made once) for reading,
 * then writes to the launcher's stdin one line that, in a background subshell, goes to the
 * call's directory, sets the call's environment (the difference from the launcher's own), runs
 * git with stdin from /dev/null, stdout into the FIFO and stderr into the slot's file (read when
 * git failed), and reports `p <id> <pid>`
 * when git started and `x <id> <status>` when it ended. A call that cannot be written as one such
 * line (a newline in an argument, the directory or a value; a variable name sh cannot set), or
 * finds no free slot or no launcher, is not taken: the caller starts git itself, as before.
 */
import type * as ChildProcesses from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import type * as Net from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shQuote } from '../text/sh-quote.js';

/** Slots (a stdout FIFO and a stderr file each): calls at once through the launcher (more start git directly). */
const SLOTS = 8;
/** The loop the launcher runs: each line is a complete command the daemon wrote (see `line`). */
const LOOP = 'while IFS= read -r hermesd_l; do eval "$hermesd_l"; done';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Of a failed call's stderr, what is kept (gitStart keeps as much). */
const STDERR_KEPT = 8192;
/** Variables sh sets itself as it changes directory. */
const SHELL_KEPT = ['PWD', 'OLDPWD'];

/** A git process the launcher started: its output and end, as `node:child_process` would give them. */
export type Launched = {
  onStdout(f: (chunk: Buffer) => void): void;
  onStderr(f: (chunk: Buffer) => void): void;
  /** Once stdout and stderr ended and git exited: its exit code, null when a signal ended it. */
  onClose(f: (code: number | null) => void): void;
  kill(): void;
};

type Call = {
  slot: number;
  pid?: number;
  killed: boolean;
  exit?: number;
  ends: number;
  close?: (code: number | null) => void;
  stderr?: (chunk: Buffer) => void;
  /** Its stdout, read from the slot's FIFO. */
  socket?: Net.Socket;
};

const req = createRequire(import.meta.url);

export class GitLauncher {
  private readonly free: number[] = [];
  private readonly calls = new Map<string, Call>();
  private next = 0;
  private pending = '';
  private alive = true;

  private constructor(
    private readonly child: ChildProcesses.ChildProcess,
    private readonly dir: string,
    private readonly base: NodeJS.ProcessEnv,
  ) {
    for (let i = 0; i < SLOTS; i++) this.free.push(i);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.heard(d));
    child.on('exit', () => this.gone());
    child.stdin!.on('error', () => this.gone());
  }

  /** A launcher for this process's git calls, its environment as it is now; undefined where there is none (not Linux, no sh, no FIFOs). */
  static start(env: NodeJS.ProcessEnv = process.env): GitLauncher | undefined {
    if (process.platform !== 'linux') return undefined;
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), 'hermesd-git-'));
      const fifos = [];
      for (let i = 0; i < SLOTS; i++) fifos.push(shQuote(fifo(dir, i, 'o')));
      const cp = req('node:child_process') as typeof ChildProcesses;
      // The FIFOs made by the launcher itself (Node has no mkfifo), before its loop; it fails where mkfifo does.
      // Its folder goes when its loop ends: at the daemon's stop, and when the daemon died without one (its stdin closed).
      const child = cp.spawn('/bin/sh', ['-c', `mkfifo -m 600 ${fifos.join(' ')} || exit 1; echo ready; ${LOOP}; rm -rf ${shQuote(dir)}`], {
        env,
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      const launcher = new GitLauncher(child, dir, { ...env });
      child.unref();
      (child.stdin as unknown as Net.Socket).unref?.();
      (child.stdout as unknown as Net.Socket).unref?.();
      return launcher;
    } catch {
      if (dir) rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
  }

  /** Whether it is ready to take calls (its FIFOs made). */
  private ready = false;

  /**
   * Starts `bin args` in `cwd` with exactly `env`; undefined when the launcher cannot take it
   * (the caller starts the process itself).
   */
  launch(bin: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Launched | undefined {
    if (!this.alive || !this.ready || this.free.length === 0) return undefined;
    const setting = this.envLine(env);
    if (setting === undefined || [bin, cwd, ...args].some((a) => /[\n\r\0]/.test(a))) return undefined;
    const slot = this.free.pop()!;
    const id = String(this.next++);
    const net = req('node:net') as typeof Net;
    const call: Call = { slot, killed: false, ends: 0 };
    const out = fifo(this.dir, slot, 'o');
    let fd: number;
    try {
      fd = openSync(out, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      this.free.push(slot);
      return undefined;
    }
    const socket = new net.Socket({ fd, readable: true, writable: false });
    call.socket = socket;
    socket.on('end', () => this.ended(id, call)).on('error', () => this.ended(id, call));
    this.calls.set(id, call);
    const o = shQuote(out);
    // stderr goes to a file of the slot, read only when git failed (what a failure says).
    const e = shQuote(fifo(this.dir, slot, 'e'));
    // Where the directory is gone, the FIFO is still opened and closed: the reader sees its end.
    const line =
      `( cd ${shQuote(cwd)} 2>/dev/null || { : >${o}; echo "cannot enter the directory" >${e}; echo "x ${id} 126"; exit; }; ${setting}` +
      `${[bin, ...args].map(shQuote).join(' ')} </dev/null >${o} 2>${e} & echo "p ${id} $!"; wait $!; echo "x ${id} $?" ) &\n`;
    this.child.stdin!.write(line);
    return {
      onStdout: (f) => void socket.on('data', f),
      onStderr: (f) => {
        call.stderr = f;
      },
      onClose: (f) => {
        call.close = f;
      },
      kill: () => {
        call.killed = true;
        this.signal(call);
      },
    };
  }

  /** Ends the launcher (the daemon's stop): git processes it started run to their end. */
  stop(): void {
    if (!this.alive) return;
    this.alive = false;
    this.child.stdin!.end();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** `export`/`unset` of what differs between the launcher's environment and `env`; undefined where sh cannot set it. */
  private envLine(env: NodeJS.ProcessEnv): string | undefined {
    let s = '';
    for (const k of Object.keys(this.base)) {
      if (env[k] !== undefined) continue;
      if (!NAME.test(k)) return undefined;
      s += `unset ${k}; `;
    }
    // The directories sh keeps for itself (the `cd` changes them): always as the call has them.
    for (const k of SHELL_KEPT) if (env[k] === undefined) s += `unset ${k}; `;
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined || (this.base[k] === v && !SHELL_KEPT.includes(k))) continue;
      if (!NAME.test(k) || /[\n\r\0]/.test(v)) return undefined;
      s += `export ${k}=${shQuote(v)}; `;
    }
    return s;
  }

  private heard(d: string): void {
    this.pending += d;
    for (let i = this.pending.indexOf('\n'); i >= 0; i = this.pending.indexOf('\n')) {
      const [kind, id, value] = this.pending.slice(0, i).split(' ');
      this.pending = this.pending.slice(i + 1);
      if (kind === 'ready') this.ready = true;
      const call = id === undefined ? undefined : this.calls.get(id);
      if (!call) continue;
      if (kind === 'p') {
        call.pid = Number(value);
        if (call.killed) this.signal(call);
      } else if (kind === 'x') {
        call.exit = Number(value);
        call.pid = undefined;
        this.settle(id!, call);
      }
    }
  }

  private ended(id: string, call: Call): void {
    call.ends++;
    this.settle(id, call);
  }

  /** A call is done when git exited and its stdout reached its end: its slot is free again. */
  private settle(id: string, call: Call): void {
    if (call.exit === undefined || call.ends < 1 || !this.calls.has(id)) return;
    this.calls.delete(id);
    call.socket?.destroy();
    if (call.exit !== 0) call.stderr?.(readHead(fifo(this.dir, call.slot, 'e')));
    this.free.push(call.slot);
    // A signal's end is 128 + its number in sh: no exit code, as node:child_process reports it.
    call.close?.(call.exit > 128 ? null : call.exit);
  }

  private signal(call: Call): void {
    // Only while git has not been reported ended (its pid is then its own, not reused).
    if (call.pid === undefined) return;
    try {
      process.kill(call.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }

  /** The launcher ended (killed, out of memory): calls in flight end as failed, later ones start git directly. */
  private gone(): void {
    const wasAlive = this.alive;
    this.alive = false;
    for (const [id, call] of this.calls) {
      this.calls.delete(id);
      call.socket?.destroy();
      this.signal(call);
      call.close?.(null);
    }
    if (wasAlive) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A slot's stdout FIFO (`o`) and stderr file (`e`). */
function fifo(dir: string, slot: number, which: 'o' | 'e'): string {
  return join(dir, `${slot}.${which}`);
}

/** What a failed call said: the first STDERR_KEPT bytes of its stderr file. */
function readHead(file: string): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(STDERR_KEPT);
    return buf.subarray(0, readSync(fd, buf, 0, STDERR_KEPT, 0));
  } catch {
    return Buffer.alloc(0);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
