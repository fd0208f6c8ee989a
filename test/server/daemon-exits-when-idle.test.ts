/**
 * An idle daemon exits (daemon.idleTimeoutMinutes; HERMESD_IDLE_TIMEOUT_MS wins) and leaves
 * nothing behind; the next question starts a new one, which judges it. An open event stream
 * is not work: its client reconnects to the next daemon. A config that still sets the retired
 * daemon.hibernateAfterMinutes loads, and status says the key does nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';
import { claudeWrite, expectRefused, guardedConfig, recordedPid } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;
const IDLE = { HERMESD_IDLE_TIMEOUT_MS: '2500' };

beforeEach(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': guardedConfig('agents:\n  timeoutMs: 10000\ndaemon:\n  hibernateAfterMinutes: 10\n'),
    'gen/api.ts': 'x\n',
    '.claude/settings.json': '{}\n',
  });
  expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
});
afterEach(async () => t.cleanup());

describe('an idle daemon', () => {
  it('exits, removes its files, and the next question starts one that judges it', async () => {
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts', { env: IDLE }), 'generated');
    const pid = recordedPid(repo)!;
    expect(alive(pid)).toBe(true);
    const status = (await t.cli(['status', '--json'], { cwd: repo })).json();
    expect(status.warnings.join('\n')).toContain('daemon.hibernateAfterMinutes no longer does anything');
    await waitFor(() => !alive(pid), 20_000);
    // It collected its garbage when it fell idle (2 s in, V8's collector switched on at run time) without an error.
    expect(readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')).not.toMatch(/uncaught|unhandled/);
    expect(existsSync(join(repo, '.git/hermesd/daemon.json'))).toBe(false);
    expect(existsSync(join(repo, '.git/hermesd/daemon.lock'))).toBe(false);
    expect(readdirSync(t.socketDir)).toEqual([]);
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts', { env: IDLE }), 'repository rule "generated"');
    expect(recordedPid(repo)).not.toBe(pid);
  });

  it('an open event stream is not work: the daemon exits when idle, and the stream ends', async () => {
    await claudeWrite(t, repo, 'src/a.ts', { env: IDLE });
    const pid = recordedPid(repo)!;
    const socket = (await t.cli(['status', '--json'], { cwd: repo })).json().socket as string;
    let ended = false;
    const stream = request({ socketPath: socket, path: '/v1/events?client=test', method: 'GET' });
    stream.on('response', (res) => {
      res.resume();
      res.on('close', () => (ended = true));
    });
    stream.on('error', () => (ended = true));
    stream.end();
    await waitFor(() => !alive(pid), 20_000);
    await waitFor(() => ended, 5_000);
  });
});
