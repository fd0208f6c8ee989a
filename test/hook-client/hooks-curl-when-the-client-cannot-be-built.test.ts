/**
 * Where hermesd's client cannot be built (no C compiler), `init` says so, `status` and `doctor`
 * say so, and the hooks ask the daemon with curl: the same protocol, the same verdicts, and the
 * same meaning of every fault — a stopped daemon refuses, a killed one is started again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientPath } from '../../src/paths/index.js';
import { installClient } from '../../src/hook-client/build.js';
import { alive, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';
import { claudeBash, claudeWrite, commitKey, daemonPid, expectRefused, guardedConfig } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;
let stopped: number | undefined;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': guardedConfig('agents:\n  timeoutMs: 2000\nhooks:\n  timeoutMs: 10000\n'),
    'gen/api.ts': 'x\n',
    '.claude/settings.json': '{}\n',
  });
  expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
  // What init leaves where no compiler is found and the package brought no client.
  const out = clientPath(join(repo, '.git'));
  const noBuild = mkdtempSync(join(tmpdir(), 'hd-nobuild-'));
  const r = installClient(out, { ...process.env, HERMESD_CC: join(noBuild, 'no-such-cc') }, join(noBuild, 'no-prebuilt'));
  rmSync(noBuild, { recursive: true, force: true });
  expect(r).toMatchObject({ built: false });
  expect(existsSync(out)).toBe(false);
});

afterAll(async () => {
  if (stopped) process.kill(stopped, 'SIGCONT');
  await t?.cleanup();
});

describe('hooks without the client', () => {
  it('init records why, and status and doctor say the hooks use curl', async () => {
    const why = readFileSync(`${clientPath(join(repo, '.git'))}.error`, 'utf8');
    expect(why).toContain('no C compiler');
    await daemonPid(t, repo);
    const status = await t.cli(['status'], { cwd: repo });
    expect(status.stdout + status.stderr).toContain('hook client: not built here');
    const doctor = await t.cli(['doctor'], { cwd: repo });
    expect(doctor.stdout).toMatch(/hook client.*not built.*curl/);
  });

  it('judges through curl: a protected Write and a shell write refused, an allowed Write silent, a commit of a key refused', async () => {
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    expectRefused(await claudeBash(t, repo, 'echo x > gen/api.ts'), 'generated');
    expect(await claudeWrite(t, repo, 'src/app.ts')).toMatchObject({ code: 0, stdout: '' });
    const c = commitKey(t, repo);
    expect(c.moved, c.out).toBe(false);
    expect(c.out).toContain('no-aws-keys');
    writeFileSync(join(repo, 'creds.txt'), 'clean\n');
    spawnSync('git', ['add', '-A'], { cwd: repo, env: t.env });
    expect(spawnSync('git', ['commit', '-qm', 'clean'], { cwd: repo, env: t.env }).status).toBe(0);
  });

  it("a listener at the daemon's socket path that is not the lock's holder is a fault, never an allow", async () => {
    const pid = await daemonPid(t, repo);
    const socket = (await t.cli(['status', '--json'], { cwd: repo })).json().socket as string;
    // A server answering "allowed" to every question, where the daemon's socket was.
    const { createServer } = await import('node:net');
    rmSync(socket, { force: true });
    const fake = createServer((c) =>
      c.once('data', (d: Buffer) => c.end(`HTTP/1.0 200 OK\r\n\r\nhermesd 2 0 ${process.pid} ${/[?&]q=([^& ]+)/.exec(d.toString())?.[1] ?? 'x'}\n= 0\n`)),
    );
    await new Promise<void>((r) => fake.listen(socket, r));
    try {
      expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), "is not served by the daemon that holds this work tree's lock");
    } finally {
      fake.close();
      process.kill(pid, 'SIGKILL');
      await waitFor(() => !alive(pid) && !existsSync(`/proc/${pid}`));
    }
  });

  it('a stopped daemon refuses within the bound; a killed one is started again and judges', async () => {
    const pid = await daemonPid(t, repo);
    process.kill(pid, 'SIGSTOP');
    stopped = pid;
    expectRefused(await claudeWrite(t, repo, 'src/app.ts'), 'did not answer within 2000 ms');
    process.kill(pid, 'SIGKILL');
    stopped = undefined;
    // Gone, not only its main thread: a killed process shows as a zombie while its other threads
    // still exit, and until the last one does its socket still takes connections (which are then
    // reset: the hook says the answer was cut off). /proc/<pid> goes once all of it is reaped.
    await waitFor(() => !alive(pid) && !existsSync(`/proc/${pid}`));
    const again = await claudeWrite(t, repo, 'gen/api.ts');
    // Should it fail, the daemon log says what the new daemon did with the question.
    const log = () => readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8').split('\n').slice(-25).join('\n');
    expect(again.stdout + again.stderr, log()).toContain('repository rule \\"generated\\"');
    expectRefused(again, 'repository rule "generated"');
  });
});
