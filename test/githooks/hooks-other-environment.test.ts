/**
 * A commit from a shell or GUI whose HERMESD_SOCKET_DIR or XDG_RUNTIME_DIR differs from the
 * daemon's: the hooks, the CLI and `start` find the live daemon from the repository
 * (<git-dir>/hermesd/daemon.json and the lock owner), judge the commit through it (no second
 * daemon, no wait, nothing unchecked), and `status` says where the two environments differ.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive, commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('hooks and the CLI find the daemon from the repository, whatever the environment', () => {
  let t: TestEnv;
  let repo: string;
  let pid: number;
  let socket: string;
  let otherEnvs: Array<[string, NodeJS.ProcessEnv]>;

  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ 'a.txt': 'a\n', '.hermes/config.yaml': RULES });
    const base = dirname(t.home);
    const runtime = join(base, 'xdg-runtime');
    mkdirSync(runtime, { mode: 0o700 });
    otherEnvs = [
      ['another HERMESD_SOCKET_DIR', { HERMESD_SOCKET_DIR: join(base, 'other-sockets') }],
      ['XDG_RUNTIME_DIR instead of HERMESD_SOCKET_DIR', { HERMESD_SOCKET_DIR: '', XDG_RUNTIME_DIR: runtime }],
    ];
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    const started = (await t.cli(['start', '--json'], { cwd: repo })).json();
    pid = started.pid;
    socket = started.socket;
    expect(socket.startsWith(t.socketDir)).toBe(true);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const hookLines = () =>
    readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => / hook pre-commit /.test(l));

  it('commits from another environment are judged by the running daemon over its recorded socket', async () => {
    let n = 0;
    for (const [label, env] of otherEnvs) {
      const before = hookLines().length;
      writeFiles(repo, { [`clean${n}.txt`]: 'fine\n' });
      gitIn(t, repo, 'add', `clean${n}.txt`);
      const ok = commitIn(t, repo, ['-qm', `clean ${n}`], env);
      expect(ok.code, `${label}: ${ok.out}`).toBe(0);
      expect(ok.out, label).not.toMatch(/did not start|unchecked|did not answer/);

      writeFiles(repo, { [`leak${n}.txt`]: 'AKIAABCDEFGHIJKLMNOP\n' });
      gitIn(t, repo, 'add', `leak${n}.txt`);
      const refused = commitIn(t, repo, ['-qm', `leak ${n}`], env);
      expect(refused.code, label).toBe(1);
      expect(refused.out, label).toContain(`leak${n}.txt:1`);
      gitIn(t, repo, 'rm', '-q', '--cached', `leak${n}.txt`);
      // Both went through hermesd's client to the one daemon (it found the socket in daemon.json).
      const lines = hookLines().slice(before);
      expect(lines.length, label).toBe(2);
      for (const l of lines) expect(l, label).toContain('"via":"client"');
      expect(alive(pid)).toBe(true);
      n++;
    }
    const status = await t.cli(['status', '--json'], { cwd: repo });
    expect(status.json().pid).toBe(pid);
  }, 60_000);

  it('status, start and stop from another environment reach the same daemon; status says how the environments differ', async () => {
    const [, env] = otherEnvs[0]!;
    const status = await t.cli(['status'], { cwd: repo, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`pid ${pid}`);
    expect(status.stdout).toContain(`the daemon listens on ${socket}`);
    expect(status.stdout).toContain('HERMESD_SOCKET_DIR');

    const start = await t.cli(['start', '--json'], { cwd: repo, env, timeoutMs: 8_000 });
    expect(start.code, start.stderr).toBe(0);
    expect(start.json()).toMatchObject({ pid, started: false, socket });

    const [, xdg] = otherEnvs[1]!;
    const sessions = await t.cli(['sessions', 'list'], { cwd: repo, env: xdg });
    expect(sessions.code, sessions.stderr).toBe(0);

    const stop = await t.cli(['stop'], { cwd: repo, env });
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`stopped (pid ${pid})`);
    expect(alive(pid)).toBe(false);
  }, 60_000);
});
