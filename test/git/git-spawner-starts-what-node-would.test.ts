/**
 * The daemon starts its git processes through a small helper (src/git/spawner.c) instead of
 * forking itself. Whatever a call asks — its folder, environment, index, input, bounds — the
 * helper's process must do and answer what the one Node starts does: the same output, status
 * and errors, large input and output at once without a stall, many calls at a time; a helper
 * that stops fails only what it held, and Node starts the next. A real daemon runs its git
 * through the helper, and leaves none behind when it stops or is killed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GitFailed, gitAsync, gitAsyncTry, gitStart, type GitCall } from '../../src/git/run.js';
import { PREBUILT_SPAWNER, useSpawner } from '../../src/git/spawner.js';
import { childrenNamed, spawnersOf } from '../../bench/idle.js';
import { compileC } from '../../src/hook-client/build.js';
import { alive, makeEnv, REPO_ROOT, waitFor, type TestEnv } from '../helpers/env.js';
import { guardedConfig, KEY, recordedPid } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;

/** Runs `act` once with Node starting git and once with the helper; both answers. */
async function both<T>(act: () => Promise<T>): Promise<{ node: T; helper: T }> {
  useSpawner('/nonexistent/hermesd-spawner');
  const node = await act();
  expect(useSpawner(), 'the spawner was not built by npm run build').toBeUndefined();
  const helper = await act();
  return { node, helper };
}

const call = (extra: Partial<GitCall> = {}): GitCall => ({ cwd: repo, env: t.env, ...extra });
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (err: unknown) => ({ error: err instanceof GitFailed ? { code: err.code, stderr: err.stderr } : { code: (err as NodeJS.ErrnoException).code } }),
  );

beforeAll(() => {
  t = makeEnv();
  repo = t.repo({ 'src/a.ts': 'a\n', 'docs/b.md': 'b\n' });
  expect(existsSync(PREBUILT_SPAWNER), `npm run build did not build the spawner (${PREBUILT_SPAWNER})`).toBe(true);
});
afterEach(() => void useSpawner('/nonexistent/hermesd-spawner'));
afterAll(() => t.cleanup());

describe("the spawner's git is Node's git", () => {
  it('the same output in the folder, environment and index asked for', async () => {
    const r = await both(async () => ({
      head: (await gitAsync(['rev-parse', 'HEAD'], call())).toString(),
      prefix: (await gitAsync(['rev-parse', '--show-prefix'], call({ cwd: join(repo, 'src') }))).toString(),
      files: (await gitAsync(['ls-files'], call())).toString(),
      // Another index: the environment gitEnv builds from it reaches git.
      otherIndex: (await gitAsyncTry(['ls-files'], { cwd: repo, indexFile: join(repo, '.git', 'no-such-index') })).stdout,
      // The date too: an ident read a second later would differ otherwise.
      env: (
        await gitAsync(
          ['var', 'GIT_AUTHOR_IDENT'],
          call({ env: { ...t.env, GIT_AUTHOR_NAME: 'Spawned Name', GIT_AUTHOR_EMAIL: 's@e', GIT_AUTHOR_DATE: '@1700000000 +0000' } }),
        )
      ).toString(),
    }));
    expect(r.helper).toEqual(r.node);
    expect(r.helper.prefix).toBe('src/\n');
    expect(r.helper.otherIndex).toBe('');
    expect(r.helper.env).toBe('Spawned Name <s@e> 1700000000 +0000\n');
  });

  it('the same status and error for a failing git, a missing program and a NUL in an argument', async () => {
    const r = await both(async () => ({
      failed: await settle(gitAsync(['rev-parse', '--verify', 'no-such-ref'], call())),
      tried: await gitAsyncTry(['rev-parse', '--verify', 'no-such-ref'], call()),
      missing: await settle(gitAsync(['--version'], call({ bin: join(repo, 'no-such-git') }))),
      nul: await settle(Promise.resolve().then(() => gitAsync(['rev-parse', 'HEAD\0--all'], call()))),
    }));
    expect(r.helper).toEqual(r.node);
    expect(r.helper.failed).toMatchObject({ error: { code: 128 } });
    expect(r.helper.missing).toEqual({ error: { code: 'ENOENT' } });
    expect(r.helper.nul).toEqual({ error: { code: 'ERR_INVALID_ARG_VALUE' } });
  });

  it('input and output of megabytes at once, without a stall', async () => {
    const input = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < input.length; i++) input[i] = 97 + (i % 26);
    const r = await both(async () => ({
      // cat writes back what it reads: its output fills the pipe while its input is still being written.
      echoed: await gitAsync([], call({ bin: '/bin/cat', input })),
      hashed: (await gitAsync(['hash-object', '--stdin'], call({ input }))).toString(),
    }));
    expect(r.helper.echoed.equals(input), 'the helper passed back other bytes than its input').toBe(true);
    expect(r.helper.hashed).toBe(r.node.hashed);
  });

  it('a hundred calls at a time, each its own answer', async () => {
    const r = await both(() =>
      Promise.all(Array.from({ length: 100 }, (_, i) => gitAsync(['hash-object', '--stdin'], call({ input: `blob ${i}\n` })).then(String))),
    );
    expect(r.helper).toEqual(r.node);
    expect(new Set(r.helper).size).toBe(100);
  });

  it('a timeout, an abort and a stop end the process, as with Node', async () => {
    const r = await both(async () => {
      const timedOut = await settle(gitAsync(['30'], call({ bin: '/bin/sleep', timeoutMs: 100 })));
      const controller = new AbortController();
      const aborted = gitAsync(['30'], call({ bin: '/bin/sleep', signal: controller.signal }));
      setTimeout(() => controller.abort(), 100);
      const abort = await settle(aborted);
      const started = gitStart(['30'], call({ bin: '/bin/sleep' }));
      setTimeout(() => started.stop(), 100);
      const stopped = await settle(started.read(() => undefined));
      return { timedOut, aborted: 'error' in abort, stopped };
    });
    expect(r.helper).toEqual(r.node);
    expect(r.helper.timedOut).toEqual({ error: { code: null, stderr: 'timed out after 100 ms' } });
    expect(r.helper.aborted).toBe(true);
  });

  it('a helper that cannot run here, ends before it answers or speaks another version: Node starts every call, and none fails', async () => {
    const foreign = join(t.home, 'foreign-spawner');
    writeFileSync(foreign, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x99, 0x99]), { mode: 0o755 });
    const silent = join(t.home, 'silent-spawner');
    writeFileSync(silent, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    // Another install's helper, speaking the next version of the frames (an upgrade under a running daemon).
    const newer = join(t.home, 'newer-spawner');
    expect(compileC(join(REPO_ROOT, 'src', 'git', 'spawner.c'), newer, ['-O2', '-DPROTOCOL="2"'])).toBeUndefined();
    expect(spawnSync(newer, ['--protocol=1'], { input: '' }).status, 'a helper of another version took a daemon of this one').toBe(2);
    for (const helper of [foreign, silent, newer]) {
      expect(useSpawner(helper)).toBeUndefined();
      const answers = await Promise.all(Array.from({ length: 20 }, () => gitAsyncTry(['rev-parse', 'HEAD'], call())));
      expect(
        answers.map((a) => a.status),
        `calls made while the helper at ${helper} could not answer`,
      ).toEqual(Array(20).fill(0));
      expect((await gitAsync(['rev-parse', 'HEAD'], call())).toString()).toBe(answers[0]!.stdout);
    }
  });

  it('a helper that stops fails what it held; Node starts the next call', async () => {
    expect(useSpawner()).toBeUndefined();
    // Held: the helper started it (its output came back through the helper, after the helper's word that it started).
    const held = gitStart(['-c', 'echo started; exec sleep 10'], call({ bin: '/bin/sh' }));
    let seen = '';
    const ended = settle(held.read((c) => void (seen += c.toString())));
    await waitFor(() => seen.includes('started'), 10_000).catch(() => undefined);
    expect(seen, 'the held call printed nothing through its helper').toContain('started');
    const helper = spawnersOf(process.pid).find((h) => childrenNamed(h, 'sleep').length > 0);
    expect(helper, 'no spawner under this process runs the held call').toBeDefined();
    process.kill(helper!, 'SIGKILL');
    expect(await ended, 'the call the helper held when it was killed did not fail as a stopped git (no status)').toMatchObject({ error: { code: null } });
    expect(seen, 'the held call was started again by Node').toBe('started\n');
    expect((await gitAsync(['rev-parse', 'HEAD'], call())).toString()).toMatch(/^[0-9a-f]{40}\n$/);
  });

  it("a call the helper said it started is never started again by Node, though the helper's last words come after its exit", async () => {
    // A helper that ends at once, its word that call 1 started written a moment later by a process that holds its output.
    const late = join(t.home, 'late-spawner');
    writeFileSync(late, "#!/bin/sh\n(sleep 0.3; printf '\\011\\000\\000\\000P\\001\\000\\000\\000\\001\\000\\000\\000') &\nexit 0\n", { mode: 0o755 });
    expect(useSpawner(late)).toBeUndefined();
    const ran = join(t.home, 'ran-by-node.txt');
    const r = await gitAsyncTry(['-c', `echo ran >> '${ran}'`], call({ bin: '/bin/sh' }));
    expect(existsSync(ran), 'a call its helper said it had started was run again by Node').toBe(false);
    expect(r.status, 'the call whose helper ended after starting it did not fail').not.toBe(0);
  });
});

describe("the daemon's git", () => {
  it('goes through its helper: a key is refused at commit; the helper goes with the daemon, stopped or killed', async () => {
    const d = t.repo({ '.hermes/config.yaml': guardedConfig('  - id: no-secrets\n    message: Never commit credentials.\n    secrets: true\n') });
    expect((await t.cli(['init'], { cwd: d })).code).toBe(0);
    expect((await t.cli(['start'], { cwd: d })).code).toBe(0);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: d, env: t.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = recordedPid(d)!;
    expect(pid, 'no daemon recorded after init').toBeGreaterThan(0);
    await waitFor(() => spawnersOf(pid).length === 1, 10_000).catch(() => {
      throw new Error(`the daemon (pid ${pid}) runs no spawner: ${readFileSync(join(d, '.git', 'hermesd', 'daemon.log'), 'utf8').slice(-1500)}`);
    });
    const [helper] = spawnersOf(pid);
    /** Stages a key (an index write the daemon judges ahead, with its git diff) and commits it: what git printed. */
    const commitKey = (line: string, message: string) => {
      writeFileSync(join(d, 'config.ts'), `export const key = '${KEY}'; // ${line}\n`);
      git('add', 'config.ts');
      try {
        git('commit', '-qm', message);
        return 'the commit went through';
      } catch (err) {
        return String((err as { stderr?: string }).stderr);
      }
    };
    git('commit', '-qam', 'hermes init', '--allow-empty');
    expect(commitKey('first', 'add a key'), 'the commit holding a key was not refused').toContain('no-secrets');
    expect(spawnersOf(pid), 'the daemon started another helper').toEqual([helper]);
    // The helper killed under the daemon: its git is started by Node, and the key is refused all the same.
    process.kill(helper!, 'SIGKILL');
    await waitFor(() => !alive(helper!) || spawnersOf(pid).length === 0, 10_000);
    expect(commitKey('again', 'add a key, the helper gone'), 'with its helper killed, the daemon let a commit holding a key through').toContain('no-secrets');
    expect((await t.cli(['stop'], { cwd: d })).code).toBe(0);
    await waitFor(() => !alive(helper!), 10_000).catch(() => {
      throw new Error(`the spawner (pid ${helper}) outlived its stopped daemon`);
    });
    // Killed: the helper reads the end of its input and goes.
    expect((await t.cli(['start'], { cwd: d })).code).toBe(0);
    const next = recordedPid(d)!;
    await waitFor(() => spawnersOf(next).length === 1, 10_000);
    const [nextHelper] = spawnersOf(next);
    process.kill(next, 'SIGKILL');
    await waitFor(() => !alive(nextHelper!), 10_000).catch(() => {
      throw new Error(`the spawner (pid ${nextHelper}) outlived its killed daemon`);
    });
  });
});
