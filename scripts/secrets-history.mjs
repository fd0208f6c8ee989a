#!/usr/bin/env node
/**
 * The secrets rule on the whole history of real repositories: every commit judged with the rules
 * `hermesd init` writes (the repositories have no .hermes/config.yaml, so check --commits uses
 * those defaults), the way CI judges a pull request — by the built CLI,
 * `hermesd check --commits <root>..<tip> --json`, in a fresh clone, with HERMES_HOME and
 * HERMESD_SOCKET_DIR in temporary folders. Prints each finding (rule, file, line, commit,
 * masked value) for a person to judge true or false, and the wall time of the check (median of
 * --runs). Nothing of the repositories is copied into this one.
 *
 *   npm run build
 *   node scripts/secrets-history.mjs [--cli dist/cli/main.js] [--runs 3] [--json out.json] <repository>...
 *
 * A repository is a local clone or a bare git directory (docs/benchmarks.md names the
 * repositories and commits measured). The root commit is the range's base, so it is not judged.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const cli = resolve(option('--cli', join(root, 'dist/cli/main.js')));
const runs = Number(option('--runs', '3'));
const jsonOut = option('--json', undefined);
if (args.length === 0 || !Number.isInteger(runs) || runs < 1) {
  process.stderr.write('usage: node scripts/secrets-history.mjs [--cli dist/cli/main.js] [--runs 3] [--json out.json] <repository>...\n');
  process.exit(2);
}

const git = (cwd, ...a) => execFileSync('git', a, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).trim();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = [];
for (const source of args) {
  const scratch = mkdtempSync(join(tmpdir(), 'hermesd-secrets-history-'));
  try {
    const clone = join(scratch, 'repo');
    execFileSync('git', ['clone', '--quiet', resolve(source), clone]);
    const tip = git(clone, 'rev-parse', 'HEAD');
    // the oldest root: every other commit of the tip's history is in the range
    const first = git(clone, 'rev-list', '--max-parents=0', '--reverse', tip).split('\n')[0];
    const range = `${first}..${tip}`;
    const commits = Number(git(clone, 'rev-list', '--count', range));
    const env = {
      ...process.env,
      HERMES_HOME: mkdtempSync(join(scratch, 'home-')),
      HERMESD_SOCKET_DIR: mkdtempSync(join(scratch, 'sock-')),
    };
    const times = [];
    let verdict;
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      const run = spawnSync(process.execPath, [cli, 'check', '--commits', range, '--json'], {
        cwd: clone,
        env,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      times.push((performance.now() - t) / 1000);
      if (run.status !== 0 && run.status !== 1) throw new Error(`check --commits ${range} in ${source} exited ${run.status}: ${run.stderr}`);
      verdict = JSON.parse(run.stdout);
    }
    const name = basename(resolve(source)) === 'repo' ? basename(dirname(resolve(source))) : basename(resolve(source));
    results.push({
      repository: name,
      tip,
      range,
      commits,
      judged: verdict.commits,
      violations: verdict.violations.map((v) => ({ rule: v.rule, commit: v.commit, file: v.file, line: v.line, message: v.message })),
      seconds: times,
      median: median(times),
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

process.stdout.write(`| repository | tip | commits judged | findings | check --commits (median of ${runs}) |\n|---|---|---|---|---|\n`);
for (const r of results) {
  process.stdout.write(`| ${r.repository} | ${r.tip.slice(0, 12)} | ${r.commits} | ${r.violations.length} | ${r.median.toFixed(1)} s |\n`);
}
for (const r of results) {
  for (const v of r.violations) process.stdout.write(`${r.repository} ${v.commit.slice(0, 12)} ${v.file}:${v.line} ${v.rule}: ${v.message}\n`);
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(results, null, 1) + '\n');
