/**
 * The idle footprint: a daemon that has served status, context, check,
 * memory, session search and skills, then sat idle, beside a bare Node HTTP server on a Unix
 * socket that served as many requests, both measured in the same run; then ten daemons
 * together (ten work trees open) beside ten bare servers. An idle daemon exits after
 * `daemon.idleTimeoutMinutes`; this is what it holds until then. RSS counts every page a
 * process maps, the node binary's text included, which the processes share; PSS divides
 * shared pages among their users, so the PSS of ten is what ten really cost. A daemon's figure
 * includes its spawner's (the helper that starts its git processes).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DaemonClient } from '../src/client/daemon-client.js';
import { probe, stopDaemon } from '../src/client/lifecycle.js';
import { daemonCommand } from '../src/process/spawn-daemon.js';
import { resolvePaths, type RepoPaths } from '../src/paths/index.js';
import { CACHE_KIB, SessionDB, type NewMessage } from '../src/sessions/db.js';
import { DAEMON_ALLOCATOR_ENV } from '../src/version.js';
import { printNote, printTable, type Bench, type Goal } from './table.js';

/** How long after its last request a process is measured: idle, its collections done. */
const IDLE_MS = Number(process.env.HERMESD_BENCH_IDLE_MS ?? 5_000);
const TEN = 10;
/** A session log of some months: this many sessions of 100 messages, searched seven ways. */
const LOG_SESSIONS = 1_000;
const LOG_QUERIES = ['hello', 'parser', 'tokenizer', 'commit', 'branch merge', 'schema generator', 'flaky retry'];
/** The goals: an idle daemon within half again a bare Node HTTP server. */
const RSS_OVER_BARE_GOAL = 1.5;

type Memory = { rss: number; pss: number; anon: number };

function ownMemory(pid: number): Memory {
  const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t)?.[1] ?? NaN) * 1024;
  return { rss: kb('Rss'), pss: kb('Pss'), anon: kb('Anonymous') };
}

/** The processes named `comm` that `pid` started and that still run (from /proc: one stopped a moment ago and not waited for yet, a zombie, does not). */
export function childrenNamed(pid: number, comm: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes(`(${comm})`) && Number(ppid) === pid && state !== 'Z') out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The spawners (src/git/spawner.c) running under `pid`. */
export const spawnersOf = (pid: number): number[] => childrenNamed(pid, 'hermesd-spawner');

/** A process's memory with its helpers': what it costs the machine to keep it. */
function memoryOf(pid: number): Memory {
  return [pid, ...spawnersOf(pid)].map(ownMemory).reduce((a, m) => ({ rss: a.rss + m.rss, pss: a.pss + m.pss, anon: a.anon + m.anon }));
}

const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;

function makeRepo(base: string, name: string): string {
  const repo = join(base, name);
  mkdirSync(join(repo, '.hermes'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, 'AGENTS.md'), '# rules\nKeep changes small.\n');
  writeFileSync(join(repo, '.hermes', 'config.yaml'), 'rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "AKIA[0-9A-Z]{16}"\n');
  writeFileSync(join(repo, 'app.ts'), 'export const x = 1;\n');
  execFileSync('git', ['add', '-A'], { cwd: repo });
  return repo;
}

async function startDaemon(repo: string, env: NodeJS.ProcessEnv): Promise<{ pid: number; paths: RepoPaths }> {
  const paths = resolvePaths(repo, env);
  const daemon = daemonCommand(repo, env);
  spawn(daemon.command, daemon.args, { env: daemon.env, stdio: 'ignore', detached: true }).unref();
  for (;;) {
    const s = await probe(paths, 200);
    if (s) return { pid: s.pid, paths };
    await sleep(20);
  }
}

/** A session log of LOG_SESSIONS × 100 messages in `home`'s SessionDB; its size in bytes. */
function writeLog(home: string, repo: string): number {
  mkdirSync(home, { recursive: true });
  const db = new SessionDB(join(home, 'state.db'));
  const words =
    'parser tokenizer module test flaky retry quote trailing build cache index commit branch merge rebase lint format schema generator config'.split(' ');
  for (let s = 0; s < LOG_SESSIONS; s++) {
    const session = db.createSession({ repo, source: 'claude-code' });
    const messages: NewMessage[] = [];
    for (let i = 0; i < 100; i++)
      messages.push({
        role: i % 2 ? 'assistant' : 'user',
        content: Array.from({ length: 40 }, (_, k) => `${words[(s * 7 + i * 3 + k * 5) % words.length]}${k % 9}`).join(' ') + ' hello',
      });
    db.appendMessages(session.id, messages);
  }
  db.close();
  return statSync(join(home, 'state.db')).size;
}

/** What a working session asks a daemon: every kind of answer once, three times over. */
async function workload(socket: string): Promise<void> {
  const c = new DaemonClient(socket);
  for (let i = 0; i < 3; i++) {
    await c.call('GET', '/v1/status');
    await c.call('GET', '/v1/context');
    await c.call('POST', '/v1/check', { staged: true });
    await c.call('POST', '/v1/check', { staged: false });
    await c.call('GET', '/v1/memory');
    await c.call('GET', '/v1/sessions/search?q=hello');
    await c.call('GET', '/v1/skills');
  }
}

/** A bare Node HTTP server on a Unix socket answering a small JSON, in its own process. */
async function startBare(socket: string): Promise<{ pid: number; stop: () => void }> {
  const code = `require('http').createServer((q,s)=>{const b=JSON.stringify({ok:true,url:q.url});s.writeHead(200,{'content-type':'application/json','content-length':Buffer.byteLength(b)});s.end(b)}).listen(${JSON.stringify(socket)},()=>process.stdout.write('up'))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((r) => child.stdout!.once('data', r));
  const c = new DaemonClient(socket);
  for (let i = 0; i < 21; i++) await c.call('GET', '/v1/status');
  return { pid: child.pid!, stop: () => child.kill() };
}

export const bench: Bench = {
  name: 'idle',
  async run() {
    const base = mkdtempSync(join(tmpdir(), 'hd-bench-idle-'));
    const env: NodeJS.ProcessEnv = { ...process.env, HERMES_HOME: join(base, 'home'), HERMESD_SOCKET_DIR: join(base, 's') };
    for (const k of Object.keys(env)) if (k.startsWith('HERMESD_') && k !== 'HERMESD_SOCKET_DIR') delete env[k];
    mkdirSync(join(base, 's'), { recursive: true, mode: 0o700 });
    const daemons: RepoPaths[] = [];
    const bares: Array<() => void> = [];
    try {
      // one of each
      const one = await startDaemon(makeRepo(base, 'one'), env);
      daemons.push(one.paths);
      const bare = await startBare(join(base, 's', 'bare.sock'));
      bares.push(bare.stop);
      await workload(one.paths.socket);
      await sleep(IDLE_MS);
      const d = memoryOf(one.pid);
      const b = memoryOf(bare.pid);

      // ten of each (the first pair among them)
      const tenEnv = env;
      const pids: number[] = [];
      const barePids = [bare.pid];
      for (let i = 0; i < TEN; i++) {
        const next = await startDaemon(makeRepo(base, `r${i}`), tenEnv);
        daemons.push(next.paths);
        pids.push(next.pid);
        if (i > 0) {
          const nb = await startBare(join(base, 's', `bare${i}.sock`));
          bares.push(nb.stop);
          barePids.push(nb.pid);
        }
        await workload(next.paths.socket);
      }
      await sleep(IDLE_MS);
      const sum = (list: number[]) =>
        list.map(memoryOf).reduce((acc, m) => ({ rss: acc.rss + m.rss, pss: acc.pss + m.pss, anon: acc.anon + m.anon }), { rss: 0, pss: 0, anon: 0 });
      const ten = sum(pids);
      const tenBare = sum(barePids);

      // A daemon whose user has a session log of some months, searched: SQLite's page cache
      // (capped at CACHE_KIB) stays in the daemon's heap once used.
      const logHome = join(base, 'home-log');
      const logRepo = makeRepo(base, 'log');
      const logBytes = writeLog(logHome, logRepo);
      const logEnv = { ...env, HERMES_HOME: logHome };
      const withLog = await startDaemon(logRepo, logEnv);
      daemons.push(withLog.paths);
      await workload(withLog.paths.socket);
      const c = new DaemonClient(withLog.paths.socket);
      for (const q of LOG_QUERIES) await c.call('GET', `/v1/sessions/search?q=${encodeURIComponent(q)}`);
      await sleep(IDLE_MS);
      const l = memoryOf(withLog.pid);

      const ratio = d.rss / b.rss;
      printTable(`idle footprint, ${IDLE_MS / 1000} s after the last request (same run)`, [
        {
          process: 'hermesd daemon (after status, context, check, memory, search, skills)',
          RSS: mib(d.rss),
          PSS: mib(d.pss),
          anonymous: mib(d.anon),
          'RSS ÷ bare': `${ratio.toFixed(2)}×`,
        },
        { process: 'bare Node HTTP server on a Unix socket', RSS: mib(b.rss), PSS: mib(b.pss), anonymous: mib(b.anon), 'RSS ÷ bare': '1.00×' },
        {
          process: `hermesd daemon, the same after ${LOG_QUERIES.length} searches of a ${(LOG_SESSIONS * 100).toLocaleString('en')}-message session log (${(logBytes / 1e6).toFixed(0)} MB)`,
          RSS: mib(l.rss),
          PSS: mib(l.pss),
          anonymous: mib(l.anon),
          'RSS ÷ bare': `${(l.rss / b.rss).toFixed(2)}×`,
        },
        {
          process: `${TEN} hermesd daemons together`,
          RSS: mib(ten.rss),
          PSS: mib(ten.pss),
          anonymous: mib(ten.anon),
          'RSS ÷ bare': `${(ten.rss / tenBare.rss).toFixed(2)}×`,
        },
        { process: `${TEN} bare servers together`, RSS: mib(tenBare.rss), PSS: mib(tenBare.pss), anonymous: mib(tenBare.anon), 'RSS ÷ bare': '1.00×' },
      ]);
      printNote(
        `The daemon runs bundled (dist/daemon), with no node flag (set at run time instead: a young generation kept at 1 MiB semi-spaces from the start, --optimize-for-size and --expose-gc when it first falls idle) and ${Object.entries(
          DAEMON_ALLOCATOR_ENV,
        )
          .map(([k, v]) => `${k}=${v}`)
          .join(
            ' ',
          )}; the bare server with neither. It exits after daemon.idleTimeoutMinutes (default 30) without a request, a hook question or a change to its files, and the next question starts one (bench daemon: what that start costs). The node binary's text (~35-40 MiB of RSS) is shared: PSS counts each process's share. SQLite's page cache is capped at ${CACHE_KIB / 1024} MiB per daemon: what it used stays in the daemon's heap (glibc does not give it back) until the daemon exits.`,
      );
      const goals: Goal[] = [
        {
          measure: 'idle daemon RSS ÷ a bare Node HTTP server on a Unix socket',
          result: `${mib(d.rss)} vs ${mib(b.rss)} = ${ratio.toFixed(2)}×`,
          goal: `≤ ${RSS_OVER_BARE_GOAL}×`,
          met: ratio <= RSS_OVER_BARE_GOAL,
        },
        { measure: `${TEN} idle daemons together (PSS)`, result: `${mib(ten.pss)} (${TEN} bare servers ${mib(tenBare.pss)})`, goal: '—' },
      ];
      return goals;
    } finally {
      for (const stop of bares) stop();
      for (const p of daemons) await stopDaemon(p).catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    }
  },
};
