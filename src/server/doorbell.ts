/**
 * The doorbell: how the sh hooks (git's and the agents') ask a warm daemon without starting a
 * client process. A curl start costs more than a whole `sh` hook that does nothing; sh
 * builtins, files and signals cost almost nothing. Linux only (the hook checks the daemon
 * through /proc); elsewhere, and whenever anything here is missing, the hooks use the socket.
 *
 * The protocol (the hook's side: hooks/hermesd-bell.sh), in `<git-dir>/hermesd/bell` (0700; a
 * link to a private folder on a tmpfs where there is one: src/server/bell-folder.ts):
 *   daemon                       "<pid> <start time in clock ticks> <protocol>": written once
 *                                the services answer (asleep: at once; the first question
 *                                loads them), removed first at shutdown. A hook rings
 *                                only when it speaks that protocol (a runner written by another
 *                                version of hermesd asks over the socket) and that process is
 *                                alive (not a zombie).
 *   <id>.in                      the request body: the agent's payload, or the git hook's JSON.
 *                                <id> is <pid>-<n>: the hook shell's pid, and its nth question.
 *   <id>=<kind>=<name>=<ms>      created after the body: the request is complete (the daemon
 *                                sees it through inotify). kind is an agent (claude, codex,
 *                                cursor, gemini) or `git`; name is the event or the hook; ms is
 *                                the hook's bound.
 *                                ms 0: the hook wants no answer (a post-* hook's evidence): it
 *                                has gone on, nobody is signalled.
 *   <id>.a                       the answer when there is something to print: the code (or `u`:
 *                                the daemon cannot judge) on the first line, then the text.
 * The daemon answers with a signal to <pid>: SIGUSR2 = exit 0, nothing to print; SIGUSR1 = read
 * <id>.a. It signals once, only while <pid> is the process that asked (its start time), and
 * never after the hook's bound (the marker's mtime + ms, less a margin): by then the hook went
 * on without it. Requests from another mount namespace (a sandboxed command; the bell folder
 * is read-only there anyway) are judged as sandboxed.
 */
import { readdirSync, readFileSync, readlinkSync, rmSync, statSync, unlinkSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { procStat } from '../githooks/attempt.js';
import { bellDir, precommitAttemptPath } from '../paths/index.js';
import { placeBell } from './bell-folder.js';
import { MAX_BODY_BYTES } from '../protocol/limits.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import type { DaemonContext } from './context.js';

/** The version of this protocol; a change to it that old runners cannot follow takes the next number. */
const PROTOCOL = 1;
const MARKER = /^((\d{1,10})-\d{1,9})=(claude|codex|cursor|gemini|git)=([A-Za-z-]{1,40})=(\d{1,7})$/;
/** Leftovers (a request whose hook was killed, answers read long ago) are removed after this. */
const LEFTOVER_MS = 60_000;
/** A request inotify did not report (its queue overflowed) is still found by a scan this often. */
const SCAN_EVERY_MS = 2_000;
/** How long a question that wants no answer (a post-* hook's evidence) waits: the git command that left it ends meanwhile. */
const QUIET_DELAY_MS = 150;
/** An answer that took longer than this checks again, just before the signal, that the hook is the same process. */
const RECHECK_AFTER_MS = 1_000;
/** An answered request's files are removed this long after the answer (with the others answered meanwhile). */
const SWEEP_AFTER_MS = 25;

export type Doorbell = { close(): void };

/** A hook's question, as the answer (bell-answer.ts) needs it. */
export type BellQuestion = {
  pid: number;
  /** The hook process's start time (clock ticks), -1 for a quiet question. */
  start: number;
  kind: string;
  name: string;
  body: string;
  /** The body's size in bytes (a body over the API's limit is not read). */
  size: number;
  sandboxed: boolean;
  /** Wants no answer (<ms> 0): its hook has gone on; nobody is signalled, nothing is abandoned. */
  quiet: boolean;
};

/** What the hook prints (`code` `u`: the daemon cannot judge); for a git hook, the attempt it ran in and whether a pre-commit let it through. */
export type BellAnswer = { code: string; text: string; attempt?: string; passed?: boolean };

/** Answers a question; loaded, with the services, when the first question comes (bell-answer.ts). */
export type BellAnswerer = (q: BellQuestion) => Promise<BellAnswer>;

type Request = BellQuestion & {
  id: string;
  marker: string;
  received: number;
  deadline: number;
};

function mountNamespace(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/**
 * Starts the doorbell; undefined where hooks cannot use it (no /proc). `answerer` is asked for
 * with the first question: a daemon that is asleep (server/process.ts) loads its services then.
 */
export function startDoorbell(ctx: DaemonContext, answerer: () => Promise<BellAnswerer>, onActivity: () => void): Doorbell | undefined {
  const self = procStat(process.pid);
  if (process.platform !== 'linux' || !self) return undefined;
  const link = bellDir(ctx.paths.gitDir);
  const dir = placeBell(ctx.paths);
  const ownNamespace = mountNamespace('self');
  /** Markers being answered: inotify reports a marker's creation and, later, its removal. */
  const taken = new Set<string>();

  let closed = false;

  // What a previous daemon left: its hooks went on without an answer long ago. Questions that
  // want none (evidence) are still answered: the first scan finds them.
  const leftover = readdirSync(dir);
  const kept = new Set<string>();
  for (const name of leftover) {
    const m = MARKER.exec(name);
    if (m?.[5] === '0') kept.add(name).add(`${m[1]}.in`);
  }
  for (const name of leftover) if (!kept.has(name)) rmSync(join(dir, name), { force: true, recursive: true });

  const remove = (...names: string[]) => {
    for (const name of names) {
      try {
        unlinkSync(join(dir, name));
      } catch {
        // gone already
      }
    }
  };

  // An answered request's files go a moment later, together: unlinking them at once put the
  // daemon's work beside the hook's own exit, when the two cores are busiest (~0.5 ms a call).
  // The marker stays taken until then, so neither inotify nor the scan answers it twice.
  const answered: string[] = [];
  let sweep: NodeJS.Timeout | undefined;
  const removeSoon = (marker: string, input: string) => {
    answered.push(marker, input);
    if (sweep) return;
    sweep = setTimeout(() => {
      sweep = undefined;
      const names = answered.splice(0);
      remove(...names);
      for (const name of names) taken.delete(name);
    }, SWEEP_AFTER_MS);
    sweep.unref();
  };

  /** A marker's request: its body, who asked (start time), and when the hook stops waiting. */
  const take = (name: string): Request | undefined => {
    const m = MARKER.exec(name);
    if (!m || taken.has(name)) return undefined;
    const id = m[1]!;
    const pid = Number(m[2]);
    let body = '';
    let size: number;
    try {
      const input = join(dir, `${id}.in`);
      size = statSync(input).size;
      // Over the API's limit: answered as the socket refuses it (413), unread.
      if (size <= MAX_BODY_BYTES) body = readFileSync(input, 'utf8');
    } catch {
      // Answered already (this is the marker's removal), or a marker without a body.
      return undefined;
    }
    const bound = Number(m[5]);
    // <ms> 0: a question that wants no answer (a post-* hook's evidence); its hook has gone on.
    const quiet = bound === 0;
    const proc = quiet ? undefined : procStat(pid);
    if (!quiet && !proc) {
      // The hook is gone (it stopped waiting, or was killed): nobody to answer.
      remove(name, `${id}.in`);
      return undefined;
    }
    taken.add(name);
    const kind = m[3]!;
    const received = Date.now();
    // The hook stops waiting <ms> after it made the marker (a shell may ask again then: the
    // git runner's re-check), so the deadline counts from the marker's mtime.
    let since = received;
    try {
      since = statSync(join(dir, name)).mtimeMs;
    } catch {
      // removed by a scan that took it first; the time it arrived
    }
    let sandboxed = false;
    if (kind === 'git') {
      const ns = mountNamespace(pid);
      sandboxed = ns !== undefined && ns !== ownNamespace;
    }
    return { id, pid, marker: name, kind, name: m[4]!, body, size, received, start: proc?.start ?? -1, deadline: since + bound - Math.min(50, 20 + bound / 20), sandboxed, quiet };
  };

  const serve = async (r: Request) => {
    onActivity();
    ctx.busy++;
    ctx.changed();
    let answer: BellAnswer;
    try {
      answer = await (await answerer())(r);
    } catch (err) {
      ctx.log.error('doorbell: no answer', { kind: r.kind, name: r.name, error: String(err) });
      answer = { code: 'u', text: '' };
    } finally {
      ctx.busy--;
      ctx.changed();
    }
    try {
      if (r.quiet) return;
      if (Date.now() > r.deadline) {
        ctx.log.warn('doorbell: answered after the hook stopped waiting', { kind: r.kind, name: r.name, pid: r.pid });
        return;
      }
      // A pid is recycled only after the kernel has gone round all the others: the start time
      // read when the request came is enough for a quick answer, a slow one reads it again.
      if (Date.now() - r.received > RECHECK_AFTER_MS && procStat(r.pid)?.start !== r.start) return;
      // What the sh runner writes after a pre-commit it asked with curl: the hint the other hooks of this commit read.
      if (answer.passed && answer.attempt) writeFileSync(precommitAttemptPath(ctx.paths.gitDir), `${answer.attempt}\n`);
      if (answer.code === '0' && answer.text === '') {
        process.kill(r.pid, 'SIGUSR2');
      } else {
        writeFileSync(join(dir, `${r.id}.a`), `${answer.code}\n${answer.text}`, { mode: 0o600 });
        process.kill(r.pid, 'SIGUSR1');
      }
    } catch (err) {
      ctx.log.warn('doorbell: could not answer', { kind: r.kind, name: r.name, pid: r.pid, error: String(err) });
    } finally {
      removeSoon(r.marker, `${r.id}.in`);
    }
  };

  const ring = (name: string) => {
    if (closed) return;
    const request = take(name);
    if (!request) return;
    // Evidence waits until the git command that left it has ended: its work would slow git's.
    if (request.quiet) setTimeout(() => void serve(request), QUIET_DELAY_MS).unref();
    else void serve(request);
  };

  let watcher: FSWatcher;
  try {
    watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name) ring(name.toString());
    });
  } catch (err) {
    ctx.log.warn('doorbell: cannot watch its folder; hooks use the socket', { dir, error: String(err) });
    return undefined;
  }
  watcher.on('error', (err) => ctx.log.warn('doorbell: its folder watch failed', { dir, error: String(err) }));

  // What inotify may not have reported, and what nobody came back for.
  const scan = setInterval(() => {
    if (closed) return;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // the folder went with the work tree; the daemon stops on its own
    }
    const now = Date.now();
    for (const name of names) {
      if (name === 'daemon' || taken.has(name)) continue;
      if (MARKER.test(name)) {
        ring(name);
        continue;
      }
      try {
        if (now - statSync(join(dir, name)).mtimeMs > LEFTOVER_MS) remove(name);
      } catch {
        // removed meanwhile
      }
    }
  }, SCAN_EVERY_MS);
  scan.unref();

  // A runner of an earlier version may still signal the daemon; SIGUSR2 must not end it.
  process.on('SIGUSR2', () => undefined);
  writeFileAtomicSync(join(dir, 'daemon'), `${process.pid} ${self.start} ${PROTOCOL}\n`, 0o600);
  return {
    close() {
      closed = true;
      clearInterval(scan);
      clearTimeout(sweep);
      watcher.close();
      rmSync(dir, { recursive: true, force: true });
      if (link !== dir) rmSync(link, { force: true });
    },
  };
}
