/**
 * Cross-process lock files. A lock is a file created with O_EXCL | O_NOFOLLOW (mode 0600)
 * holding the owner's pid; a lock whose owner is dead is stale and is taken over.
 * Used for the daemon's single-instance lock and for every shared-home mutation
 * (memory, skills), since several daemons share one $HERMES_HOME.
 */
import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { writeFileAtomicSync } from './atomic.js';
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

/** The pid a lock file names, or undefined when there is none (no lock, or one being written). */
export function lockOwner(path: string): number | undefined {
  return readOwner(path);
}

function readOwner(path: string): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** A lock this process holds: `release` removes it; `handTo` gives it to another process (the file names that pid from then on, never absent). */
export type HeldLock = { release: () => void; handTo: (pid: number) => void };

function held(path: string): HeldLock {
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      if (readOwner(path) === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    },
    handTo: (pid) => {
      if (released) return;
      released = true;
      writeFileAtomicSync(path, String(pid));
    },
  };
}

/** The lock another process handed to this one (`handTo`: the file names this pid), or undefined. */
export function handedLock(path: string): HeldLock | undefined {
  return readOwner(path) === process.pid ? held(path) : undefined;
}

/** Tries once. Returns the lock, or the live owner's pid when someone else holds it (this process too: a second holder waits). */
export function tryLock(path: string): HeldLock | { owner: number } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, FLAGS, 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return held(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new Error(`Lock file ${path} is a symlink; refusing to follow it.`);
      if (code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      if (owner !== undefined && pidAlive(owner)) return { owner };
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
  const owner = readOwner(path);
  return { owner: owner ?? -1 };
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
