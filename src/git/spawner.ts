/**
 * Starting a process for run.ts: by Node, or in the daemon by a small helper (spawner.c).
 *
 * Node starts a process by forking: the fork copies the daemon's page tables (the larger the
 * repository, the larger the daemon) and marks every page copy-on-write, so the daemon then
 * takes a page fault for each page it writes, and the fork holds its event loop. The helper is
 * a small process that starts git with posix_spawn and passes its output back over a pipe.
 *
 * Only the daemon turns the helper on (`useSpawner`), and only run.ts's asynchronous calls use
 * it. Where it is not built, cannot run here or has stopped, Node starts the process: a call the
 * helper had not started yet when it stopped is started by Node; one it had started fails as a
 * process stopped by a signal does.
 */
import type * as ChildProcesses from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../version.js';

/** One started process, whichever started it. */
export type Launched = {
  onStdout(fn: (chunk: Buffer) => void): void;
  onStderr(fn: (chunk: Buffer) => void): void;
  /** Once: the exit code (null when stopped by a signal), or the error that kept it from starting or running. */
  onEnd(fn: (code: number | null, error?: Error) => void): void;
  kill(signal?: NodeJS.Signals): void;
};

export type LaunchOptions = { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer; signal?: AbortSignal };

/** The helper as this package built it from spawner.c (`npm run build`, scripts/build-client.mjs). */
export const PREBUILT_SPAWNER = join(PACKAGE_ROOT, 'dist', 'client', 'hermesd-spawner');
/** The frames spawner.c speaks: a helper of another version (an install upgraded under a running daemon) ends at once, and Node starts the calls. */
const PROTOCOL = 1;
/** Larger requests (a huge stdin) are started by Node: the helper refuses frames past 64 MiB. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024 - 1024;
/** The numbers of the signals callers send (the same on Linux and macOS). */
const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
const ERRNO_CODES: Record<number, string> = { 2: 'ENOENT', 8: 'ENOEXEC', 13: 'EACCES', 20: 'ENOTDIR' };

/**
 * node:child_process, loaded at the first process: a process that may need none (the MCP
 * server answers its client's first questions from files) does not load it to start.
 */
let childProcesses: typeof ChildProcesses | undefined;
export const processes = (): typeof ChildProcesses => (childProcesses ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcesses);

/** Starts `file` as Node does (a fork of this process). */
function launchByNode(file: string, argv: string[], o: LaunchOptions): Launched {
  const child = processes().spawn(file, argv, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'], signal: o.signal });
  child.stdin.on('error', () => undefined); // the process may exit before reading it all
  child.stdin.end(o.input);
  return {
    onStdout: (fn) => child.stdout.on('data', fn),
    onStderr: (fn) => child.stderr.on('data', fn),
    onEnd: (fn) => {
      let ended = false;
      const once = (code: number | null, error?: Error) => {
        if (!ended) fn(code, error);
        ended = true;
      };
      child.on('error', (err) => once(null, err));
      child.on('close', (code) => once(code));
    },
    kill: (signal) => child.kill(signal),
  };
}

/** A call the helper holds, until it ends: its listeners, what came before them, and whether its process has started. */
class Call implements Launched {
  private readonly out: Array<(c: Buffer) => void> = [];
  private readonly err: Array<(c: Buffer) => void> = [];
  private readonly early: Array<[stdout: boolean, chunk: Buffer]> = [];
  private readonly ends: Array<(code: number | null, error?: Error) => void> = [];
  private ended: [code: number | null, error?: Error] | undefined;
  /** The helper said it started the process. */
  started = false;
  /** Where kill() goes: the helper, or Node's process once the call was handed to Node. */
  killer: (signal: NodeJS.Signals) => void;

  constructor(
    killer: (signal: NodeJS.Signals) => void,
    readonly again: () => Launched,
  ) {
    this.killer = killer;
  }

  onStdout(fn: (c: Buffer) => void): void {
    this.out.push(fn);
    this.flush();
  }
  onStderr(fn: (c: Buffer) => void): void {
    this.err.push(fn);
    this.flush();
  }
  onEnd(fn: (code: number | null, error?: Error) => void): void {
    this.ends.push(fn);
    if (this.ended) fn(...this.ended);
  }
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.ended) this.killer(signal);
  }

  data(stdout: boolean, chunk: Buffer): void {
    this.early.push([stdout, chunk]);
    this.flush();
  }
  end(code: number | null, error?: Error): void {
    if (this.ended) return;
    this.ended = [code, error];
    this.flush();
    for (const fn of this.ends) fn(code, error);
  }
  /** Started by Node instead: its output and end become this call's. */
  handOver(): void {
    const l = this.again();
    this.killer = (s) => l.kill(s);
    l.onStdout((c) => this.data(true, c));
    l.onStderr((c) => this.data(false, c));
    l.onEnd((code, error) => this.end(code, error));
  }

  /** Output goes to its listeners once both kinds have one (run.ts sets both at once). */
  private flush(): void {
    if (this.out.length === 0 || this.err.length === 0) return;
    for (const [stdout, chunk] of this.early.splice(0)) for (const fn of stdout ? this.out : this.err) fn(chunk);
  }
}

class Spawner {
  private readonly child: ChildProcesses.ChildProcess;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  stopped = false;

  constructor(bin: string) {
    this.child = processes().spawn(bin, [`--protocol=${PROTOCOL}`], { stdio: ['pipe', 'pipe', 'ignore'] });
    // The helper keeps the daemon alive only while it runs something for it (as a process the
    // daemon started itself would); it ends when its stdin closes with the daemon.
    this.child.unref();
    refOf(this.child.stdin).unref?.();
    refOf(this.child.stdout).unref?.();
    this.child.stdout!.on('data', (d: Buffer) => this.read(d));
    this.child.stdin!.on('error', () => this.stop());
    // Could not start: it said nothing, and nothing it was given ran.
    this.child.on('error', () => {
      this.stop();
      this.settle();
    });
    // Its calls are settled once everything it wrote is read ('close', not 'exit', nor a request
    // it could not take): a call it said it started fails with it, never runs a second time by Node.
    this.child.on('close', () => {
      this.stopped = true;
      this.settle();
    });
  }

  /**
   * Starts `file` through the helper; undefined (the caller starts it by Node) for a request the
   * helper cannot take whole: over its frame's bound, a NUL in a string (the frame's separator;
   * Node refuses such an argument), or no PATH of its own to find the program in.
   */
  launch(file: string, args: string[], o: LaunchOptions): Launched | undefined {
    if (!file.includes('/') && o.env.PATH === undefined) return undefined;
    const env = Object.entries(o.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
    const strings = [file, o.cwd, ...args, ...env];
    if (strings.some((x) => x.includes('\0'))) return undefined;
    const input = o.input === undefined ? Buffer.alloc(0) : typeof o.input === 'string' ? Buffer.from(o.input, 'utf8') : o.input;
    if (input.length + strings.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0) >= MAX_FRAME_BYTES) return undefined;
    const id = this.nextId++;
    const call = new Call(
      (signal) => {
        const body = Buffer.alloc(4);
        body.writeInt32LE(SIGNALS[signal] ?? SIGNALS.SIGTERM!);
        if (!this.stopped) this.send('K', id, body);
      },
      () => launchByNode(file, args, o),
    );
    this.calls.set(id, call);
    if (this.calls.size === 1) refOf(this.child.stdout).ref?.();
    // A list: its count, then each string and a NUL (one buffer per list, not one per string).
    const list = (xs: string[]) => {
      const count = Buffer.alloc(4);
      count.writeUInt32LE(xs.length);
      return [count, Buffer.from(xs.length ? `${xs.join('\0')}\0` : '', 'utf8')];
    };
    this.send('S', id, Buffer.concat([Buffer.from(`${file}\0${o.cwd}\0`, 'utf8'), ...list([file, ...args]), ...list(env), input]));
    return call;
  }

  private send(kind: 'S' | 'K', id: number, body: Buffer): void {
    const head = Buffer.alloc(9);
    head.writeUInt32LE(body.length + 5, 0);
    head.write(kind, 4, 'latin1');
    head.writeUInt32LE(id, 5);
    this.child.stdin!.write(Buffer.concat([head, body]));
  }

  private read(d: Buffer): void {
    const all = this.buffered.length ? Buffer.concat([this.buffered, d]) : d;
    let off = 0;
    while (all.length - off >= 9) {
      const len = all.readUInt32LE(off);
      if (all.length - off - 4 < len) break;
      this.answer(String.fromCharCode(all[off + 4]!), all.readUInt32LE(off + 5), all.subarray(off + 9, off + 4 + len));
      off += 4 + len;
    }
    // The stream's buffers are new for each read: a frame's bytes are handed on as they are.
    this.buffered = off === all.length ? Buffer.alloc(0) : Buffer.from(all.subarray(off));
  }

  private answer(kind: string, id: number, body: Buffer): void {
    const call = this.calls.get(id);
    if (!call) return;
    if (kind === 'P') call.started = true;
    else if (kind === 'O' || kind === 'E') call.data(kind === 'O', body);
    else if (kind === 'X') {
      const status = body.readInt32LE(0);
      this.finish(id, call, status >= 0 ? status : null);
    } else if (kind === 'F') {
      const errno = body.readInt32LE(0);
      const code = ERRNO_CODES[errno] ?? `errno ${errno}`;
      this.finish(id, call, null, Object.assign(new Error(`spawn ${code}`), { code, errno: -errno }));
    }
  }

  private finish(id: number, call: Call, code: number | null, error?: Error): void {
    this.calls.delete(id);
    if (this.calls.size === 0) refOf(this.child.stdout).unref?.();
    call.end(code, error);
  }

  /** No call goes to the helper any more, and it is ended; what it holds is settled when its output closes. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.child.kill('SIGKILL');
  }

  /** The helper is gone: what it had not started, Node starts; what it had, ends as stopped by a signal. */
  private settle(): void {
    for (const [id, call] of [...this.calls]) {
      this.calls.delete(id);
      if (call.started) call.end(null);
      else call.handOver();
    }
  }
}

const refOf = (stream: unknown) => (stream ?? {}) as { ref?: () => void; unref?: () => void };

let spawner: Spawner | undefined;

/**
 * From now on this process's asynchronous calls start their processes through the helper at
 * `bin` (this package's build). Why it cannot, or undefined.
 */
export function useSpawner(bin = PREBUILT_SPAWNER): string | undefined {
  spawner?.stop();
  spawner = undefined;
  if (!existsSync(bin)) return `not built (${bin})`;
  spawner = new Spawner(bin);
  return undefined;
}

/** Starts `file` with `argv`: through the helper where this process has one, else by Node. */
export function launch(file: string, argv: string[], o: LaunchOptions): Launched {
  const launched = spawner && !spawner.stopped && !o.signal?.aborted ? spawner.launch(file, argv, o) : undefined;
  if (!launched) return launchByNode(file, argv, o);
  if (o.signal) {
    const abort = () => launched.kill('SIGTERM');
    o.signal.addEventListener('abort', abort, { once: true });
    launched.onEnd(() => o.signal?.removeEventListener('abort', abort));
  }
  return launched;
}
