/**
 * A broken install: the daemon's bundle without the chunk of the services a pre-tool-call
 * question does not need (dist/daemon/later-*.js, what Services.loaded() imports — a file lost
 * from an install, an upgrade half done). Such a daemon still judges other agents' tool calls
 * (the config and the judge are all they need), refuses every commit naming the broken install,
 * says it in `hermesd status`, raises no unhandled rejection, and still exits when idle, so the
 * next question starts a daemon of whatever is installed by then.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denied } from '../helpers/agents.js';
import { alive, commitIn, copyInstall, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';
import { claudeWrite, guardedConfig, head, recordedPid } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;
let cli: string;
/** The test's environment with a short idle timeout, for the daemons this install starts. */
let env: NodeJS.ProcessEnv;

const broken = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repo, env, encoding: 'utf8' });

beforeAll(() => {
  t = makeEnv();
  env = { ...t.env, HERMESD_IDLE_TIMEOUT_MS: '1500' };
  cli = copyInstall(join(t.home, '..', 'broken-install'));
  const daemonDir = join(cli, '..', '..', 'daemon');
  const later = readdirSync(daemonDir).filter((f) => /^later-.*\.js$/.test(f));
  expect(later).toHaveLength(1);
  rmSync(join(daemonDir, later[0]!));
  repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/x.ts': 'x\n', '.claude/settings.json': '{}\n' });
  const init = broken('init', '--agents', 'claude');
  expect(init.status, init.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  broken('stop');
  await t?.cleanup();
});

describe('a daemon whose install lost a file', () => {
  it("judges other agents' tool calls, refuses every commit naming the broken install, and says so in status", async () => {
    const w = await claudeWrite(t, repo, 'gen/x.ts', { env });
    expect(denied('claude', w), JSON.stringify(w)).toContain('repository rule "generated"');

    const before = head(repo);
    const c = commitIn(t, repo, ['-qam', 'a clean commit', '--allow-empty'], env);
    expect(c.code).not.toBe(0);
    expect(c.out).toContain("hermesd's install is broken");
    expect(c.out).toContain('Cannot find module');
    expect(head(repo)).toBe(before);

    const status = broken('status');
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/warning +hermesd's install is broken \(Cannot find module .*later-.*\.js/);
    expect(status.stdout).toContain('commits are refused');

    const log = readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8');
    expect(log).toContain('services not loaded');
    expect(log).not.toContain('unhandled rejection');
  }, 60_000);

  it('exits when idle all the same', async () => {
    const pid = recordedPid(repo);
    expect(pid && alive(pid)).toBeTruthy();
    await waitFor(() => !alive(pid!), 30_000, 100);
    expect(readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8')).toMatch(/daemon stopping \{"reason":"idle for/);
  }, 40_000);
});
