import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';

describe('daemon lifecycle', () => {
  let t: TestEnv;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('starts from a subdirectory, reports status, and stops removing the socket', async () => {
    const repo = t.repo({ 'src/a/b.txt': 'x\n' });
    const start = await t.cli(['start', '--json'], { cwd: join(repo, 'src', 'a') });
    expect(start.code).toBe(0);
    const started = start.json();
    const status = await t.cli(['status', '--json'], { cwd: repo });
    expect(status.code).toBe(0);
    const s = status.json();
    expect(s).toMatchObject({ pid: started.pid, root: repo, version: expect.any(String), startedAt: expect.any(String) });
    expect(s.socket.startsWith(t.socketDir)).toBe(true);
    expect(statSync(s.socket).mode & 0o777).toBe(0o600);
    expect(statSync(t.socketDir).mode & 0o777).toBe(0o700);
    expect(existsSync(join(repo, '.git', 'hermesd', 'daemon.json'))).toBe(true);

    const again = await t.cli(['start', '--json'], { cwd: repo });
    expect(again.json()).toMatchObject({ pid: started.pid, started: false });

    const stop = await t.cli(['stop'], { cwd: repo });
    expect(stop.code).toBe(0);
    expect(existsSync(s.socket)).toBe(false);
    expect(alive(s.pid)).toBe(false);
    const after = await t.cli(['status'], { cwd: repo });
    expect(after.code).toBe(3);
    expect(after.stderr).toContain('No daemon is running');
  });

  it('four concurrent starts leave exactly one daemon', async () => {
    const repo = t.repo();
    const results = await Promise.all([1, 2, 3, 4].map(() => t.cli(['start', '--json'], { cwd: repo })));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const pids = new Set(results.map((r) => r.json().pid));
    expect(pids.size).toBe(1);
    // The lock names the daemon: its pid, then (where /proc tells) its start time.
    const lock = readFileSync(join(repo, '.git', 'hermesd', 'daemon.lock'), 'utf8')
      .trim()
      .split(' ');
    expect(Number(lock[0])).toBe([...pids][0]);
    expect(Number(lock[1])).toBe(Number(readFileSync(`/proc/${lock[0]}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]));
  });

  it('recovers after kill -9 leaves a stale socket, pid file and lock', async () => {
    const repo = t.repo();
    const first = (await t.cli(['start', '--json'], { cwd: repo })).json();
    process.kill(first.pid, 'SIGKILL');
    await waitFor(() => !alive(first.pid));
    expect(existsSync(first.socket)).toBe(true);
    const second = await t.cli(['status', '--json'], { cwd: repo });
    expect(second.code).toBe(3);
    const restarted = await t.cli(['start', '--json'], { cwd: repo });
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(restarted.json().pid).not.toBe(first.pid);
    expect((await t.cli(['status', '--json'], { cwd: repo })).json().pid).toBe(restarted.json().pid);
  });

  it('never deletes the socket of a live daemon when the lock file was removed', async () => {
    const repo = t.repo();
    const first = (await t.cli(['start', '--json'], { cwd: repo })).json();
    rmSync(join(repo, '.git', 'hermesd', 'daemon.lock'));
    const again = await t.cli(['start', '--json'], { cwd: repo });
    expect(again.json().pid).toBe(first.pid);
    // Even a daemon spawned directly must leave the live socket alone.
    const { spawnSync } = await import('node:child_process');
    const { REPO_ROOT } = await import('../helpers/env.js');
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'dist/src/server/main.js'), repo], { env: t.env, timeout: 10_000 });
    expect(r.status).toBe(0);
    expect((await t.cli(['status', '--json'], { cwd: repo })).json().pid).toBe(first.pid);
  });

  it('SIGTERM goes through the shutdown path and removes the socket', async () => {
    const repo = t.repo();
    const s = (await t.cli(['start', '--json'], { cwd: repo })).json();
    process.kill(s.pid, 'SIGTERM');
    await waitFor(() => !alive(s.pid));
    expect(existsSync(s.socket)).toBe(false);
    expect(readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')).toContain('daemon stopping {"reason":"SIGTERM"}');
  });

  it('exits after the idle timeout', async () => {
    const repo = t.repo();
    const s = (await t.cli(['start', '--json'], { cwd: repo, env: { HERMESD_IDLE_TIMEOUT_MS: '400' } })).json();
    await waitFor(() => !alive(s.pid), 8000);
    expect(existsSync(s.socket)).toBe(false);
  });

  it('exits when its work tree is deleted', async () => {
    const repo = t.repo();
    const s = (await t.cli(['start', '--json'], { cwd: repo })).json();
    rmSync(repo, { recursive: true, force: true });
    await waitFor(() => !alive(s.pid), 8000);
    expect(existsSync(s.socket)).toBe(false);
  });

  it('outside a git repository: a clear error, exit 2', async () => {
    const r = await t.cli(['status'], { cwd: t.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Not inside a git work tree');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a socket path too long for sun_path, naming HERMESD_SOCKET_DIR', async () => {
    const repo = t.repo();
    const r = await t.cli(['start'], { cwd: repo, env: { HERMESD_SOCKET_DIR: join(t.home, 'x'.repeat(120)) } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HERMESD_SOCKET_DIR');
  });

  it('usage errors exit 2 and help exits 0', async () => {
    expect((await t.cli(['no-such-command'])).code).toBe(2);
    const help = await t.cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('doctor');
  });

  it('doctor reports node, sqlite with fts5, socket, inotify and git', async () => {
    const repo = t.repo();
    const r = await t.cli(['doctor', '--json'], { cwd: repo });
    const names = r.json().checks.map((c: { name: string }) => c.name);
    expect(names).toEqual(expect.arrayContaining(['node', 'sqlite', 'fts5', 'socket', 'inotify', 'git']));
    expect(r.json().checks.find((c: { name: string }) => c.name === 'fts5').status).toBe('ok');
  });

  it('logs prints the daemon log', async () => {
    const repo = t.repo();
    await t.cli(['start'], { cwd: repo });
    const r = await t.cli(['logs'], { cwd: repo });
    expect(r.stdout).toContain('daemon started');
    const tail = await t.cli(['logs', '-n', '1'], { cwd: repo });
    expect(tail.stdout.trim().split('\n')).toHaveLength(1);
  });
});
