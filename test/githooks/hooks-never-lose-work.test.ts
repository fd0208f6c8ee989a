import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compare, fingerprint, runTrials } from '../../bench/hooks-trials.js';
import { makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** Trials in the suite (two Node processes each); `node dist/bench/hooks-trials.js 500` runs the full count. */
const TRIALS = 24;

function run(t: TestEnv, cwd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd, env: t.env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

async function waitFor(cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a hook never loses work', () => {
  let t: TestEnv | undefined;
  afterEach(async () => {
    await t?.cleanup();
  });

  it(`randomised trials: partially staged, untracked, binary, deleted, renamed files; daemon, hook or both interrupted at random instants (${TRIALS} trials)`, async () => {
    const tally = await runTrials(TRIALS);
    expect(tally.trials).toBe(TRIALS);
    expect(tally.lostTrials).toEqual([]);
    expect(tally.bytesLost).toBe(0);
    // The daemon was killed in many trials; the hook put the work back every time.
    expect(tally.interrupts['daemon-kill']).toBeGreaterThan(TRIALS / 5);
    expect(tally.manualAfterDaemonKill, 'backups left for a manual restore after trials where only the daemon was killed').toBe(0);
    expect(
      tally.automaticRestores.byHook,
      `no trial had the hook put a backup back itself (interrupts ${JSON.stringify(tally.interrupts)} within ${tally.windowMs} ms of the daemon's start): the restore after a daemon's death went unexercised`,
    ).toBeGreaterThan(0);
  }, 240_000);

  /** A repository whose pre-commit runs a slow check, with staged, unstaged, deleted-from-index and untracked work. */
  async function slowCheckRepo(t: TestEnv): Promise<{ repo: string; before: ReturnType<typeof fingerprint>; stagedBefore: string; pid: number }> {
    const repo = t.repo({ 'a.txt': 'a\n', 'b.bin': '\u0000\u0001', 'c.txt': 'c\n' });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, '.hermes', 'config.yaml'), 'checks:\n  - id: slow\n    run: "sleep 20"\nhooks:\n  pre-commit:\n    checks: [slow]\n');
    await run(t, repo, ['add', '.hermes/config.yaml']);
    await run(t, repo, ['commit', '-qm', 'config', '--no-verify']);
    writeFiles(repo, { 'a.txt': 'a staged\n' });
    await run(t, repo, ['add', 'a.txt']);
    writeFiles(repo, { 'a.txt': 'a staged\nand unstaged\n', 'new.bin': Buffer.from([9, 0, 9]), 'c.txt': 'c unstaged\n' });
    await run(t, repo, ['rm', '-q', '--cached', 'b.bin']);
    const before = fingerprint(repo);
    const stagedBefore = (await run(t, repo, ['ls-files', '--stage'])).out;
    const pid = (await t.cli(['start', '--json'], { cwd: repo })).json().pid as number;
    return { repo, before, stagedBefore, pid };
  }

  async function checkRunning(repo: string): Promise<void> {
    const backups = join(repo, '.git', 'hermesd', 'backups');
    await waitFor(() => existsSync(backups) && readdirSync(backups).some((n) => !n.startsWith('.tmp-')));
    await new Promise((r) => setTimeout(r, 300)); // the check is running on the staged snapshot now
  }

  it('kill -9 of the daemon while a check runs: the hook puts the work back itself before git returns', async () => {
    t = makeEnv();
    const { repo, before, stagedBefore, pid } = await slowCheckRepo(t);
    const committing = run(t, repo, ['commit', '-qm', 'never lands']);
    await checkRunning(repo);
    process.kill(pid, 'SIGKILL');
    const c = await committing;
    expect(c.code).not.toBe(0);
    expect(c.out).toContain('the daemon stopped while the pre-commit hook ran');
    expect(c.out).toContain('the hook restored backup');
    // Nothing waits for a manual restore, and nothing of the user's is lost.
    expect(readdirSync(join(repo, '.git', 'hermesd', 'backups')).filter((n) => !n.startsWith('.'))).toEqual([]);
    const after = fingerprint(repo);
    // git commit itself refreshes the index's stat data before the hook runs, so the index is
    // compared by its entries here (the randomised trials compare its bytes); the files byte by byte.
    expect(compare({ ...before, index: after.index }, after)).toMatchObject({ bytesLost: 0, lost: [], extra: [] });
    expect((await run(t, repo, ['ls-files', '--stage'])).out).toBe(stagedBefore);
    // The next commit just works (a new daemon starts), no restore asked for.
    const notice = await t.cli(['sessions', 'list'], { cwd: repo });
    expect(notice.stderr).not.toContain('interrupted hook left a backup');
  }, 60_000);

  it('kill -9 of the daemon and of the hook together leaves a backup that the next command finds and restores byte for byte', async () => {
    t = makeEnv();
    const { repo, before, stagedBefore, pid } = await slowCheckRepo(t);
    // git in its own process group, so the hook's processes can be killed with it (a closed terminal, a power cut).
    const git = spawn('git', ['commit', '-qm', 'never lands'], { cwd: repo, env: t.env, detached: true, stdio: 'ignore' });
    const gone = new Promise((r) => git.on('close', r));
    await checkRunning(repo);
    process.kill(-git.pid!, 'SIGKILL');
    process.kill(pid, 'SIGKILL');
    await gone;

    const notice = await t.cli(['sessions', 'list'], { cwd: repo });
    expect(notice.stderr).toContain('interrupted hook left a backup');
    expect(notice.stderr).toContain('hermesd hook restore');
    // A commit now waits for the restore instead of judging a work tree that is not the user's.
    const again = await run(t, repo, ['commit', '-qm', 'not yet']);
    expect(again.code).toBe(1);
    expect(again.out).toContain('hermesd hook restore');

    const restored = await t.cli(['hook', 'restore', '--json'], { cwd: repo });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json().safetyId).toEqual(expect.any(String));
    const after = fingerprint(repo);
    expect(compare({ ...before, index: after.index }, after)).toMatchObject({ bytesLost: 0, lost: [] });
    expect((await run(t, repo, ['ls-files', '--stage'])).out).toBe(stagedBefore);
    expect((await t.cli(['hook', 'backups', '--json'], { cwd: repo })).json().backups).toEqual([]);
  }, 60_000);

  it('Ctrl-C of git commit while a check runs puts everything back at once (the daemon sees the hook go away)', async () => {
    t = makeEnv();
    const repo = t.repo({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, '.hermes', 'config.yaml'), 'checks:\n  - id: slow\n    run: "sleep 20"\nhooks:\n  pre-commit:\n    checks: [slow]\n');
    await run(t, repo, ['add', '.hermes/config.yaml']);
    await run(t, repo, ['commit', '-qm', 'config', '--no-verify']);
    writeFiles(repo, { 'a.txt': 'staged\n' });
    await run(t, repo, ['add', 'a.txt']);
    writeFiles(repo, { 'a.txt': 'staged\nunstaged\n', 'untracked.txt': 'u\n' });
    await run(t, repo, ['mv', 'd/b.txt', 'd/renamed.txt']);
    const before = fingerprint(repo);
    await t.cli(['start'], { cwd: repo });

    // A terminal's Ctrl-C: SIGINT to git's whole process group (git, the hook's sh, curl).
    const git = spawn('git', ['commit', '-qm', 'interrupted'], { cwd: repo, env: t.env, detached: true, stdio: 'ignore' });
    const backups = join(repo, '.git', 'hermesd', 'backups');
    await waitFor(() => existsSync(backups) && readdirSync(backups).some((n) => !n.startsWith('.tmp-')));
    await new Promise((r) => setTimeout(r, 300));
    process.kill(-git.pid!, 'SIGINT');
    await waitFor(() => readdirSync(backups).length === 0);
    const after = fingerprint(repo);
    expect(compare({ ...before, index: after.index }, after)).toMatchObject({ bytesLost: 0, lost: [], extra: [] });
  }, 60_000);
});
