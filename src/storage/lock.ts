/**
 * Cross-process lock files. A lock is a file created with O_EXCL | O_NOFOLLOW (mode 0600)
 * holding the owner's pid and, where /proc tells it, the owner's start time: a lock whose
 * owner is dead is stale and is taken over, and so is one whose pid another process has
 * taken since (its start time differs).
 * Used for the daemon's single-instance lock and for every shared-home mutation
 * (memory, skills), since several daemons share one $HERMES_HOME.
 */
import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const FLAGS = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (exited, not yet reaped by its new parent) still answers kill 0.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** A process's start, in clock ticks since boot (/proc/<pid>/stat field 22); undefined without /proc. */
export function processStartOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isInteger(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/** `pid` runs, and is the process that started at `start` (when known): a pid taken again by another process is not it. */
export function sameProcess(pid: number, start: number | undefined): boolean {
  if (!pidAlive(pid)) return false;
  if (start === undefined) return true;
  const now = processStartOf(pid);
  return now === undefined || now === start;
}

/** This process's line in a lock file: its pid and its start time. */
function ownerLine(): string {
  const start = processStartOf(process.pid);
  return start === undefined ? String(process.pid) : `${process.pid} ${start}`;
}

/** The live process a lock file names, or undefined when there is none (no lock, one being written, or its owner gone). */
export function lockOwner(path: string): number | undefined {
  const o = readOwner(path);
  return o && sameProcess(o.pid, o.start) ? o.pid : undefined;
}

function readOwner(path: string): { pid: number; start?: number } | undefined {
  try {
    const [pid, start] = readFileSync(path, 'utf8')
      .trim()
      .split(/\s+/)
      .map((x) => Number.parseInt(x, 10));
    return Number.isFinite(pid) ? { pid: pid!, ...(Number.isFinite(start) ? { start } : {}) } : undefined;
  } catch {
    return undefined;
  }
}

/** A lock this process holds: `release` removes it. */
export type HeldLock = { release: () => void };

function held(path: string): HeldLock {
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      if (readOwner(path)?.pid === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    },
  };
}

/** Tries once. Returns the lock, or the live owner's pid when someone else holds it (this process too: a second holder waits). */
export function tryLock(path: string): HeldLock | { owner: number } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, FLAGS, 0o600);
      writeSync(fd, ownerLine());
      closeSync(fd);
      return held(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new Error(`Lock file ${path} is a symlink; refusing to follow it.`);
      if (code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      if (owner !== undefined && sameProcess(owner.pid, owner.start)) return { owner: owner.pid };
      if (owner === undefined) {
        // A lock file without a pid is being written right now, or was left empty by a crash.
        // Give the writer a moment before calling it stale.
        const ageOk = attempt < 2;
        if (ageOk) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
          continue;
        }
      }
      try {
        unlinkSync(path);
      } catch {
        // someone else removed it first
      }
    }
  }
  return { owner: readOwner(path)?.pid ?? -1 };
}

/** Another process held the lock for the whole wait: the caller may call that busy, not broken. */
export class LockTimeout extends Error {
  override readonly name = 'LockTimeout';
  constructor(path: string, timeoutMs: number, owner: number) {
    super(`Timed out after ${timeoutMs} ms waiting for lock ${path} (held by pid ${owner}).`);
  }
}

/** Waits for the lock (polling with jitter) up to `timeoutMs`, runs `fn`, and releases. */
export async function withLock<T>(path: string, fn: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = tryLock(path);
    if ('release' in got) {
      try {
        return await fn();
      } finally {
        got.release();
      }
    }
    if (Date.now() > deadline) {
      throw new LockTimeout(path, timeoutMs, got.owner);
    }
    await sleep(5 + Math.random() * 20);
  }
}

/** Synchronous variant for callers that cannot await (short critical sections only). */
export function withLockSync<T>(path: string, fn: () => T, timeoutMs = 10_000): T {
  const deadline = Date.now() + timeoutMs;
  const waiter = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const got = tryLock(path);
    if ('release' in got) {
      try {
        return fn();
      } finally {
        got.release();
      }
    }
    if (Date.now() > deadline) {
      throw new LockTimeout(path, timeoutMs, got.owner);
    }
    Atomics.wait(waiter, 0, 0, 5 + Math.floor(Math.random() * 20));
  }
}
