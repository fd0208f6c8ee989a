#!/usr/bin/env node
// The secrets rule over whole histories: `node scripts/secrets-history.mjs <clone>…` judges every
// commit of each clone (its first commit's children to HEAD) with `hermesd check --commits` under
// init's default rules (a temp HERMES_HOME, no daemon) and prints each finding and a table line
// per repository: commits, findings, commits with one, seconds. docs/benchmarks.md#secrets-in-real-history.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'hd-history-'));
const env = { ...process.env, HERMES_HOME: join(home, 'h'), HERMESD_SOCKET_DIR: join(home, 's') };
const rows = [];
try {
  for (const clone of process.argv.slice(2).map((p) => resolve(p))) {
    const git = (...args) => execFileSync('git', args, { cwd: clone, encoding: 'utf8' }).trim();
    const first = git('rev-list', '--max-parents=0', 'HEAD').split('\n').at(-1);
    const started = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [cli, 'check', '--commits', `${first}..HEAD`, '--json'], { cwd: clone, env, encoding: 'utf8', maxBuffer: 1 << 28 });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (r.status !== 0 && r.status !== 1) throw new Error(`${clone}: check --commits exited ${r.status}: ${r.stderr}`);
    const v = JSON.parse(r.stdout);
    for (const x of v.violations)
      console.log(`${basename(clone)}  ${x.commit.slice(0, 8)}  ${x.file}:${x.line}  ${/\(([\w-]+: .*)\)$/.exec(x.message)?.[1] ?? x.message}`);
    rows.push(`| ${basename(clone)} | ${v.commits} | ${v.violations.length} | ${new Set(v.violations.map((x) => x.commit)).size} | ${seconds.toFixed(1)} s |`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
console.log('\n| repository | commits judged | findings | commits with one | check --commits |\n|---|---|---|---|---|');
for (const row of rows) console.log(row);
