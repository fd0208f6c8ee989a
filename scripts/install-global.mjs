#!/usr/bin/env node
// `npm run install-global`: packs this clone (`npm pack`: a clean build of dist/) and installs the
// tarball with `npm install -g`, as npm installs any package, but without compiling
// better-sqlite3 a second time: `npm ci` built its native module for this machine's Node a moment
// ago, so the global install runs no install scripts and receives that module. The tarball itself
// stays portable (no binary in it): installed elsewhere (CI, another machine), npm builds the module
// there as usual. When the copied module does not load here, the install rebuilds it (one compile).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const clone = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const say = (line) => process.stderr.write(`install-global: ${line}\n`);

function run(args, opts = {}) {
  const r = spawnSync(npm, args, { cwd: clone, encoding: 'utf8', stdio: opts.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', env: process.env });
  if (r.error) fail(`could not run npm (${r.error.message})`);
  if (r.status !== 0) fail(`\`npm ${args.join(' ')}\` exited ${r.status}`);
  return (r.stdout ?? '').trim();
}

function fail(why) {
  say(`${why}; hermesd was not installed.`);
  process.exit(1);
}

const built = join(clone, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
if (!existsSync(built)) fail(`${built} is missing: run \`npm ci\` in ${clone} first (it builds the native SQLite module)`);

say('packing (a clean build of dist/)…');
const tarball = join(clone, run(['pack', '--silent'], { capture: true }).split('\n').at(-1));
say(`installing ${tarball} globally, without install scripts…`);
run(['install', '-g', '--ignore-scripts', '--no-audit', '--no-fund', tarball]);

const installed = join(run(['root', '-g'], { capture: true }), 'hermesd');
const module = join(installed, 'node_modules', 'better-sqlite3');
if (!existsSync(module)) fail(`npm did not install better-sqlite3 under ${installed}`);
mkdirSync(join(module, 'build', 'Release'), { recursive: true });
copyFileSync(built, join(module, 'build', 'Release', 'better_sqlite3.node'));

const probe = `const D = require(${JSON.stringify(module)}); new D(':memory:').prepare('select 1').get();`;
if (spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore' }).status !== 0) {
  say('the native SQLite module built by `npm ci` does not load in the installed copy; rebuilding it there (one compile)…');
  const r = spawnSync(npm, ['rebuild', 'better-sqlite3'], { cwd: installed, stdio: 'inherit', env: process.env });
  if (r.status !== 0 || spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore' }).status !== 0)
    fail('better-sqlite3 could not be built in the installed copy');
}
say(`installed: ${join(run(['prefix', '-g'], { capture: true }), 'bin', 'hermesd')} (its own copy; the clone is not needed any more)`);
