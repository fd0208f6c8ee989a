/**
 * The doorbell: how the sh hooks (git's and the agents') ask the daemon without starting a
 * client process. A curl start costs more than a whole `sh` hook that does nothing; sh
 * builtins, files and signals cost almost nothing. Linux only (the hook checks the daemon
 * through /proc); elsewhere, and whenever anything here is missing, the hooks use the socket.
 *
 * The protocol (the hook's side: hooks/hermesd-bell.sh), in `<git-dir>/hermesd/bell` (0700):
 *   daemon                       "<pid> <start time in clock ticks>": written once the services
 *                                answer, removed first at shutdown. A hook signals only a live
 *                                process with that start time, so never a recycled pid.
 *   <pid>.in                     the request body: the agent's payload, or the git hook's JSON.
 *   <pid>=<kind>=<name>=<ms>     written after the body: the request is complete. kind is an
 *                                agent (claude, codex, cursor, gemini) or `git`; name is the event
 *                                or the hook; ms is the hook's bound. Then SIGUSR2 to the daemon.
 *   <pid>.a                      the answer when there is something to print: the code (or `u`:
 *                                the daemon cannot judge) on the first line, then the text.
 * The daemon answers with a signal to <pid>: SIGUSR2 = exit 0, nothing to print; SIGUSR1 = read
 * <pid>.a. It signals once, only while <pid> is the same process (its start time), and never
 * after the hook's bound (the marker's mtime + ms, less a margin): by then the hook went on
 * without it. Requests from another mount namespace (a sandboxed command; the bell folder is
 * read-only there) are judged as sandboxed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { procStat } from '../hooks/attempt.js';
import { bellDir } from '../paths/index.js';
import { hookRequestSchema } from '../protocol/hooks.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { shAnswer } from './routes/agents.js';
import { hookFailure } from './routes/hooks.js';
import type { Services } from './services/index.js';

const MARKER = /^(\d{1,10})=(claude|codex|cursor|gemini|git)=([A-Za-z-]{1,40})=(\d{1,7})$/;
/** A request or answer no hook came back for (the hook was killed, or timed out) is removed after this. */
const LEFTOVER_MS = 60_000;
const SWEEP_EVERY_MS = 10_000;
/** How often a git hook in flight is checked for being alive (its work is abandoned when it is gone). */
const ALIVE_CHECK_MS = 200;

export type Doorbell = { close(): void };

type Request = { pid: number; start: number; kind: string; name: string; body: string; deadline: number; sandboxed: boolean };

function mountNamespace(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Starts the doorbell once the services answer; undefined where hooks cannot use it (no /proc). */
export function startDoorbell(services: Services, onActivity: () => void): Doorbell | undefined {
  const ctx = services.daemon;
  const self = procStat(process.pid);
  if (process.platform !== 'linux' || !self) return undefined;
  const dir = bellDir(ctx.paths.gitDir);
  const ownNamespace = mountNamespace('self');
  let closed = false;
  let lastSweep = Date.now();

  // Not recursive: a work tree deleted meanwhile must stay deleted (the daemon then stops).
  if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
  // What a previous daemon left: its hooks went on without an answer long ago.
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { force: true, recursive: true });

  const sweep = (now: number) => {
    lastSweep = now;
    for (const name of readdirSync(dir)) {
      if (name === 'daemon') continue;
      try {
        if (now - statSync(join(dir, name)).mtimeMs > LEFTOVER_MS) rmSync(join(dir, name), { force: true });
      } catch {
        // taken by a request being handled
      }
    }
  };

  /** The requests complete now: each marker is taken (unlinked) once, whatever else scans. */
  const take = (): Request[] => {
    const out: Request[] = [];
    for (const name of readdirSync(dir)) {
      const m = MARKER.exec(name);
      if (!m) continue;
      const marker = join(dir, name);
      let mtime: number;
      try {
        mtime = statSync(marker).mtimeMs;
        unlinkSync(marker);
      } catch {
        continue;
      }
      const pid = Number(m[1]);
      const input = join(dir, `${pid}.in`);
      let body = '';
      try {
        body = readFileSync(input, 'utf8');
        unlinkSync(input);
      } catch {
        // no body: answered as a request the daemon cannot judge
      }
      const proc = procStat(pid);
      if (!proc) continue;
      const bound = Number(m[4]);
      const ns = mountNamespace(pid);
      out.push({ pid, start: proc.start, kind: m[2]!, name: m[3]!, body, deadline: mtime + bound - Math.min(50, 20 + bound / 20), sandboxed: ns !== undefined && ns !== ownNamespace });
    }
    return out;
  };

  const sameProcess = (r: Request) => procStat(r.pid)?.start === r.start;

  const answerOf = async (r: Request): Promise<{ code: string; text: string }> => {
    if (r.kind !== 'git') {
      let payload: unknown;
      try {
        payload = JSON.parse(r.body);
      } catch {
        return { code: 'u', text: `the ${r.kind} hook payload is not JSON\n` };
      }
      return shAnswer(services, r.kind, payload);
    }
    const abort = new AbortController();
    const alive = setInterval(() => {
      if (!sameProcess(r)) abort.abort();
    }, ALIVE_CHECK_MS);
    try {
      const parsed = hookRequestSchema.parse(JSON.parse(r.body));
      const result = await services.hooks.handle(r.name, r.sandboxed ? { ...parsed, sandboxed: true } : parsed, () => undefined, abort.signal);
      return { code: String(result.exitCode), text: result.message ? `${result.message}\n` : '' };
    } catch (err) {
      const failed = hookFailure(services, r.name, err);
      return { code: String(failed.exitCode), text: `${failed.message}\n` };
    } finally {
      clearInterval(alive);
    }
  };

  const serve = async (r: Request) => {
    onActivity();
    ctx.busy++;
    let answer: { code: string; text: string };
    try {
      answer = await answerOf(r);
    } finally {
      ctx.busy--;
    }
    if (Date.now() > r.deadline) {
      ctx.log.warn('doorbell: answered after the hook stopped waiting', { kind: r.kind, name: r.name, pid: r.pid });
      return;
    }
    if (!sameProcess(r)) return;
    try {
      if (answer.code === '0' && answer.text === '') {
        process.kill(r.pid, 'SIGUSR2');
      } else {
        writeFileSync(join(dir, `${r.pid}.a`), `${answer.code}\n${answer.text}`, { mode: 0o600 });
        process.kill(r.pid, 'SIGUSR1');
      }
    } catch (err) {
      ctx.log.warn('doorbell: could not answer', { kind: r.kind, name: r.name, pid: r.pid, error: String(err) });
    }
  };

  // Installed for the life of the process: a hook that read `daemon` just before shutdown may
  // still ring, and SIGUSR2's default would end the daemon in the middle of its cleanup.
  process.on('SIGUSR2', () => {
    if (closed) return;
    let requests: Request[];
    try {
      const now = Date.now();
      if (now - lastSweep > SWEEP_EVERY_MS) sweep(now);
      requests = take();
    } catch (err) {
      ctx.log.warn('doorbell: cannot read its folder', { dir, error: String(err) });
      return;
    }
    for (const r of requests) void serve(r);
  });
  writeFileAtomicSync(join(dir, 'daemon'), `${process.pid} ${self.start}\n`, 0o600);
  return {
    close() {
      closed = true;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
