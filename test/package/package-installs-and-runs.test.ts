/**
 * The package a user installs: README's first command (`npm pack` from a clean checkout, then
 * `npm install -g` of the tarball, then `hermesd init && hermesd start` in a repository), run in
 * a non-interactive shell with a fresh npm prefix, then a refused and an accepted commit through
 * the hooks, `status` and `stop` — all through the `hermesd` npm put on PATH.
 *
 * One file, one install: the global install compiles nothing (install-global gives it the native
 * module `npm ci` built), so it is the pack's clean build that takes the time.
 * Isolation: the checkout is copied to a temp dir (packing cleans and rebuilds its dist/, never
 * the one the other tests run), the global prefix and HOME are temp dirs; only npm's cache and
 * npm's own config files are the user's, so nothing already downloaded is downloaded again.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, npmCaCerts, REPO_ROOT, writeFiles, type TestEnv } from '../helpers/env.js';

// Pack (a clean tsc build) plus a global install that compiles better-sqlite3: minutes on a
// shared two-core machine, seconds everywhere else once the step is done.
const INSTALL_TIMEOUT_MS = 12 * 60_000;

type Run = { code: number; out: string };

/** Runs a command to completion without blocking the worker (vitest's timeouts still apply). */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

/** npm's settings as this user has them (registry, CA file, node headers) and the cache they fill. */
function npmSettings(): Record<string, string> {
  const get = (key: string) => execFileSync('npm', ['config', 'get', key], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  return { npm_config_cache: get('cache'), npm_config_userconfig: get('userconfig'), npm_config_globalconfig: get('globalconfig') };
}

/** README's first command, from the first ```sh block after "**1.". */
function readmeFirstCommand(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const m = /\*\*1\.[^\n]*[\s\S]*?```sh\n([^\n]+)\n```/.exec(readme);
  if (!m) throw new Error('README.md has no first command (a ```sh block after "**1.")');
  return m[1]!;
}

describe('the packed tarball installs with npm install -g and runs hermesd in a repository', () => {
  let t: TestEnv;
  let base: string;
  let checkout: string;
  let prefix: string;
  let repo: string;
  let userEnv: NodeJS.ProcessEnv;
  let installed: Run;
  let tarball: string;

  beforeAll(async () => {
    t = makeEnv();
    base = dirname(t.home);
    checkout = join(base, 'checkout');
    prefix = join(base, 'prefix');
    const home = join(base, 'user-home');
    mkdirSync(home);

    // A checkout as git has it (tracked and new files, nothing ignored), with the dependencies
    // `npm ci` installed; plus a stale build output that packing must not ship.
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO_ROOT, env: t.env, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    for (const f of files) if (existsSync(join(REPO_ROOT, f))) cpSync(join(REPO_ROOT, f), join(checkout, f));
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'));
    writeFiles(checkout, { 'dist/src/removed-module/old.js': 'export {};\n' });

    const npm = npmSettings();
    const env: NodeJS.ProcessEnv = {};
    // npm run test exports its own settings (npm_config_prefix among them): none may reach the install.
    for (const [k, v] of Object.entries(t.env)) if (!k.startsWith('npm_') && !k.startsWith('NPM_')) env[k] = v;
    userEnv = {
      ...env,
      ...npm,
      ...npmCaCerts(),
      HOME: home,
      npm_config_prefix: prefix,
      // What the cache holds is used without asking the registry again.
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      // The global bin directory is on PATH, as npm's is for its users.
      PATH: `${join(prefix, 'bin')}:${env.PATH ?? ''}`,
    };

    repo = t.repo({ 'README.md': '# a project\n', 'src/app.js': 'export const x = 1;\n' });
    const command = readmeFirstCommand();
    expect(command.startsWith('npm ci && ')).toBe(true);
    expect(command).toContain('/path/to/your/repo');
    // `npm ci` is what made node_modules (linked above); the rest runs as README has it.
    const rest = command.slice('npm ci && '.length).replaceAll('/path/to/your/repo', `'${repo}'`);
    installed = await run('sh', ['-c', rest], { cwd: checkout, env: userEnv, timeoutMs: INSTALL_TIMEOUT_MS });
    tarball = readdirSync(checkout).find((f) => f.endsWith('.tgz')) ?? '';
  }, INSTALL_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await t?.cleanup();
  });

  const hermesd = (args: string[]) => run('hermesd', args, { cwd: repo, env: userEnv });
  const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, env: userEnv, encoding: 'utf8' });

  it("README's first command packs, installs, inits and starts hermesd from a plain shell", () => {
    expect(installed.code, installed.out).toBe(0);
    expect(installed.out).toMatch(/hermesd hooks installed/);
    expect(installed.out).toMatch(/started: pid \d+/);
    expect(tarball).toMatch(/^hermesd-\d+\.\d+\.\d+\.tgz$/);
    // The hooks run the installed copy, not the checkout it was packed from.
    const runner = readFileSync(join(repo, '.git', 'hermesd', 'hook'), 'utf8');
    expect(runner).toContain(`HERMESD_CLI='${join(prefix, 'lib', 'node_modules', 'hermesd', 'dist', 'cli', 'main.js')}'`);
    expect(existsSync(join(checkout, 'dist', 'src', 'removed-module'))).toBe(false);
  });

  it('the global install compiles nothing: the installed copy has the native module npm ci built, byte for byte', () => {
    const module = (root: string) => readFileSync(join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'));
    const installedCopy = join(prefix, 'lib', 'node_modules', 'hermesd');
    expect(installed.out, 'install-global said it rebuilt the module').not.toContain('rebuilding it there');
    expect(installed.out).not.toMatch(/gyp info|node-gyp rebuild|prebuild-install/);
    expect(module(installedCopy).equals(module(REPO_ROOT)), 'the installed better_sqlite3.node is not the one npm ci built').toBe(true);
    expect(installed.out).toContain(`install-global: installed: ${join(prefix, 'bin', 'hermesd')}`);
  });

  it('the tarball ships the program, its hook client and runners, templates, docs and licence, and no tests, fixtures or benchmarks', () => {
    const entries = execFileSync('tar', ['-tzf', join(checkout, tarball)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((e) => e.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      '.pre-commit-hooks.yaml',
      'src/hook-client/runners/git-hook.sh',
      'src/hook-client/client.c',
      'dist/client/hermesd-client',
      'dist/client/hermesd-spawner',
      'templates/config.yaml',
      'dist/cli/main.js',
      'dist/src/cli/main.js',
      'dist/daemon/main.js',
      'dist/mcp/main.js',
      'dist/mcp/main.cjs',
      'dist/mcp/answers.json',
      'dist/range/range.js',
      'dist/src/guard/git-shim.js',
    ]) {
      expect(entries, f).toContain(f);
    }
    for (const doc of readdirSync(join(REPO_ROOT, 'docs'))) expect(entries).toContain(`docs/${doc}`);
    // The client's source and the runners are what a clone's hooks are built from, and the record of refused writes's
    // source what the daemon builds where the package's build does not load; nothing else of src/.
    const unwanted = entries.filter(
      (e) =>
        (/^(test|bench|scripts|src|dist\/bench|node_modules)\//.test(e) &&
          !/^src\/(hook-client\/(client\.c|runners\/[a-z-]+\.sh)|guard\/refused-writes\.c)$/.test(e)) ||
        e.endsWith('.map') ||
        e.endsWith('.ts') ||
        e.includes('removed-module'),
    );
    expect(unwanted).toEqual([]);
    expect(
      entries.every(
        (e) =>
          /^(dist\/src|dist\/cli|dist\/daemon|dist\/mcp|dist\/range|dist\/client|src\/hook-client|templates|docs)\//.test(e) ||
          e === 'src/guard/refused-writes.c' ||
          ['package.json', 'README.md', 'LICENSE', '.pre-commit-hooks.yaml'].includes(e),
      ),
      entries.join('\n'),
    ).toBe(true);
  });

  it('puts an executable hermesd with a node shebang on PATH, reporting the package version', async () => {
    const bin = join(prefix, 'bin', 'hermesd');
    expect(lstatSync(bin).isSymbolicLink()).toBe(true);
    const target = realpathSync(bin);
    expect(target.startsWith(realpathSync(prefix))).toBe(true);
    expect(statSync(target).mode & 0o111).not.toBe(0);
    expect(readFileSync(target, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const which = spawnSync('sh', ['-c', 'command -v hermesd'], { env: userEnv, encoding: 'utf8' });
    expect(which.stdout.trim()).toBe(bin);
    const version = await hermesd(['--version']);
    expect(version.out.trim()).toBe((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('refuses a commit by the first rule, accepts a clean one, reports status and stops', async () => {
    writeFileSync(join(repo, 'creds.txt'), 'key = "AKIAABCDEFGHIJKLMNOP"\n');
    git('add', 'creds.txt');
    const refused = git('commit', '-m', 'add credentials');
    expect(refused.status, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain('creds.txt:1  no-secrets');
    expect(git('log', '--format=%s', '-1').stdout.trim()).toBe('initial');

    git('rm', '-q', '--cached', 'creds.txt');
    writeFileSync(join(repo, 'src', 'app.js'), 'export const x = 2;\n');
    git('add', '.hermes/config.yaml', 'src/app.js');
    const accepted = git('commit', '-m', 'set up hermesd');
    expect(accepted.status, accepted.stdout + accepted.stderr).toBe(0);
    expect(git('show', '--name-only', '--format=%s', 'HEAD').stdout.split('\n').filter(Boolean)).toEqual([
      'set up hermesd',
      '.hermes/config.yaml',
      'src/app.js',
    ]);

    // The range check of the installed package (its bundle), as CI runs it: a commit past the hook is found.
    writeFileSync(join(repo, 'creds.txt'), 'key = "AKIAABCDEFGHIJKLMNOP"\n');
    git('add', 'creds.txt');
    expect(git('commit', '-q', '--no-verify', '-m', 'past the hook').status).toBe(0);
    const range = await hermesd(['check', '--commits', 'HEAD~1..HEAD']);
    expect(range.code, range.out).toBe(1);
    expect(range.out).toMatch(/creds\.txt:1\s+no-secrets/);
    git('reset', '-q', '--hard', 'HEAD~1');

    const status = await hermesd(['status', '--json']);
    expect(status.code, status.out).toBe(0);
    const s = JSON.parse(status.out) as { pid: number; root: string; hooks: { installed: boolean; active: boolean } };
    expect(s.root).toBe(repo);
    expect(s.hooks).toMatchObject({ installed: true, active: true });

    const stopped = await hermesd(['stop']);
    expect(stopped.code, stopped.out).toBe(0);
    expect(stopped.out).toContain(`stopped (pid ${s.pid})`);
    const after = await hermesd(['status']);
    expect(after.code, after.out).toBe(3);
  });
});
