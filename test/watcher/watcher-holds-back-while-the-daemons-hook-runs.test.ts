/**
 * The watcher asks the hook service which of the daemon's hooks runs (nothing tells it a hook
 * started), and holds back while one does: a pre-commit that checks out the staged snapshot
 * rewrites files that are not edits. Seen through a real daemon: `hermesd status` during a
 * pre-commit whose check runs until the test lets it end says the watcher waits for that hook,
 * an edit made meanwhile is not reported, and after the commit the watcher is ready again and
 * reports it.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

type WatcherStatus = { state?: string; pausedBy?: string };

let t: TestEnv | undefined;

afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** How many times the watcher has reported the authority file changed (its log line). */
async function authorityReports(t: TestEnv, repo: string): Promise<number> {
  const r = await t.cli(['logs'], { cwd: repo });
  return r.stdout.split('\n').filter((l) => l.includes('watcher: change') && l.includes('authority')).length;
}

async function waitUntil(t: TestEnv, repo: string, cond: (w: WatcherStatus) => boolean, failure: string): Promise<void> {
  let w: WatcherStatus = {};
  for (let i = 0; i < 100; i++) {
    w = await watcherOf(t, repo);
    if (cond(w)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${failure} (last watcher status: ${JSON.stringify(w)})`);
}

async function statusOf(t: TestEnv, repo: string): Promise<{ watcher?: WatcherStatus; hooks?: { running?: number } }> {
  const r = await t.cli(['status', '--json'], { cwd: repo });
  if (r.code !== 0) throw new Error(`hermesd status --json failed (${r.code}): ${r.stderr}`);
  return r.json() as { watcher?: WatcherStatus; hooks?: { running?: number } };
}

async function watcherOf(t: TestEnv, repo: string): Promise<WatcherStatus> {
  return (await statusOf(t, repo)).watcher ?? {};
}

describe("the watcher and the daemon's hooks", () => {
  it('holds back while a pre-commit runs, names the hook, and is ready once the commit is done', async () => {
    t = makeEnv();
    const repo = t.repo({ 'a.txt': 'a\n', 'AGENTS.md': 'rules\n' });
    expect((await t.cli(['init'], { cwd: repo })).code, 'hermesd init failed').toBe(0);
    // The check runs until the test lets it end (at most two minutes): the hook lasts as long as
    // the test looks, however loaded the machine.
    const release = join(t.home, 'release-the-check');
    const check = `i=0; while [ ! -e ${release} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done`;
    writeFileSync(
      join(repo, '.hermes', 'config.yaml'),
      `checks:\n  - id: slow\n    run: ${JSON.stringify(check)}\nhooks:\n  pre-commit:\n    checks: [slow]\n`,
    );
    gitIn(t, repo, 'add', '.hermes/config.yaml');
    gitIn(t, repo, 'commit', '-qm', 'config', '--no-verify');
    await waitUntil(t, repo, (w) => w.state === 'ready', 'the watcher never reported ready before the commit');

    writeFileSync(join(repo, 'a.txt'), 'a staged\n');
    gitIn(t, repo, 'add', 'a.txt');
    const commit = new Promise<{ code: number; out: string }>((resolve) => {
      const child = spawn('git', ['commit', '-qm', 'slow'], { cwd: repo, env: t!.env });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code: code ?? -1, out }));
    });
    let done = false;
    void commit.then(() => (done = true));
    let held: number;
    try {
      // The hook is running (status counts it); an edit now is held back, not reported.
      let running = 0;
      for (let i = 0; i < 100 && !done && running === 0; i++) running = (await statusOf(t, repo)).hooks?.running ?? 0;
      expect(done, 'the commit ended before status counted its pre-commit as running').toBe(false);
      expect(running, 'status never counted the pre-commit as running (100 looks)').toBeGreaterThan(0);
      const before = await authorityReports(t, repo);
      writeFileSync(join(repo, 'AGENTS.md'), 'rules, edited while the hook runs\n');
      // git holds index.lock through its hook too: the watcher names the hook, which it asks of the hook service.
      let during: WatcherStatus = {};
      for (let i = 0; i < 100 && !done && during.pausedBy !== 'hook pre-commit'; i++) during = await watcherOf(t, repo);
      expect(done, `the commit ended before the watcher said it waits for the hook (last watcher status: ${JSON.stringify(during)})`).toBe(false);
      expect(during).toMatchObject({ state: 'paused', pausedBy: 'hook pre-commit' });
      held = await authorityReports(t, repo);
      expect(done, 'the check ended before the test let it (the held edit could not be looked at)').toBe(false);
      expect(held, 'the watcher reported an edit made while the pre-commit ran').toBe(before);
    } finally {
      writeFileSync(release, '');
    }

    const result = await commit;
    expect(result.code, `the commit with a slow check failed: ${result.out}`).toBe(0);
    await waitUntil(t, repo, (w) => w.state === 'ready', 'the watcher is not ready after the commit');
    let after = held;
    for (let i = 0; i < 50 && after === held; i++) {
      after = await authorityReports(t, repo);
      if (after === held) await new Promise((r) => setTimeout(r, 100));
    }
    expect(after, 'the edit made during the hook was never reported after it').toBeGreaterThan(held);
  }, 180_000);
});
