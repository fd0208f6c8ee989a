/**
 * The daemon's git processes are started by a small long-lived shell (src/git/launcher.ts), not
 * forked from the daemon: what a caller of git/run.ts gets must be what it got from a process
 * Node started itself — the same bytes out, the same failure, the environment and directory
 * asked for, the bounds kept — and where the launcher cannot take a call, or is gone, the call
 * is started directly. Run in this process through `useGitLauncher`, as the daemon does.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitFailed, gitAsync, gitAsyncTry, gitStart, useGitLauncher } from '../../src/git/run.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'hd-launcher-')));
const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e', GIT_CONFIG_NOSYSTEM: '1' };
let stop: () => void = () => {};
/** A shell command run as the launcher runs git (`bin` is any program): its stdout. */
const sh = (script: string, call: Record<string, unknown> = {}) =>
  gitAsync(['-c', script], { cwd: dir, bin: '/bin/sh', ...call }).then((b) => b.toString('utf8'));
/** The parent of the process a call started, and that parent's command line. */
const parentOf = async () => {
  const ppid = (await sh('echo $PPID')).trim();
  return { ppid: Number(ppid), cmdline: readFileSync(`/proc/${ppid}/cmdline`, 'utf8') };
};
const launcherPid = async () =>
  Number(
    readFileSync(`/proc/${(await parentOf()).ppid}/stat`, 'utf8')
      .split(') ')[1]!
      .split(' ')[1],
  );

beforeAll(async () => {
  execFileSync('git', ['init', '-q'], { cwd: dir, env });
  // In the launcher's own environment with another value: a call's value must replace it.
  process.env.HERMESD_T_CHANGED = 'old value';
  stop = useGitLauncher();
  // The launcher takes calls once it made its FIFOs.
  for (let i = 0; i < 100 && (await parentOf()).ppid === process.pid; i++) await new Promise((r) => setTimeout(r, 10));
});
afterAll(() => {
  stop();
  delete process.env.HERMESD_T_CHANGED;
  rmSync(dir, { recursive: true, force: true });
});

describe('git started by the launcher', () => {
  it('is not a child of this process: its parent is a subshell of the launcher, a child of this process', async () => {
    const { ppid } = await parentOf();
    expect(ppid, 'the call was forked from this process, not from the launcher').not.toBe(process.pid);
    const launcher = await launcherPid();
    expect(readFileSync(`/proc/${launcher}/stat`, 'utf8').split(') ')[1]!.split(' ')[1], "the launcher is not this process's child").toBe(String(process.pid));
  });

  it('gives the same bytes as git started directly: a binary blob of 3 MB', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    writeFileSync(join(dir, 'blob.bin'), bytes);
    const id = execFileSync('git', ['hash-object', '-w', 'blob.bin'], { cwd: dir, env }).toString().trim();
    const out = await gitAsync(['cat-file', 'blob', id], { cwd: dir });
    expect(out.equals(bytes), `the blob read through the launcher differs (${out.length} bytes of ${bytes.length})`).toBe(true);
  });

  it('fails as git started directly fails: its exit code and stderr', async () => {
    const r = await gitAsyncTry(['cat-file', 'blob', 'no-such-object'], { cwd: dir });
    expect(r.status, `exit code: ${r.stderr}`).toBe(128);
    expect(r.stderr).toMatch(/no-such-object/);
    await expect(gitAsync(['rev-parse', '--verify', 'nope'], { cwd: dir })).rejects.toBeInstanceOf(GitFailed);
  });

  it("runs in the call's directory with exactly the call's environment: variables added, changed and removed", async () => {
    const base: NodeJS.ProcessEnv = { ...process.env, HERMESD_T_CHANGED: "new value with 'quotes' and $dollars", HERMESD_T_ADDED: 'added' };
    delete base.HOME;
    const out = await sh('echo "$PWD|${HOME-unset}|$HERMESD_T_CHANGED|$HERMESD_T_ADDED"; pwd -P', { env: base, cwd: join(dir, '.git') });
    expect(out).toBe(`${join(dir, '.git')}|unset|new value with 'quotes' and $dollars|added\n${join(dir, '.git')}\n`);
    // The index a hook names (GIT_INDEX_FILE), through gitEnv.
    const idx = await sh('echo "$GIT_INDEX_FILE"', { indexFile: join(dir, 'other-index') });
    expect(idx.trim()).toBe(join(dir, 'other-index'));
  });

  it('keeps the bounds: a timed-out call is stopped, an aborted one says so', async () => {
    const t0 = Date.now();
    const r = await gitAsyncTry(['-c', 'exec sleep 5'], { cwd: dir, bin: '/bin/sh', timeoutMs: 200 });
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/timed out after 200 ms/);
    expect(Date.now() - t0, 'the call was not stopped at its bound').toBeLessThan(4000);
    const ac = new AbortController();
    const started = gitStart(['-c', 'exec sleep 5'], { cwd: dir, bin: '/bin/sh', signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(started.read(() => {})).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('takes more calls at once than it has FIFOs (the rest start directly), and a call it cannot write as one line', async () => {
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => sh(`echo ${i}`)));
    expect(outs).toEqual(Array.from({ length: 20 }, (_, i) => `${i}\n`));
    const multiline = await gitAsync(['-c', 'printf "%s|" "$0"', 'two\nlines'], { cwd: dir, bin: '/bin/sh' });
    expect(multiline.toString()).toBe('two\nlines|');
  });

  it('once the launcher is gone, a call in flight fails and later calls start directly', async () => {
    const pid = await launcherPid();
    const inFlight = gitAsyncTry(['-c', 'exec sleep 2'], { cwd: dir, bin: '/bin/sh' });
    await new Promise((r) => setTimeout(r, 100));
    process.kill(pid, 'SIGKILL');
    const r = await inFlight;
    expect(r.status, 'a call whose launcher died reported success').not.toBe(0);
    expect(await sh('echo after')).toBe('after\n');
    expect((await parentOf()).ppid, 'a later call did not start directly').toBe(process.pid);
  });
});
