/**
 * Falling idle, the daemon makes one full garbage collection the first time, and after that only
 * once its heap grew by 4 MiB (src/server/run-daemon.ts): a commit leaves far less, and a collection
 * after each commit cost more CPU than the commit's own work when commits come seconds apart.
 * Observed with V8's own trace (`--trace-gc`: the collections the daemon asks for are the ones
 * whose reason is "testing"), on a daemon started as the client starts it but for that flag.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IDLE_COLLECT_MS } from '../../src/server/run-daemon.js';
import { makeEnv, REPO_ROOT } from '../helpers/env.js';

/** Past the time after which the daemon counts itself idle. */
const IDLE_WAIT_MS = IDLE_COLLECT_MS + 1_500;

describe('the idle collection', () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('runs when the daemon first falls idle, and not again after commits that grew its heap little', async () => {
    const repo = t.repo({ 'README.md': '# idle\n' });
    expect((await t.cli(['init'], { cwd: repo })).code, 'hermesd init failed').toBe(0);
    const trace = join(t.home, 'daemon-gc.txt');
    const out = openSync(trace, 'w');
    const daemon = spawn(process.execPath, ['--trace-gc', join(REPO_ROOT, 'dist', 'daemon', 'main.js'), repo], {
      cwd: repo,
      env: t.env,
      stdio: ['ignore', out, out],
      detached: true,
    });
    closeSync(out);
    daemon.unref();
    const asked = () =>
      readFileSync(trace, 'utf8')
        .split('\n')
        .filter((l) => /Mark-Compact.*testing/.test(l)).length;
    const waitFor = async (ok: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    };
    await waitFor(
      () => (spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'cli', 'main.js'), 'status'], { cwd: repo, env: t.env }).status ?? 1) === 0,
      20_000,
    );
    const commit = (n: number) => {
      writeFileSync(join(repo, `note${n}.txt`), `note ${n}\n`);
      const r = spawnSync('sh', ['-c', `git add -A && git commit -qm note${n}`], { cwd: repo, env: t.env, encoding: 'utf8' });
      expect(r.status, `commit ${n} through the hooks failed: ${r.stderr}`).toBe(0);
    };
    // The first commit loads the services' code (the heap grows by it): its idle collection may run.
    commit(0);
    await waitFor(() => asked() >= 1, 20_000);
    expect(asked(), `the daemon never collected its garbage when idle (its trace: ${trace})`).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, IDLE_WAIT_MS));
    const before = asked();
    for (let n = 1; n <= 3; n++) {
      commit(n);
      await new Promise((r) => setTimeout(r, IDLE_WAIT_MS));
    }
    expect(asked(), 'the daemon made a full collection after a commit that left its heap almost as it was').toBe(before);
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
  }, 120_000);
});
