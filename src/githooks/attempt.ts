/**
 * One attempt = one `git commit` (or merge, rebase step…): the git process that runs the
 * pre-commit hook, then prepare-commit-msg, commit-msg and post-commit. Its id is
 * `<pid>:<start>`, git's pid and its start time in clock ticks since boot (field 22 of
 * /proc/<pid>/stat), so a recycled pid is never the same attempt. A hook finds it by walking
 * up its process tree to the nearest `git`, whatever runs in between (husky's runner,
 * lefthook, the pre-commit framework's Python). The sh hook does the same walk with `read`
 * builtins (src/hook-client/client.c reads it too). Without /proc (macOS) there is no attempt id and the
 * callers fall back to what they did before attempts existed.
 */
import { readFileSync } from 'node:fs';

/** Ancestors walked at most: hook managers put a few processes between git and a hook. */
export const ATTEMPT_WALK_MAX = 8;

type ProcStat = { comm: string; ppid: number; start: number };

/** /proc/<pid>/stat, parsed; the command name may hold spaces and parentheses, the fields after it never do. */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, starttime field 22
  const ppid = Number(fields[1]);
  const start = Number(fields[19]);
  if (!Number.isInteger(ppid) || !Number.isInteger(start)) return undefined;
  return { comm: text.slice(open + 1, close), ppid, start };
}

/** The attempt `pid` runs in: the nearest `git` among its ancestors (not itself), or undefined. */
export function attemptOf(pid: number = process.pid): string | undefined {
  let at = procStat(pid)?.ppid;
  for (let i = 0; i < ATTEMPT_WALK_MAX && at !== undefined && at > 1; i++) {
    const st = procStat(at);
    if (!st) return undefined;
    if (st.comm === 'git') return `${at}:${st.start}`;
    at = st.ppid;
  }
  return undefined;
}

const ATTEMPT_RE = /^(\d+):(\d+)$/;

/** True when `id` looks like an attempt id (what a client sends is checked before use). */
export function isAttemptId(id: unknown): id is string {
  return typeof id === 'string' && ATTEMPT_RE.test(id);
}

/** The attempt's start, in clock ticks since boot; comparable with `processStart()`. */
export function attemptStart(id: string): number | undefined {
  const m = ATTEMPT_RE.exec(id);
  return m ? Number(m[2]) : undefined;
}

/** This process's start, in clock ticks since boot (undefined without /proc). */
export function processStart(pid: number = process.pid): number | undefined {
  return procStat(pid)?.start;
}
