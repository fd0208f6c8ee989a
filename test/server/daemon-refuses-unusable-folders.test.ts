/**
 * A socket folder or HERMES_HOME hermesd cannot use — under /proc, read-only, a file, a dangling
 * link, a socket path over sun_path — is refused in one sentence naming the folder and the
 * variable that sets it, by every process that would start a daemon: `hermesd start` (exit 2,
 * no daemon spawned), the daemon itself as a hook's client starts it (exit 1, the sentence in
 * daemon.log), a git commit whose hook finds no daemon, and `hermesd mcp` (the sentence as the
 * tool's error). No process is left behind, and none spins: Node's recursive mkdir retried
 * `mkdir /proc/nope` for ever at 100% CPU. Root ignores file modes: as root the read-only
 * folder is a read-only bind mount (a mount namespace of its own); as anyone else, a 0500 folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testProcesses } from '../helpers/agent-clis.js';
import { CLI, REPO_ROOT, commitIn, gitIn, makeEnv, type CliResult, type TestEnv } from '../helpers/env.js';
import { connectMcp, texts } from '../helpers/mcp.js';

/** Far above a refusal's few hundred milliseconds: what a spinning process runs into. */
const BOUND_MS = 20_000;
const DAEMON_ENTRY = join(REPO_ROOT, 'dist', 'daemon', 'main.js');
const asRoot = process.getuid?.() === 0;

type Variable = 'HERMESD_SOCKET_DIR' | 'HERMES_HOME';
type Case = { name: string; variable: Variable; folder: string; says: RegExp; run?: 'read-only' };

let t: TestEnv;
let repo: string;
let scratch: string;
let readOnly: string;

beforeAll(() => {
  t = makeEnv();
  repo = t.repo();
  scratch = join(t.home, '..', 'bad');
  mkdirSync(scratch);
  writeFileSync(join(scratch, 'a-file'), 'x\n');
  symlinkSync(join(scratch, 'nowhere'), join(scratch, 'dangling'));
  readOnly = join(scratch, 'ro');
  mkdirSync(readOnly, { mode: asRoot ? 0o700 : 0o500 });
});
afterAll(async () => {
  await t.cleanup();
});

/** The cases, each folder unique to this run (the processes left are found by the HERMES_HOME they carry). */
function cases(): Case[] {
  const id = `${process.pid}-${Date.now()}`;
  const long = join(scratch, 'x'.repeat(120));
  const perVariable = (variable: Variable): Case[] => [
    { name: 'under /proc', variable, folder: `/proc/hermesd-nope-${id}`, says: /\/proc takes no new folders/ },
    {
      name: 'read-only',
      variable,
      folder: join(readOnly, `${variable}-in`),
      says: asRoot ? /is on a read-only file system/ : /you may not make folders in .* \(EACCES\)/,
      run: 'read-only',
    },
    { name: 'a regular file', variable, folder: join(scratch, 'a-file'), says: /a-file is a file, not a folder/ },
    { name: 'a file above it', variable, folder: join(scratch, 'a-file', 'sub'), says: /a-file is a file, not a folder/ },
    { name: 'a dangling symbolic link', variable, folder: join(scratch, 'dangling'), says: /dangling is a symbolic link to .*nowhere, which does not exist/ },
  ];
  return [
    ...perVariable('HERMESD_SOCKET_DIR'),
    { name: 'a socket path over sun_path', variable: 'HERMESD_SOCKET_DIR', folder: long, says: /over the 107-byte limit of a Unix socket address/ },
    ...perVariable('HERMES_HOME'),
  ];
}

/** `node <args>` with `env`, in a read-only view of the `ro` folder when the case asks (root: a bind mount in a mount namespace of its own). */
function command(c: Case, args: string[]): { file: string; args: string[] } {
  if (c.run !== 'read-only' || !asRoot) return { file: process.execPath, args };
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = `mount --bind ${q(readOnly)} ${q(readOnly)} && mount -o remount,bind,ro ${q(readOnly)} && exec ${[process.execPath, ...args].map(q).join(' ')}`;
  return { file: 'unshare', args: ['-m', '--propagation', 'private', 'sh', '-c', script] };
}

function run(c: Case, args: string[], env: NodeJS.ProcessEnv, cwd = repo): CliResult {
  const cmd = command(c, args);
  const r = spawnSync(cmd.file, cmd.args, { cwd, env: { ...t.env, ...env }, encoding: 'utf8', timeout: BOUND_MS });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

const daemonsOf = (home: string) => testProcesses(home).filter((p) => p.kind === 'daemon');

/** The daemons of `home` still running after a bound (a daemon that said why it cannot start is still exiting when its starter reads that). */
async function daemonsLeft(home: string): Promise<unknown[]> {
  const end = Date.now() + 10_000;
  while (daemonsOf(home).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return daemonsOf(home);
}
const homeOf = (c: Case) => (c.variable === 'HERMES_HOME' ? c.folder : t.home);

describe('an unusable socket folder or HERMES_HOME', () => {
  it('hermesd start: exit 2 within the bound, one sentence naming the folder and its variable, no daemon', { timeout: 120_000 }, async () => {
    for (const c of cases()) {
      const started = Date.now();
      const r = run(c, [CLI, 'start'], { [c.variable]: c.folder });
      const said = `hermesd start with ${c.variable} ${c.name} (${c.folder}): exit ${r.code} after ${Date.now() - started} ms, stderr: ${r.stderr.trim() || '(nothing)'}`;
      expect(r.code, said).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, said).toHaveLength(1);
      expect(lines[0], said).toContain(c.folder);
      expect(lines[0], said).toContain(`Set ${c.variable}`);
      expect(lines[0], said).toMatch(c.says);
      expect(await daemonsLeft(homeOf(c)), `${said}: a daemon was left`).toEqual([]);
    }
  });

  it('the daemon started as a hook starts it: exit 1 within the bound, the sentence in its output (daemon.log)', { timeout: 120_000 }, async () => {
    for (const c of cases()) {
      const r = run(c, [DAEMON_ENTRY, repo], { [c.variable]: c.folder });
      const said = `the daemon with ${c.variable} ${c.name} (${c.folder}): exit ${r.code}, output: ${(r.stdout + r.stderr).trim() || '(nothing)'}`;
      expect(r.code, said).toBe(1);
      expect(r.stderr, said).toContain(`Set ${c.variable}`);
      expect(r.stderr, said).toMatch(c.says);
      expect(await daemonsLeft(homeOf(c)), `${said}: a daemon was left`).toEqual([]);
    }
  });

  it('a commit whose hook finds no daemon: the hook says why, within the bound, and leaves no daemon', async () => {
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['stop'], { cwd: repo });
    writeFileSync(join(repo, 'notes.md'), 'notes\n');
    gitIn(t, repo, 'add', 'notes.md');
    const c = commitIn(t, repo, ['-qm', 'notes'], { HERMESD_SOCKET_DIR: `/proc/hermesd-nope-${process.pid}` });
    const said = `git commit with HERMESD_SOCKET_DIR under /proc: exit ${c.code} after ${c.ms} ms, git said: ${c.out.trim().slice(0, 800)}`;
    expect(c.ms, said).toBeLessThan(BOUND_MS);
    expect(c.out, said).toContain(`The socket folder /proc/hermesd-nope-${process.pid} cannot be used`);
    expect(c.out, `the hook's sentence doubles its punctuation: ${said}`).not.toMatch(/\.[;,]/);
    expect(readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8'), 'daemon.log lacks the sentence').toContain(
      `hermesd daemon failed to start: The socket folder /proc/hermesd-nope-${process.pid} cannot be used`,
    );
    expect(await daemonsLeft(t.home), `${said}: a daemon was left`).toEqual([]);
  }, 90_000);

  it('hermesd mcp: a tool call answers the sentence; the server leaves with its client, no daemon started', async () => {
    const folder = `/proc/hermesd-nope-mcp-${process.pid}`;
    const session = await connectMcp({ ...t, env: { ...t.env, HERMESD_SOCKET_DIR: folder } }, repo);
    try {
      const result = (await session.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'memory', content: 'a fact' } })) as {
        isError?: boolean;
      };
      const text = texts(result).join('\n');
      expect(result.isError, `the memory tool did not fail: ${text}`).toBe(true);
      expect(text).toContain(`The socket folder ${folder} cannot be used`);
      expect(text).toContain('Set HERMESD_SOCKET_DIR');
    } finally {
      await session.close();
    }
    expect(await daemonsLeft(t.home), 'a daemon was left').toEqual([]);
  }, 60_000);
});

/**
 * `hermesd start` with its daemon stopped (SIGSTOP) by `stop`, the body of a preload handed down in
 * NODE_OPTIONS that only the daemon's process acts on (it writes its pid where the test reads
 * it first): what start said, the daemon's pid, and a description of both for failure messages.
 */
async function startWithDaemonStopped(name: string, stop: (stoppedAt: string) => string): Promise<{ r: CliResult; stopped?: number; said: string }> {
  const preload = join(t.home, `${name}.cjs`);
  const stoppedAt = join(t.home, `${name}.pid`);
  writeFileSync(preload, `if ((process.argv[1] || '').endsWith(${JSON.stringify(join('daemon', 'main.js'))})) {\n${stop(stoppedAt)}}\n`);
  const started = Date.now();
  const r: CliResult = await t.cli(['start'], { cwd: repo, timeoutMs: 60_000, env: { NODE_OPTIONS: `--require ${preload}` } });
  const stopped = existsSync(stoppedAt) ? Number(readFileSync(stoppedAt, 'utf8')) : undefined;
  return {
    r,
    stopped,
    said: `hermesd start with its daemon (pid ${stopped}) ${name}: exit ${r.code} after ${Date.now() - started} ms, stderr: ${r.stderr.trim()}`,
  };
}

describe('a daemon that never answers', () => {
  it('hermesd start gives up at its deadline: it exits, says so, and the silent daemon is gone', async () => {
    // The daemon stops itself before any of its code runs, so before it can say anything: a hang of any
    // cause. A test that stopped it from outside raced its start, and lost once the daemon found its work
    // tree without a git process.
    const { r, stopped, said } = await startWithDaemonStopped(
      'silent',
      (stoppedAt) => `  require('fs').writeFileSync(${JSON.stringify(stoppedAt)}, String(process.pid));\n  process.kill(process.pid, 'SIGSTOP');\n`,
    );
    expect(stopped, 'the daemon was never seen to stop it').toBeDefined();
    expect(r.code, said).toBe(3);
    expect(r.stderr, said).toContain('did not answer within 10000 ms of starting');
    expect(r.stderr, said).toContain(`said nothing within 10000 ms; its starter stopped it`);
    expect(await daemonsLeft(t.home), `${said}: the silent daemon was left`).toEqual([]);
  }, 90_000);

  it('hermesd start gives up on its own daemon that says its socket and then answers nothing: it is stopped, not blamed as another', async () => {
    // The daemon stops itself right after it closes its starter's pipe, the socket said: it listens, and answers nothing.
    const { r, stopped, said } = await startWithDaemonStopped(
      'hung-after-its-line',
      (stoppedAt) =>
        `  const fs = require('fs');\n` +
        `  const ready = Number(process.env.HERMESD_READY_FD);\n` +
        `  const close = fs.closeSync;\n` +
        `  fs.closeSync = function (fd) {\n` +
        `    const r = close.apply(this, arguments);\n` +
        `    if (fd === ready) {\n` +
        `      fs.writeFileSync(${JSON.stringify(stoppedAt)}, String(process.pid));\n` +
        `      process.kill(process.pid, 'SIGSTOP');\n` +
        `    }\n` +
        `    return r;\n` +
        `  };\n` +
        `  require('module').syncBuiltinESMExports();\n`,
    );
    expect(stopped, 'the daemon was never seen to say its line and stop').toBeDefined();
    expect(r.code, said).toBe(3);
    expect(r.stderr, said).toContain('did not answer within 10000 ms of starting');
    expect(r.stderr, said).toContain('said its socket but did not answer within 10000 ms; its starter stopped it');
    expect(r.stderr, said).not.toContain('Another hermesd daemon');
    expect(await daemonsLeft(t.home), `${said}: the hung daemon was left`).toEqual([]);
    // The next start takes the dead daemon's lock and socket over.
    const next = await t.cli(['start'], { cwd: repo, timeoutMs: 60_000 });
    expect(next.code, `hermesd start after the hung daemon was stopped: ${next.stderr}`).toBe(0);
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
  }, 120_000);
});

describe('usable folders', () => {
  it('missing ones are made, the socket folder private, and the daemon starts', async () => {
    const socketDir = join(scratch, 'new', 'nested', 's');
    const home = join(scratch, 'new', 'home');
    const r = await t.cli(['start'], { cwd: repo, env: { HERMESD_SOCKET_DIR: socketDir, HERMES_HOME: home }, timeoutMs: BOUND_MS });
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(socketDir).mode & 0o777).toBe(0o700);
    expect(existsSync(home)).toBe(true);
    expect((await t.cli(['stop'], { cwd: repo, env: { HERMESD_SOCKET_DIR: socketDir, HERMES_HOME: home } })).code).toBe(0);
  });
});
