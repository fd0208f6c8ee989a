/**
 * A verdict is never lost: every fault between a hook and the daemon is its own outcome, said
 * in words, and none reads as "allowed" for another agent's tool call or a commit the rules
 * refuse — a daemon stopped, killed mid-question, hung, of another protocol, whose pid another
 * process took, whose disk is full, whose config does not load, asked by another user, or
 * whose answer names another question. `hooks.onUnavailable` decides only when no daemon runs
 * and none could be started.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { runHook, type HookRun } from '../helpers/agents.js';
import { alive, CLI, commitIn, makeEnv, REPO_ROOT, waitFor, type TestEnv } from '../helpers/env.js';
import { claudeBash, claudeWrite, commitKey, daemonPid, expectRefused, guardedConfig, head, KEY, recordedPid } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;
let stopped: number[] = [];

/** Bounds with room for a daemon to start on a loaded machine. */
const ROOMY = guardedConfig('agents:\n  timeoutMs: 10000\nhooks:\n  timeoutMs: 10000\n');
/** Short bounds, for the faults that spend them (a daemon that runs but does not answer). */
const SHORT = guardedConfig('agents:\n  timeoutMs: 800\nhooks:\n  timeoutMs: 1500\n');

async function setUp(config = ROOMY): Promise<void> {
  t = makeEnv();
  repo = t.repo({ '.hermes/config.yaml': config, 'gen/api.ts': 'x\n', 'src/app.ts': 'a\n', '.claude/settings.json': '{}\n' });
  const init = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
}

/** A refusal by the rule named, not a fault. */
function refusedByRule(r: HookRun, rule: string): string {
  return expectRefused(r, `repository rule "${rule}"`);
}

afterEach(async () => {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone
    }
  }
  stopped = [];
  await t?.cleanup();
});

describe('a daemon that runs but does not answer', () => {
  beforeEach(() => setUp(SHORT));

  it('a stopped daemon: refused within the bound, every time — no flag shortens the next bound — and judged again once it resumes', async () => {
    const pid = await daemonPid(t, repo);
    expect((await claudeWrite(t, repo, 'src/app.ts')).code).toBe(0);
    const files = readdirSync(join(repo, '.git', 'hermesd')).sort();
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    for (const file of ['src/app.ts', 'gen/api.ts']) {
      const r = await claudeWrite(t, repo, file);
      expectRefused(r, 'did not answer within 800 ms (hung or stopped)');
      // The whole bound, both times: a timeout leaves nothing behind that changes the next question.
      expect(r.ms).toBeGreaterThanOrEqual(800);
    }
    expect(readdirSync(join(repo, '.git', 'hermesd')).sort()).toEqual(files);
    // A commit the daemon cannot judge is stopped, whatever hooks.onUnavailable says: the daemon runs.
    const c = commitKey(t, repo);
    expect(c.moved, c.out).toBe(false);
    expect(c.out).toContain('did not answer within 1500 ms');
    process.kill(pid, 'SIGCONT');
    stopped = [];
    refusedByRule(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
    expect(recordedPid(repo)).toBe(pid);
  });

  it('the post-commit audit always runs: after a hook timed out, a --no-verify commit of a key is reported', async () => {
    const pid = await daemonPid(t, repo);
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    expectRefused(await claudeWrite(t, repo, 'src/app.ts'), 'did not answer');
    process.kill(pid, 'SIGCONT');
    stopped = [];
    spawnSync('sh', ['-c', `printf 'k = "%s"\\n' "$1" > leak.txt && git add leak.txt`, 'sh', KEY], { cwd: repo, env: t.env });
    const r = spawnSync('git', ['commit', '--no-verify', '-qm', 'leak'], { cwd: repo, env: t.env, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('skipped the pre-commit hook');
    expect(r.stderr).toContain('no-aws-keys');
  });
});

describe('faults between a hook and the daemon', () => {
  beforeEach(() => setUp());

  it('a daemon killed while it holds a question: the question is asked again of a new daemon, and refused by the rule', async () => {
    const pid = await daemonPid(t, repo);
    // Stopped, the daemon takes the connection into its queue but reads nothing; killed, it drops it unanswered.
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    const asking = claudeWrite(t, repo, 'gen/api.ts');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(pid, 'SIGKILL');
    const r = await asking;
    refusedByRule(r, 'generated');
    expect(recordedPid(repo)).not.toBe(pid);
    expect(readFileSync(join(repo, 'gen/api.ts'), 'utf8')).toBe('x\n');
  });

  it('a config that does not load is judged with the last valid one, and says so: the Write is refused, the commit of a key is refused', async () => {
    await daemonPid(t, repo);
    refusedByRule(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
    // Merge-conflict markers: not YAML.
    writeFileSync(join(repo, '.hermes/config.yaml'), `<<<<<<< HEAD\n${guardedConfig()}=======\nrules: []\n>>>>>>> theirs\n`);
    expect(refusedByRule(await claudeWrite(t, repo, 'gen/api.ts'), 'generated')).toContain('does not load');
    const c = commitKey(t, repo, 'creds.txt');
    expect(c.moved, c.out).toBe(false);
    // The commit stages the broken config too (git add -A): it waits for the fix.
    expect(c.out).toContain('.hermes/config.yaml');
    expect((await t.cli(['status'], { cwd: repo })).stdout).toMatch(/config/i);
  });

  it('a daemon started while the config does not load judges with the last approved rules', async () => {
    await daemonPid(t, repo);
    await t.cli(['stop'], { cwd: repo });
    writeFileSync(join(repo, '.hermes/config.yaml'), 'rules: [\n');
    expect(refusedByRule(await claudeWrite(t, repo, 'gen/api.ts'), 'generated')).toContain('does not load');
    expectRefused(await claudeBash(t, repo, 'echo hi > gen/api.ts'), 'generated');
  });

  it('a client that goes away mid-request leaves the daemon idle: nothing stays in flight, and it exits when idle', async () => {
    await t.cli(['stop'], { cwd: repo });
    const idle = { HERMESD_IDLE_TIMEOUT_MS: '8000' };
    const started = await t.cli(['start'], { cwd: repo, env: idle });
    expect(started.code, started.stderr).toBe(0);
    const st = await t.cli(['status', '--json'], { cwd: repo });
    const status = st.json();
    // Headers that promise a body, part of it, then gone.
    await new Promise<void>((resolve) => {
      const s = connect(status.socket as string, () => {
        s.write('POST /v1/ask?p=2&q=cut-1&k=claude&n=PreToolUse HTTP/1.0\r\nContent-Length: 1000\r\n\r\n{"tool');
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 100);
      });
    });
    const client = new DaemonClient(status.socket as string);
    let inFlight = -1;
    for (let i = 0; i < 100 && inFlight !== 0; i++) {
      inFlight = (await client.call<{ requestsInFlight: number }>('GET', '/v1/status')).requestsInFlight;
      if (inFlight !== 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(inFlight).toBe(0);
    await waitFor(() => !alive(status.pid as number), 15_000);
    expect(existsSync(join(repo, '.git/hermesd/daemon.json'))).toBe(false);
  });

  it("an answer that names another question is refused, and so is a server that is not hermesd's", async () => {
    await daemonPid(t, repo);
    await t.cli(['stop'], { cwd: repo });
    // A socket at the recorded path that answers like the daemon but for another question.
    const socket = join(t.socketDir, 'fake.sock');
    mkdirSync(t.socketDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(repo, '.git/hermesd/daemon.json'),
      JSON.stringify({ socket, pid: process.pid, version: '0.1.0', root: repo, startedAt: new Date().toISOString() }, null, 2),
    );
    const answer = (id: string) => `HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nhermesd 2 0.1.0 ${process.pid} ${id}\n= 0\n`;
    let reply = answer('not-yours');
    const server: Server = createServer((c) => {
      c.once('data', () => c.end(reply));
    });
    await new Promise<void>((r) => server.listen(socket, r));
    try {
      // No daemon holds the work tree's lock: whatever answers on the socket is not trusted at all.
      expectRefused(await claudeWrite(t, repo, 'src/app.ts'), "no daemon holds this work tree's lock");
      // This process as the lock's holder: what it answers is judged by the protocol.
      const start = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19];
      writeFileSync(join(repo, '.git/hermesd/daemon.lock'), `${process.pid} ${start}`);
      expectRefused(await claudeWrite(t, repo, 'src/app.ts'), 'answered question not-yours, not this one');
      reply = 'HTTP/1.0 200 OK\r\n\r\nwelcome to something else\n';
      expectRefused(await claudeWrite(t, repo, 'src/app.ts'), 'does not start as protocol 2 says');
    } finally {
      server.close();
      rmSync(join(repo, '.git/hermesd/daemon.lock'), { force: true });
    }
  });

  it("a daemon of an older hermesd (no such route) is stopped and this install's daemon answers", async () => {
    await daemonPid(t, repo);
    await t.cli(['stop'], { cwd: repo });
    // What an older daemon does: it has no /v1/ask (404) and stops when asked to.
    const socket = join(t.socketDir, 'old.sock');
    mkdirSync(t.socketDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(repo, '.git/hermesd/daemon.json'),
      JSON.stringify({ socket, pid: process.pid, version: '0.0.9', root: repo, startedAt: new Date().toISOString() }, null, 2),
    );
    // It holds the work tree's lock, as a daemon does (the hooks trust only the lock's holder), and lets go when it stops.
    const lock = join(repo, '.git/hermesd/daemon.lock');
    writeFileSync(lock, `${process.pid} ${readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]}`);
    let shutdowns = 0;
    const server: Server = createServer((c) => {
      c.once('data', (d: Buffer) => {
        if (d.toString().startsWith('POST /v1/shutdown')) {
          shutdowns++;
          c.end('HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"ok":true}');
          server.close();
          rmSync(socket, { force: true });
          rmSync(lock, { force: true });
        } else c.end('HTTP/1.0 404 Not Found\r\ncontent-type: application/json\r\n\r\n{"error":{"code":"not-found","message":"No route"}}');
      });
    });
    await new Promise<void>((r) => server.listen(socket, r));
    const r = await claudeWrite(t, repo, 'gen/api.ts');
    refusedByRule(r, 'generated');
    expect(shutdowns).toBe(1);
    expect(recordedPid(repo)).not.toBe(process.pid);
  });

  it('a client of another protocol makes the daemon stop, and refuses what it cannot have judged', async () => {
    const pid = await daemonPid(t, repo);
    const client3 = join(tmpdir(), `hermesd-client-p3-${process.pid}`);
    const { compileClient } = await import('../../src/hook-client/build.js');
    expect(compileClient(client3, process.env, { protocol: 3, version: '9.9.9' }), 'the client of protocol 3 did not compile').toBeUndefined();
    try {
      const payload = JSON.stringify({
        session_id: 's',
        cwd: repo,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: join(repo, 'src/app.ts'), content: 'x' },
      });
      // The other install's client, with a starter that (here) starts this install's daemon again.
      const start = ['-n', process.execPath, '-d', join(REPO_ROOT, 'dist/daemon/main.js')];
      const r = spawnSync(
        client3,
        ['-r', join(repo, '.git/hermesd'), '-w', repo, '-t', '5000', '-x', '-u', 'allow', '-c', '2', ...start, 'claude', 'PreToolUse'],
        { input: payload, encoding: 'utf8', env: t.env },
      );
      // The daemon it found was asked to stop; the one it started speaks protocol 2 still: refused, never "allowed".
      expectRefused({ code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, ms: 0 }, 'speaks protocol 2, this hook 3 (the daemon this hook started)');
      expect(alive(pid)).toBe(false);
      // That one makes way too, once idle.
      await waitFor(() => recordedPid(repo) === undefined, 10_000);
    } finally {
      rmSync(client3, { force: true });
    }
  });
});

describe('a clone where hermesd is not set up', () => {
  beforeEach(() => setUp());

  it('is not "unavailable": the committed stub does nothing, and says so once, at session start', async () => {
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    // The committed stub, in a clone that never ran hermesd init.
    writeFileSync(join(repo, '.hermes/agent-hook'), readFileSync(join(REPO_ROOT, 'src/hook-client/runners/agent-stub.sh')));
    const payload = {
      session_id: 's1',
      cwd: repo,
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: join(repo, 'gen/api.ts'), content: 'x' },
    };
    const write = await runHook(t, 'sh "$CLAUDE_PROJECT_DIR/.hermes/agent-hook" claude PreToolUse', { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo }, payload });
    expect(write).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const start = spawnSync('sh', ['-c', 'sh "$CLAUDE_PROJECT_DIR/.hermes/agent-hook" claude SessionStart'], {
      cwd: repo,
      env: { ...t.env, CLAUDE_PROJECT_DIR: repo },
      input: '{}',
      encoding: 'utf8',
    });
    expect(start.status).toBe(0);
    expect(start.stdout).toBe('');
    expect(start.stderr).toContain('hermesd: not set up in this clone');
    expect(recordedPid(repo)).toBeUndefined();
  });
});

describe('the daemon and its files', () => {
  beforeEach(() => setUp());

  it('closes what its starter left open, and removes every file it made when it stops', async () => {
    const before = readdirSync(join(repo, '.git/hermesd')).sort();
    const marker = join(tmpdir(), `hermesd-inherited-${process.pid}`);
    writeFileSync(marker, '');
    // A shell holding an extra descriptor (as git and agents do: their pipes) starts the daemon through a hook.
    const r = spawnSync(
      'sh',
      [
        '-c',
        `exec 7>>"${marker}"; exec 3<"${marker}"; echo '{"session_id":"s","cwd":"${repo}","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"${repo}/src/a","content":""}}' | CLAUDE_PROJECT_DIR="${repo}" sh "${repo}/.hermes/agent-hook" claude PreToolUse`,
      ],
      { cwd: repo, env: t.env, encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const pid = recordedPid(repo)!;
    const open = readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    });
    expect(open).not.toContain(marker);
    // Started by the CLI with a descriptor of its own left open: the daemon closes it itself.
    await t.cli(['stop'], { cwd: repo });
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/daemon/main.js'), repo], {
      cwd: repo,
      env: t.env,
      stdio: ['ignore', 'ignore', 'ignore', 'ignore', openSync(marker, 'a')],
      detached: true,
    });
    child.unref();
    await waitFor(() => recordedPid(repo) === child.pid);
    const fds = readdirSync(`/proc/${child.pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${child.pid}/fd/${fd}`);
      } catch {
        return '';
      }
    });
    expect(fds).not.toContain(marker);
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    expect(
      readdirSync(join(repo, '.git/hermesd'))
        .filter((f) => f !== 'daemon.log')
        .sort(),
    ).toEqual(before.filter((f) => f !== 'daemon.log'));
    expect(readdirSync(t.socketDir)).toEqual([]);
    rmSync(marker, { force: true });
  });

  it('a pid another process took after the daemon was killed is never taken for the daemon (in a pid namespace)', async () => {
    // Everything in a pid namespace of its own, where the next pid is ours to choose.
    const script = `
set -e
payload='{"session_id":"s","cwd":"${repo}","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"${repo}/gen/api.ts","content":"x"}}'
ask() { printf '%s' "$payload" | CLAUDE_PROJECT_DIR="${repo}" sh "${repo}/.hermes/agent-hook" claude PreToolUse; }
ask >/dev/null 2>&1 || true
pid=$(sed -n 's/.*"pid": \\([0-9]*\\).*/\\1/p' "${repo}/.git/hermesd/daemon.json")
kill -9 "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
echo $((pid - 1)) > /proc/sys/kernel/ns_last_pid
sleep 30 &
impostor=$!
[ "$impostor" = "$pid" ] || { echo "pid not reused: $impostor vs $pid"; exit 9; }
start=$(date +%s%N)
set +e
ask; code=$?
end=$(date +%s%N)
echo "code=$code ms=$(( (end - start) / 1000000 )) impostor_alive=$(kill -0 $impostor 2>/dev/null && echo yes || echo no)"
kill $impostor
node "${CLI}" stop >/dev/null 2>&1
`;
    const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', script], { cwd: repo, env: t.env, encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout, r.stderr).toMatch(/code=0 ms=\d+ impostor_alive=yes/);
    // Judged by a new daemon, not refused for want of one (the impostor would have held the lock).
    expect(r.stdout).toContain('repository rule');
    expect(r.stdout).toContain('permissionDecision":"deny"');
  });
});

describe('faults of the machine', () => {
  let mount: string | undefined;
  afterEach(() => {
    if (mount) spawnSync('umount', ['-l', mount]);
    mount = undefined;
  });

  it('a full file system under the socket and HERMES_HOME: verdicts are still delivered, a 20 KB Write and a Bash call refused by the rule', async () => {
    t = makeEnv();
    mount = join(t.home, '..', 'full');
    mkdirSync(mount);
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', mount], { encoding: 'utf8' });
    expect(m.status, `mounting a tmpfs needs root: ${m.stderr}`).toBe(0);
    const env = { HERMES_HOME: join(mount, 'home'), HERMESD_SOCKET_DIR: join(mount, 's') };
    repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/api.ts': 'x\n', '.claude/settings.json': '{}\n' });
    Object.assign(t.env, env);
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    await daemonPid(t, repo);
    // Fill what is left. The daemon may be replacing one of its files meanwhile (a rename frees the old file's
    // page after the fill), so fill again until a one-byte write fails.
    const fill = `i=0; while [ $i -lt 20 ]; do i=$((i+1)); dd if=/dev/zero of="${mount}/fill$i" bs=4k 2>/dev/null; echo x 2>/dev/null > "${mount}/more" || exit 0; rm -f "${mount}/more"; done; exit 1`;
    expect(spawnSync('sh', ['-c', fill]).status, 'the tmpfs could not be filled: a one-byte write still succeeds').toBe(0);
    const big = await claudeWrite(t, repo, 'gen/api.ts', { content: 'y'.repeat(20_000) });
    refusedByRule(big, 'generated');
    expectRefused(await claudeBash(t, repo, 'cp /etc/hostname gen/api.ts'), 'generated');
    const c = commitKey(t, repo);
    expect(c.moved, c.out).toBe(false);
    expect(c.out).toContain('no-aws-keys');
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
  });

  it('no daemon can start (its log cannot be opened): a commit is judged in the hook itself, a key refused under hooks.onUnavailable allow', async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': guardedConfig('hooks:\n  onUnavailable: allow\n  timeoutMs: 2000\n'), 'gen/api.ts': 'x\n' });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['stop'], { cwd: repo });
    rmSync(join(repo, '.git/hermesd/daemon.log'), { force: true });
    mkdirSync(join(repo, '.git/hermesd/daemon.log'));
    const c = commitKey(t, repo);
    expect(c.moved, `a key was committed with no daemon able to start: ${c.out}`).toBe(false);
    expect(c.out).toMatch(/judging this commit here, without the daemon/);
    expect(c.out).toContain('no-aws-keys');
    expect(c.out).not.toContain('UNCHECKED');
    // A clean commit goes through, judged here, and says so.
    spawnSync('git', ['rm', '-q', '--cached', 'creds.txt'], { cwd: repo, env: t.env });
    writeFileSync(join(repo, 'notes.md'), 'notes\n');
    spawnSync('git', ['add', 'notes.md'], { cwd: repo, env: t.env });
    const ok = commitIn(t, repo, ['-qm', 'notes']);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/judging this commit here, without the daemon/);
    rmSync(join(repo, '.git/hermesd/daemon.log'), { recursive: true, force: true });
  });

  it("another user's git (sudo git commit) reaches the user's daemon and gets its verdict", async () => {
    t = makeEnv();
    const user = 'nobody';
    const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
    repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/api.ts': 'x\n' });
    // The user's side: the repository, HERMES_HOME and the socket dir are theirs; git trusts them all.
    const base = join(t.home, '..');
    spawnSync('chown', ['-R', `${uid}:${gid}`, base]);
    chmodSync(base, 0o755);
    const trust = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*', HOME: t.home };
    const asUser = (args: string[]) =>
      spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', ...args], { cwd: repo, env: { ...t.env, ...trust }, encoding: 'utf8' });
    const init = asUser([process.execPath, CLI, 'init']);
    expect(init.status, `hermesd init as ${user} failed: ${init.stderr}`).toBe(0);
    const started = asUser([process.execPath, CLI, 'start']);
    expect(started.status, `hermesd start as ${user} failed: ${started.stderr}`).toBe(0);
    const pid = recordedPid(repo)!;
    expect(readFileSync(`/proc/${pid}/status`, 'utf8'), `the daemon (pid ${pid}) does not run as ${user}`).toMatch(new RegExp(`Uid:\\s+${uid}\\b`));
    // root's git, the user's daemon.
    const before = head(repo);
    const r = spawnSync('sh', ['-c', `printf 'k = "%s"\\n' "$1" > creds.txt && git add -A && git commit -qm key`, 'sh', KEY], {
      cwd: repo,
      env: { ...t.env, ...trust },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const said = `root's commit of a key: exit ${r.status}${r.signal ? ` (${r.signal}: the 30 s bound)` : ''}, git said: ${`${r.stdout}${r.stderr}`.trim().slice(0, 600) || '(nothing)'}`;
    expect(r.status, said).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`, said).toContain('no-aws-keys');
    expect(head(repo), `the commit of a key landed: ${said}`).toBe(before);
    expect(recordedPid(repo), `the user's daemon (pid ${pid}) was replaced: ${said}`).toBe(pid);
    expect(asUser([process.execPath, CLI, 'stop']).status, `hermesd stop as ${user} failed`).toBe(0);
  });
});
