/**
 * The post-commit hook decides nothing, so git does not wait for it: it returns once its question
 * is written to the daemon's socket, and the audit of a commit that skipped the pre-commit (`--no-verify`) runs
 * after — and still reports the key, on the terminal git ran in (the client's child prints it)
 * and in SessionDB. Proven by order, not by timing: git's own trace2 records when the hook
 * exited, the daemon's log when it finished the audit; a commit of 1,500 files holding a key
 * gives the audit real work. The hook returns once its question is written, before the daemon
 * has read it (a stopped daemon: the kernel holds the question). A notice whose client went away
 * before it was printed (the terminal closed) is carried by the next hook's answer.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROTOCOL } from '../../src/protocol/ask.js';
import { resolvePaths } from '../../src/paths/index.js';
import { VERSION } from '../../src/version.js';
import { makeEnv } from '../helpers/env.js';

const KEY = 'AKIA' + 'ABCDEFGHIJKLMNOP';
const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('the post-commit hook and its audit', () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('git has the hook back before the audit of a --no-verify commit ends, and the audit still reports the key', async () => {
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': CONFIG });
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, `hermesd init failed: ${init.stderr}`).toBe(0);
    const started = await t.cli(['start'], { cwd: repo });
    expect(started.code, `hermesd start failed: ${started.stderr}`).toBe(0);
    const git = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      spawnSync('git', args, { cwd: repo, env: { ...t.env, ...env }, encoding: 'utf8', timeout: 120_000 });
    // A first commit through the hooks, so the daemon has looked at the refs once.
    writeFileSync(join(repo, 'README.md'), '# demo\nmore\n');
    expect(git(['commit', '-qam', 'judged']).status, 'a plain commit through the hooks failed').toBe(0);

    mkdirSync(join(repo, 'keys'));
    for (let i = 0; i < 1500; i++) writeFileSync(join(repo, 'keys', `k${i}.txt`), `line one\nkey = "${KEY}"\nline three ${i}\n`);
    expect(git(['add', '-A']).status).toBe(0);
    const trace = join(t.home, 'trace2.json');
    const commit = git(['commit', '--no-verify', '-qm', 'keys'], { GIT_TRACE2_EVENT: trace });
    expect(commit.status, `git commit --no-verify failed: ${commit.stderr}`).toBe(0);
    // The notice comes to the terminal all the same (git's stderr here is a pipe: read to its end).
    expect(commit.stderr, 'the audit of the --no-verify commit was not reported on stderr').toContain('SKIPPED the pre-commit hook');
    expect(commit.stderr).toContain('[no-aws-keys]');

    const events = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; sid: string; child_id?: number; hook_name?: string; child_class?: string; time: string });
    const top = events[0]!.sid;
    const start = events.find((e) => e.sid === top && e.event === 'child_start' && e.child_class === 'hook' && e.hook_name === 'post-commit');
    expect(start, 'git ran no post-commit hook').toBeDefined();
    const exit = events.find((e) => e.sid === top && e.event === 'child_exit' && e.child_id === start!.child_id)!;
    const logged = readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => / hook post-commit\b/.test(l))
      .at(-1);
    expect(logged, 'the daemon logged no post-commit hook').toBeDefined();
    const auditEnded = Date.parse(logged!.split(' ')[0]!);
    const hookExited = Date.parse(exit.time);
    expect(
      hookExited,
      `the post-commit hook exited at ${exit.time}, after the daemon finished its audit (${logged!.split(' ')[0]}): git waited for the audit`,
    ).toBeLessThan(auditEnded);

    const found = await t.cli(['sessions', 'search', 'skipped pre-commit hook', '--json'], { cwd: repo });
    expect(found.code, found.stderr).toBe(0);
    expect(found.json().results.length, 'the audit left no session in SessionDB').toBeGreaterThan(0);
  }, 180_000);

  it('returns once its question is written, while the daemon has not read it yet (stopped), and the audit reports the key once it runs', async () => {
    // A bound far past this test's wait: a hook that waited for the daemon to take the question would still be waiting.
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': `${CONFIG}hooks:\n  timeoutMs: 600000\n` });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const git = (args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8', timeout: 120_000 });
    writeFileSync(join(repo, 'README.md'), '# demo\nmore\n');
    expect(git(['commit', '-qam', 'judged']).status, 'a plain commit through the hooks failed').toBe(0);
    const pid = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    writeFileSync(join(repo, 'creds.txt'), `key = "${KEY}"\n`);
    expect(git(['add', '-A']).status).toBe(0);
    // The daemon's process stopped: a connection is still taken and a question still written (the
    // kernel holds both), and nothing reads them until it runs again.
    process.kill(pid, 'SIGSTOP');
    let stderr = '';
    const commit = spawn('git', ['commit', '--no-verify', '-qm', 'keys'], { cwd: repo, env: t.env, stdio: ['ignore', 'ignore', 'pipe'] });
    commit.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise((resolve) => commit.on('close', resolve));
    try {
      const exited = await new Promise<number | null | 'waiting'>((resolve) => {
        const waiting = setTimeout(() => resolve('waiting'), 60_000);
        commit.on('exit', (code) => (clearTimeout(waiting), resolve(code)));
      });
      expect(exited, `git commit did not return while the daemon was stopped: its post-commit hook waited for the daemon (${stderr})`).toBe(0);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Running again, the daemon reads the question and the client's child prints the audit (git's stderr closes after it).
    await closed;
    expect(stderr, 'the audit of the --no-verify commit was not reported once the daemon ran again').toContain('SKIPPED the pre-commit hook');
    expect(stderr).toContain('creds.txt');
  }, 180_000);

  it('a notice whose client went away before it came is printed by the next hook', async () => {
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': CONFIG });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const git = (args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8', timeout: 120_000 });
    // A commit no hook saw at all, holding a key.
    writeFileSync(join(repo, 'creds.txt'), `key = "${KEY}"\n`);
    expect(git(['add', '-A']).status).toBe(0);
    expect(git(['-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'unseen']).status).toBe(0);
    // Its post-commit question, asked as the hook client asks it, and the connection closed once the daemon has it.
    const socket = resolvePaths(repo, t.env).socket;
    const body = JSON.stringify({ args: [] });
    const query = `p=${PROTOCOL}&v=${encodeURIComponent(VERSION)}&q=gone-1&k=git&n=post-commit&bound=10000`;
    await new Promise<void>((resolve, reject) => {
      const c = connect(socket, () => c.write(`POST /v1/ask?${query} HTTP/1.0\r\nHost: hermesd\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
      let got = '';
      c.on('data', (d) => {
        got += String(d);
        if (/\r\n\r\nhermesd \d+ /.test(got)) {
          c.destroy();
          resolve();
        }
      });
      c.on('error', reject);
    });
    const log = join(repo, '.git', 'hermesd', 'daemon.log');
    for (let i = 0; i < 200 && !/post-commit notice not delivered/.test(readFileSync(log, 'utf8')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(log, 'utf8'), 'the daemon did not keep the notice its client went away from').toMatch(/post-commit notice not delivered/);
    // The next hook, a plain commit through the hooks, says it.
    writeFileSync(join(repo, 'README.md'), '# demo\nnext\n');
    const next = git(['commit', '-qam', 'next']);
    expect(next.status, `the next commit failed: ${next.stderr}`).toBe(0);
    expect(next.stderr, 'the next hook did not carry the notice whose client went away').toContain('SKIPPED the pre-commit hook');
    expect(next.stderr).toContain('creds.txt');
  }, 180_000);
});
