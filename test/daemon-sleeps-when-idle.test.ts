/**
 * A daemon idle for `daemon.hibernateAfterMinutes` falls asleep: it starts a fresh process and
 * stops, and the fresh one answers on the same socket and doorbell with none of its services
 * loaded (issue 18: an idle daemon's memory). The next request or hook question wakes the
 * services in that process; status requests do not; a client listening to the events keeps it
 * awake; the idle timeout still ends it. The tests shorten the wait with HERMESD_HIBERNATE_MS.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../src/client/client.js';
import type { Status } from '../src/protocol/daemon.js';
import { handedLock, lockOwner, tryLock, withLock } from '../src/storage/lock.js';
import { alive, commitIn, gitIn, makeEnv, waitFor, type TestEnv } from './helpers/env.js';
import { startFakeModel } from './helpers/fake-model.js';

const RULES = [
  'rules:',
  '  - id: generated-files',
  '    message: Do not edit generated files directly.',
  '    protect: ["src/generated/**"]',
  '  - id: no-aws-keys',
  '    message: Never commit credentials.',
  '    forbid: "AKIA[0-9A-Z]{16}"',
  '',
].join('\n');

/** The pid daemon.json names (undefined while there is none). */
function daemonPid(repo: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(repo, '.git/hermesd/daemon.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

/** Whether `pid` has SQLite's native library mapped (the session log was opened). */
function sqliteLoaded(pid: number): boolean {
  return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('better_sqlite3');
}

/** How many inotify watches `pid` holds: the watcher's (work tree, git dir) and the doorbell's one. */
function inotifyWatches(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** The services run: the watcher's watches are set and the session log is open (after a search). */
function servicesLoaded(pid: number): boolean {
  return inotifyWatches(pid) > 1;
}

/** Waits until a process other than `pid` is the daemon, and returns it. */
async function nextDaemon(repo: string, pid: number): Promise<number> {
  await waitFor(() => {
    const now = daemonPid(repo);
    return now !== undefined && now !== pid && alive(now);
  });
  return daemonPid(repo)!;
}

describe('a daemon idle for daemon.hibernateAfterMinutes falls asleep', () => {
  let t: TestEnv;
  let repo: string;
  const start = async (env: Record<string, string>) => {
    const r = await t.cli(['start', '--json'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    return r.json() as Status;
  };

  beforeEach(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'src/generated/api.ts': 'x\n', 'src/app.ts': 'export const a = 1;\n' });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('in a fresh process without its services; status does not wake it, the next request does, in place', async () => {
    // What the daemon warns about stays visible while it sleeps: a config that does not load,
    // hooks git does not run (they are installed, then git is pointed elsewhere).
    writeFileSync(join(repo, '.hermes/config.yaml'), `${RULES}daemon:\n  idleTimeoutMinutes: -5\n`);
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    gitIn(t, repo, 'config', 'core.hooksPath', 'elsewhere');
    // Long enough that the woken services are still loaded when the test looks (a loaded machine).
    const awake = await start({ HERMESD_HIBERNATE_MS: '1500' });
    const client = new DaemonClient(awake.socket);
    await client.call('GET', '/v1/context');
    await client.call('GET', '/v1/sessions/search?q=hello');
    const before = await client.call<Status>('GET', '/v1/status');
    expect(before.config?.error).toContain('idleTimeoutMinutes');
    expect(before.warnings.join('\n')).toMatch(/^hooks: /m);
    expect(servicesLoaded(awake.pid)).toBe(true);
    expect(sqliteLoaded(awake.pid)).toBe(true);

    const sleeper = await nextDaemon(repo, awake.pid);
    await waitFor(() => !alive(awake.pid));
    const asleep = await client.call<Status>('GET', '/v1/status');
    expect(asleep.pid).toBe(sleeper);
    expect(asleep.socket).toBe(awake.socket);
    expect(asleep.asleep?.since).toMatch(/^\d{4}-/);
    expect(asleep.warnings).toEqual(before.warnings);
    expect(asleep.config).toEqual(before.config);
    expect(servicesLoaded(sleeper)).toBe(false);
    expect(inotifyWatches(sleeper)).toBe(1);
    expect(sqliteLoaded(sleeper)).toBe(false);
    const log = readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8');
    expect(log).toMatch(/daemon stopping \{"reason":"falling asleep after \d+ s without work or changes"\}/);
    expect(log).toContain('daemon started asleep');

    // Polling status keeps the services unloaded.
    for (let i = 0; i < 5; i++) expect((await client.call<Status>('GET', '/v1/status')).asleep).toBeDefined();
    expect(servicesLoaded(sleeper)).toBe(false);
    const human = await t.cli(['status'], { cwd: repo });
    expect(human.stdout).toContain('asleep   since');
    expect(human.stdout).toContain('config   ERROR');

    // Any other request wakes the services in this process, and answers as an awake daemon does.
    const context = await client.call<{ tiers: unknown }>('GET', '/v1/context');
    expect(context.tiers).toBeDefined();
    const woken = await client.call<Status>('GET', '/v1/status');
    expect(woken.pid).toBe(sleeper);
    expect(woken.asleep).toBeUndefined();
    expect(woken.config).toEqual(before.config);
    await waitFor(() => servicesLoaded(sleeper));
    expect(readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')).toMatch(/daemon woke \{"asleepSince":"[^"]+","ms":\d+\}/);
  });

  it('passes its listening socket on: a client polling status through the handover is never refused', async () => {
    const awake = await start({ HERMESD_HIBERNATE_MS: '400' });
    const client = new DaemonClient(awake.socket);
    const failures: string[] = [];
    const pids = new Set<number>();
    // A new connection each time, as the CLI and the hooks make them.
    const status = () =>
      new Promise<Status>((resolve, reject) => {
        const req = request({ socketPath: awake.socket, path: '/v1/status', agent: false, timeout: 5_000 }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c));
          res.on('end', () => resolve(JSON.parse(body) as Status));
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end();
      });
    // Status does not keep the services loaded: the daemon falls asleep while this loop runs.
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      try {
        pids.add((await status()).pid);
      } catch (err) {
        failures.push(String(err));
      }
      if (pids.size > 1) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(failures).toEqual([]);
    expect([...pids]).toHaveLength(2);
    expect(pids.has(awake.pid)).toBe(true);
    // A second handover goes from a process that never bound the path itself.
    const sleeper = [...pids].find((p) => p !== awake.pid)!;
    await client.call('GET', '/v1/context');
    const third = await nextDaemon(repo, sleeper);
    expect((await client.call<Status>('GET', '/v1/status')).pid).toBe(third);
  });

  it('a hook question wakes it: the doorbell refuses forbidden content and lets a clean commit through', async () => {
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    const awake = await start({ HERMESD_HIBERNATE_MS: '300' });
    const sleeper = await nextDaemon(repo, awake.pid);
    await waitFor(() => readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8').includes('daemon started asleep'));
    expect(servicesLoaded(sleeper)).toBe(false);

    writeFileSync(join(repo, 'src/keys.ts'), "export const key = 'AKIAIOSFODNN7EXAMPLQ';\n");
    gitIn(t, repo, 'add', 'src/keys.ts');
    const refused = commitIn(t, repo, ['-qm', 'keys']);
    expect(refused.code, refused.out).not.toBe(0);
    expect(refused.out).toContain('no-aws-keys');
    const log = readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8');
    // Answered by the process that slept, through the doorbell (not a fallback nor a new daemon).
    expect(log.split('daemon started asleep').at(-1)).toMatch(/daemon woke[\s\S]*hook pre-commit \{"via":"sh"/);

    gitIn(t, repo, 'rm', '-q', '--cached', 'src/keys.ts');
    writeFileSync(join(repo, 'src/app.ts'), 'export const a = 2;\n');
    gitIn(t, repo, 'add', 'src/app.ts');
    const ok = commitIn(t, repo, ['-qm', 'app']);
    expect(ok.code, ok.out).toBe(0);
    expect(gitIn(t, repo, 'log', '-1', '--format=%s').trim()).toBe('app');
  });

  it('stays awake while a client listens to the events, then falls asleep; the idle timeout still ends it asleep', async () => {
    const awake = await start({ HERMESD_HIBERNATE_MS: '300', HERMESD_IDLE_TIMEOUT_MS: '2500' });
    const stream = request({ socketPath: awake.socket, path: '/v1/events?client=test', method: 'GET' });
    const ready = new Promise<void>((resolve) => stream.on('response', (res) => res.once('data', () => resolve())));
    stream.end();
    await ready;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(daemonPid(repo)).toBe(awake.pid);

    stream.destroy();
    const sleeper = await nextDaemon(repo, awake.pid);
    expect(servicesLoaded(sleeper)).toBe(false);
    // 2.5 s after the last request, counted across the handover, the sleeping daemon exits.
    await waitFor(() => !alive(sleeper), 10_000);
    expect(daemonPid(repo)).toBeUndefined();
    expect(readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')).toMatch(/daemon stopping \{"reason":"idle for 3 s"\}/);
  });

  it('stays awake while a post-task review waits or runs, then falls asleep', async () => {
    const model = await startFakeModel([], { reviews: 'script' });
    try {
      writeFileSync(join(t.home, 'config.yaml'), 'review:\n  minToolCalls: 1\n');
      let reviewing = 0;
      model.push({ tool_calls: [{ name: 'read_file', arguments: { path: 'src/app.ts' } }] }, { content: 'It exports a.' }, () => {
        reviewing = Date.now();
        return { content: JSON.stringify({ candidates: [] }), delayMs: 1_500 };
      });
      const awake = await start({ HERMESD_HIBERNATE_MS: '300', OPENAI_BASE_URL: model.url });
      const client = new DaemonClient(awake.socket);
      const result = await client.stream<{ status: string }>('POST', '/v1/tasks', { task: 'What does src/app.ts export?' }, () => undefined);
      expect(result.status).toBe('completed');
      await waitFor(() => reviewing > 0);
      // The model takes 1.5 s over the review: well past the 300 ms without requests.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(daemonPid(repo)).toBe(awake.pid);
      expect(alive(awake.pid)).toBe(true);
      const sleeper = await nextDaemon(repo, awake.pid);
      expect(Date.now() - reviewing).toBeGreaterThanOrEqual(1_500);
      expect(servicesLoaded(sleeper)).toBe(false);
    } finally {
      await model.close();
    }
  });

  it('stays awake while the files of its work tree change, requests or not', async () => {
    const awake = await start({ HERMESD_HIBERNATE_MS: '800' });
    await waitFor(() => servicesLoaded(awake.pid));
    for (let i = 0; i < 12; i++) {
      writeFileSync(join(repo, 'src/app.ts'), `export const a = ${i};\n`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(daemonPid(repo)).toBe(awake.pid);
    const sleeper = await nextDaemon(repo, awake.pid);
    expect(servicesLoaded(sleeper)).toBe(false);
  });

  it('reads the time from daemon.hibernateAfterMinutes in the config (fractions allowed)', async () => {
    writeFileSync(join(repo, '.hermes/config.yaml'), `${RULES}daemon:\n  hibernateAfterMinutes: 0.01\n`);
    const awake = await start({});
    const sleeper = await nextDaemon(repo, awake.pid);
    expect(servicesLoaded(sleeper)).toBe(false);
  });

  it('a stop that comes while it falls asleep stops the process taking over too', async () => {
    const log = join(repo, '.git/hermesd/daemon.log');
    const handovers = () => readFileSync(log, 'utf8').split('"reason":"falling asleep').length - 1;
    // The moment it says it is falling asleep it is handing over (its socket drains for 50 ms);
    // a loaded machine may miss that moment: then again, a few times.
    let hit = false;
    for (let attempt = 0; attempt < 5 && !hit; attempt++) {
      const awake = await start({ HERMESD_HIBERNATE_MS: '300' });
      const before = attempt === 0 ? 0 : handovers();
      await waitFor(() => handovers() > before, 10_000, 1);
      try {
        process.kill(awake.pid, 'SIGTERM');
        hit = true;
      } catch {
        expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
        continue;
      }
      await waitFor(() => !alive(awake.pid));
    }
    expect(hit).toBe(true);
    expect(readFileSync(log, 'utf8')).toContain('stop requested while falling asleep; the next process is stopped too');
    await new Promise((r) => setTimeout(r, 500));
    const heir = daemonPid(repo);
    expect(heir === undefined || !alive(heir)).toBe(true);
    expect((await t.cli(['status'], { cwd: repo })).code).toBe(3);
  });

  it('hermesd stop stops a sleeping daemon and leaves none behind', async () => {
    const awake = await start({ HERMESD_HIBERNATE_MS: '300' });
    const sleeper = await nextDaemon(repo, awake.pid);
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    await waitFor(() => !alive(sleeper));
    expect(daemonPid(repo)).toBeUndefined();
    expect((await t.cli(['status'], { cwd: repo })).code).toBe(3);
  });
});

describe('the daemon lock, handed to the process that takes over', () => {
  it('names the new owner without ever being absent; that owner takes it as it is, others see it held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hd-lock-'));
    const path = join(dir, 'daemon.lock');
    const heir = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const mine = tryLock(path);
      if (!('release' in mine)) throw new Error('lock not taken');
      mine.handTo(heir.pid!);
      expect(lockOwner(path)).toBe(heir.pid);
      expect(readdirSync(dir)).toEqual(['daemon.lock']);
      // Released after the handover, it stays the heir's.
      mine.release();
      expect(tryLock(path)).toEqual({ owner: heir.pid });
      expect(handedLock(path)).toBeUndefined();
      // A lock that names this process was handed to it.
      writeFileSync(path, String(process.pid));
      const adopted = handedLock(path);
      expect(adopted).toBeDefined();
      adopted!.release();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      heir.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('taken by this process, it is still held against this process: two withLock calls run one after the other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hd-lock-'));
    const path = join(dir, 'store.lock');
    try {
      const mine = tryLock(path);
      if (!('release' in mine)) throw new Error('lock not taken');
      expect(tryLock(path)).toEqual({ owner: process.pid });
      mine.release();
      const order: string[] = [];
      const critical = (name: string) => async () => {
        order.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 50));
        order.push(`${name} out`);
      };
      await Promise.all([withLock(path, critical('a')), withLock(path, critical('b'))]);
      expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
