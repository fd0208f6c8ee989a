/**
 * A bare repository with `hermesd init --server`: pushes from a clone that never ran hermesd
 * init are judged by the installed pre-receive hook, in Node, without a daemon. A key or a
 * protected path is refused and the pusher sees the violation lines; a clean push lands; a push
 * that loosens the rules and breaks the old ones in the same push is refused; the repository's
 * own pre-receive keeps running, and uninstall puts it back byte for byte. Real git, real pushes.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { serverSide } from '../helpers/server.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["gen/**"]
`;
const LOOSER = `rules:
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["gen/**"]
`;
/** The repository's own pre-receive before hermesd: it logs what it was given. */
const OWN_HOOK = '#!/bin/sh\nwhile read old new ref; do echo "own hook: $ref" >> "$(dirname "$0")/../own-hook.log"; done\n';

describe('the pre-receive hook of hermesd init --server', () => {
  let t: TestEnv;
  let server: string;
  let clone: string;

  const { push, commit, serverTip } = serverSide(
    () => t,
    () => ({ server, clone }),
  );

  beforeAll(async () => {
    t = makeEnv();
    // The server's repository starts from a project that already has rules (pushed before hermesd was on the server).
    const seed = t.repo({ '.hermes/config.yaml': RULES, 'gen/api.ts': 'v1\n', 'README.md': '# project\n' });
    server = join(seed, '..', 'server.git');
    gitIn(t, seed, 'clone', '-q', '--bare', seed, server);
    writeFileSync(join(server, 'hooks', 'pre-receive'), OWN_HOOK);
    chmodSync(join(server, 'hooks', 'pre-receive'), 0o755);
    const init = await t.cli(['init', '--server', '--json'], { cwd: server });
    expect(init.code, init.stderr).toBe(0);
    expect(init.json()).toMatchObject({
      hook: join(server, 'hooks', 'pre-receive'),
      chained: join(server, 'hooks', 'pre-receive.before-hermesd'),
      reinstalled: false,
    });
    clone = join(seed, '..', 'clone');
    gitIn(t, seed, 'clone', '-q', server, clone);
    gitIn(t, clone, 'config', 'user.name', 'Pusher');
    gitIn(t, clone, 'config', 'user.email', 'pusher@example.com');
    expect(existsSync(join(clone, '.git', 'hermesd'))).toBe(false); // this clone never ran hermesd init
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('refuses a push holding a key; the pusher sees the commit, file, line, rule and message', () => {
    const before = serverTip();
    const bad = commit({ 'creds.txt': `key = "${KEY}"\n` }, 'add creds');
    const r = push('origin', 'HEAD:main');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('pre-receive hook declined');
    expect(r.err).toMatch(new RegExp(`remote: ${bad.slice(0, 10)}\\s+creds\\.txt:1\\s+no-aws-keys\\s+Never commit credentials\\.`));
    expect(r.err).toContain('push refused');
    expect(serverTip()).toBe(before);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('refuses a change to a protected path', () => {
    const before = serverTip();
    commit({ 'gen/api.ts': 'v2 edited by hand\n' }, 'edit generated');
    const r = push('origin', 'HEAD:main');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/remote: [0-9a-f]{10}\s+gen\/api\.ts:0\s+generated-files\s+Do not edit generated files directly\./);
    expect(serverTip()).toBe(before);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('accepts a clean push, and the repository’s own pre-receive still runs after hermesd', () => {
    const tip = commit({ 'src/app.ts': 'export const ok = 1;\n' }, 'clean work');
    const r = push('origin', 'HEAD:main');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/remote: hermesd: refs\/heads\/main: 1 new commit judged, no rule violations/);
    expect(serverTip()).toBe(tip);
    expect(readFileSync(join(server, 'own-hook.log'), 'utf8')).toContain('own hook: refs/heads/main');
  });

  it('refuses a push that loosens the rules and breaks the old ones in the same push', () => {
    const before = serverTip();
    const loosen = commit({ '.hermes/config.yaml': LOOSER }, 'drop the key rule');
    const bad = commit({ 'creds.txt': `key = "${KEY}"\n` }, 'now add the key');
    const r = push('origin', 'HEAD:main');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(new RegExp(`remote: ${bad.slice(0, 10)}\\s+creds\\.txt:1\\s+no-aws-keys`));
    expect(r.err).toContain(`note: ${loosen.slice(0, 10)} changes .hermes/config.yaml`);
    expect(r.err).toContain(`judged by the rules of .hermes/config.yaml at ${before.slice(0, 10)}`);
    expect(serverTip()).toBe(before);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~2');
  });

  it('judges a new branch by the rules where HEAD is, and lets a deletion through', () => {
    commit({ 'creds.txt': `key = "${KEY}"\n` }, 'key on a branch');
    const r = push('origin', 'HEAD:refs/heads/feature');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('refs/heads/feature: push refused');
    expect(serverTip('refs/heads/feature')).toBe('');
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
    expect(push('origin', 'HEAD:refs/heads/feature').code).toBe(0);
    const del = push('origin', ':refs/heads/feature');
    expect(del.code, del.err).toBe(0);
    expect(serverTip('refs/heads/feature')).toBe('');
  });

  it('hermesd hook update judges one ref the same way (for servers that run update hooks)', () => {
    const before = serverTip();
    const bad = commit({ 'creds.txt': `key = "${KEY}"\n` }, 'key for the update hook');
    // What a server runs from its update hook: the objects are there, no ref names them yet (fetched: a push would meet the pre-receive).
    gitIn(t, clone, 'branch', '-f', 'incoming', bad);
    gitIn(t, server, 'fetch', '-q', clone, 'incoming');
    const r = spawnSync(process.execPath, [CLI, 'hook', 'update', 'refs/heads/main', before, bad], { cwd: server, env: t.env, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/creds\.txt:1\s+no-aws-keys/);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('ran without a daemon, and uninstall puts the repository’s own hook back byte for byte', async () => {
    expect(existsSync(join(server, 'hermesd', 'daemon.json'))).toBe(false);
    expect(existsSync(t.socketDir) ? readdirSync(t.socketDir) : []).toEqual([]);
    const again = await t.cli(['init', '--server', '--json'], { cwd: server });
    expect(again.json()).toMatchObject({ reinstalled: true });
    const un = await t.cli(['init', '--server', '--uninstall', '--json'], { cwd: server });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json()).toMatchObject({ wasInstalled: true, restored: [join(server, 'hooks', 'pre-receive')] });
    expect(readFileSync(join(server, 'hooks', 'pre-receive'), 'utf8')).toBe(OWN_HOOK);
    // Without hermesd, the push that was refused goes through: the refusals above were hermesd's.
    commit({ 'creds.txt': `key = "${KEY}"\n` }, 'key after uninstall');
    expect(push('origin', 'HEAD:main').code).toBe(0);
  });

  it('init --server in a clone says what it is for', async () => {
    const r = await t.cli(['init', '--server'], { cwd: clone });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bare repository');
  });
});
