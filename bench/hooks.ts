/**
 * Pre-commit cost, side by side in one run: a commit of 50 staged files with no hook, with
 * hermesd's rules-only pre-commit (warm daemon, asked through hermesd's client), with a plain sh grep hook,
 * with the pre-commit framework, with husky + lint-staged and with lefthook — each running
 * the same check: no staged added line may match AKIA[0-9A-Z]{16}. Peers that are not
 * installed are skipped and said so (pre-commit: `apt-get install -y pre-commit`;
 * lint-staged, husky and lefthook come from this package's devDependencies).
 * Each row is measured with NODE_EXTRA_CA_CERTS as the environment has it, and without it.
 * Peers take turns commit by commit (round-robin), so a load change on the shared machine
 * hits every row alike; a short pause after each commit lets background work (hermesd's
 * post-commit evidence) finish before the next peer's commit is timed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, ms, percentile, printNote, printTable, type Bench, type Goal, type Row } from './table.js';
import { benchEnv } from './env.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');
const FILES = 50;
const RUNS = Number(process.env.HERMESD_BENCH_RUNS ?? 15);
export const FORBID = 'AKIA[0-9A-Z]{16}';
/** Pause after each timed commit: hermesd's background post-commit ends well within it. */
const SETTLE_MS = 60;
/** What a commit may gain from hermesd with all its hooks: below what a person notices. */
const ADDED_GOAL_MS = 40;
/** …and at least this many times less than the usual hook managers running the same check. */
const PEER_MULTIPLE_GOAL = 5;
export const GREP_HOOK = `#!/bin/sh\nif git diff --cached -U0 --no-color | grep '^+' | grep -qE '${FORBID}'; then echo 'forbidden content' >&2; exit 1; fi\nexit 0\n`;

type Peer = { name: string; setup: (repo: string) => void; note?: string };

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export const bench: Bench = {
  name: 'hooks',
  async run() {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-bench-hooks-')));
    const home = join(base, 'home');
    mkdirSync(home);
    const env = benchEnv(base, home);
    const skipped: string[] = [];

    // npm peers: this package's devDependencies (nothing downloaded at bench time).
    const peersDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
    const npmOk = ['lint-staged', 'lefthook', 'husky'].every((p) => existsSync(join(peersDir, 'node_modules', p, 'package.json')));
    if (!npmOk) skipped.push('husky + lint-staged and lefthook: not in node_modules (npm ci installs them)');
    const bin = (name: string) => join(peersDir, 'node_modules', '.bin', name);
    const havePreCommit = spawnSync('pre-commit', ['--version']).status === 0;
    if (!havePreCommit) skipped.push('pre-commit framework: not installed (apt-get install -y pre-commit)');

    const peers: Peer[] = [
      { name: 'no hook (baseline)', setup: () => undefined },
      {
        // A repository with no hook manager: hermesd's stubs in .git/hooks.
        name: 'hermesd (rules only, warm daemon)',
        setup: (repo) => {
          sh(process.execPath, [CLI, 'init'], repo, env);
          writeFileSync(join(repo, '.hermes', 'config.yaml'), `rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "${FORBID}"\n`);
          sh(process.execPath, [CLI, 'start'], repo, env);
        },
      },
      {
        // The layout before hermesd wrote its own stubs (and the one a project's husky setup keeps):
        // every hook through husky's runner `h`, which forks dirname/basename and starts sh twice more.
        name: "hermesd, all hooks via husky's runner",
        setup: (repo) => {
          sh(process.execPath, [CLI, 'init', '--manager', 'husky'], repo, env);
          writeFileSync(join(repo, '.hermes', 'config.yaml'), `rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "${FORBID}"\n`);
          const internal = join(repo, '.husky', '_');
          for (const h of readdirSync(internal))
            if (!['h', 'hermesd', 'husky.sh', '.gitignore'].includes(h)) writeFileSync(join(internal, h), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"');
          sh(process.execPath, [CLI, 'start'], repo, env);
        },
      },
      {
        // The same, without the post-* evidence hooks: the pre-commit alone, as the peers run it.
        name: 'hermesd pre-commit only',
        setup: (repo) => {
          sh(process.execPath, [CLI, 'init'], repo, env);
          writeFileSync(join(repo, '.hermes', 'config.yaml'), `rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "${FORBID}"\n`);
          for (const h of ['post-commit', 'post-merge', 'post-checkout', 'post-rewrite']) rmSync(join(repo, '.git', 'hooks', h), { force: true });
          sh(process.execPath, [CLI, 'start'], repo, env);
        },
      },
      ...(process.env.HERMESD_BENCH_BASELINE_CLI
        ? [
            {
              // Another build of hermesd (HERMESD_BENCH_BASELINE_CLI=<checkout>/dist/cli/main.js): a before/after in the same run.
              name: 'hermesd baseline build (rules only, warm daemon)',
              setup: (repo: string) => {
                const other = process.env.HERMESD_BENCH_BASELINE_CLI!;
                sh(process.execPath, [other, 'init'], repo, env);
                writeFileSync(
                  join(repo, '.hermes', 'config.yaml'),
                  `rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "${FORBID}"\n`,
                );
                sh(process.execPath, [other, 'start'], repo, env);
              },
            },
          ]
        : []),
      {
        name: 'plain sh grep hook',
        setup: (repo) => {
          writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), GREP_HOOK);
          chmodSync(join(repo, '.git', 'hooks', 'pre-commit'), 0o755);
        },
      },
    ];
    if (havePreCommit) {
      peers.push({
        name: 'pre-commit framework (pygrep)',
        note: 'pygrep judges whole staged files, not only added lines',
        setup: (repo) => {
          writeFileSync(
            join(repo, '.pre-commit-config.yaml'),
            `repos:\n  - repo: local\n    hooks:\n      - id: no-aws-keys\n        name: no aws keys\n        entry: '${FORBID}'\n        language: pygrep\n`,
          );
          sh('git', ['add', '.pre-commit-config.yaml'], repo, env);
          sh('git', ['commit', '-qm', 'pre-commit config', '--no-verify'], repo, env);
          sh('pre-commit', ['install'], repo, { ...env, PRE_COMMIT_HOME: join(base, 'pre-commit-cache') });
        },
      });
    }
    if (npmOk) {
      peers.push({
        name: 'husky + lint-staged',
        note: 'lint-staged runs the grep hook script on the staged files',
        setup: (repo) => {
          symlinkSync(join(peersDir, 'node_modules'), join(repo, 'node_modules'));
          writeFileSync(join(repo, 'check.sh'), `#!/bin/sh\nif grep -qE '${FORBID}' "$@"; then echo 'forbidden content' >&2; exit 1; fi\n`);
          writeFileSync(join(repo, 'package.json'), JSON.stringify({ name: 'b', private: true, 'lint-staged': { '*': 'sh check.sh' } }) + '\n');
          writeFileSync(join(repo, '.gitignore'), 'node_modules\n');
          sh('git', ['add', 'check.sh', 'package.json', '.gitignore'], repo, env);
          sh('git', ['commit', '-qm', 'lint-staged config', '--no-verify'], repo, env);
          sh(
            process.execPath,
            [
              '-e',
              `import(${JSON.stringify(join(peersDir, 'node_modules', 'husky', 'index.js'))}).then(m => { const r = m.default('.husky'); if (r) { console.error(r); process.exit(1); } })`,
            ],
            repo,
            env,
          );
          writeFileSync(join(repo, '.husky', 'pre-commit'), 'lint-staged --quiet\n');
        },
      });
      peers.push({
        name: 'lefthook',
        setup: (repo) => {
          writeFileSync(
            join(repo, 'lefthook.yml'),
            `pre-commit:\n  commands:\n    no-aws-keys:\n      run: "git diff --cached -U0 --no-color | grep '^+' | grep -qE '${FORBID}' && exit 1 || exit 0"\n`,
          );
          sh('git', ['add', 'lefthook.yml'], repo, env);
          sh('git', ['commit', '-qm', 'lefthook config', '--no-verify'], repo, env);
          sh(bin('lefthook'), ['install'], repo, env);
        },
      });
    }

    const withoutCa = { ...env };
    delete withoutCa.NODE_EXTRA_CA_CERTS;
    const variants: Array<[string, NodeJS.ProcessEnv]> = [[process.env.NODE_EXTRA_CA_CERTS ? 'NODE_EXTRA_CA_CERTS set' : 'NODE_EXTRA_CA_CERTS unset', env]];
    if (process.env.NODE_EXTRA_CA_CERTS) variants.push(['NODE_EXTRA_CA_CERTS unset', withoutCa]);

    const results: Array<{ peer: Peer; variant: string; times: number[]; failed?: string }> = [];
    const ready: Array<{ peer: Peer; repo: string }> = [];
    let n = 0;
    for (const peer of peers) {
      const repo = join(base, `repo${n++}`);
      mkdirSync(repo);
      sh('git', ['init', '-q', '-b', 'main'], repo, env);
      for (let i = 0; i < FILES; i++) writeFileSync(join(repo, `f${String(i).padStart(2, '0')}.txt`), `file ${i}\n`);
      sh('git', ['add', '-A'], repo, env);
      sh('git', ['commit', '-qm', 'init', '--no-verify'], repo, env);
      try {
        peer.setup(repo);
        ready.push({ peer, repo });
      } catch (err) {
        skipped.push(`${peer.name}: setup failed (${String((err as Error).message).split('\n')[0]})`);
      }
    }
    let round = 0;
    for (const [variant, venv] of variants) {
      const runs = ready.map(({ peer, repo }) => ({ peer, repo, times: [] as number[], failed: undefined as string | undefined }));
      for (let r = -2; r < RUNS; r++) {
        round++;
        for (const run of runs) {
          if (run.failed) continue;
          for (let i = 0; i < FILES; i++) writeFileSync(join(run.repo, `f${String(i).padStart(2, '0')}.txt`), `file ${i}\nround ${round}\n`);
          sh('git', ['add', '-u'], run.repo, venv);
          const args = run.peer.name.startsWith('no hook') ? ['-c', 'core.hooksPath=/dev/null', 'commit', '-qm', `r${round}`] : ['commit', '-qm', `r${round}`];
          const t0 = process.hrtime.bigint();
          const res = spawnSync('git', args, { cwd: run.repo, env: venv, encoding: 'utf8' });
          const dt = Number(process.hrtime.bigint() - t0) / 1e6;
          if (res.status !== 0) run.failed = (res.stderr || res.stdout).trim().split('\n').slice(-2).join(' ');
          else if (r >= 0) run.times.push(dt);
          await new Promise((res) => setTimeout(res, SETTLE_MS));
        }
      }
      for (const run of runs) results.push({ peer: run.peer, variant, times: run.times, failed: run.failed });
    }
    for (const { peer, repo } of ready) {
      if (peer.name.startsWith('hermesd')) {
        const cli = peer.name.startsWith('hermesd baseline') ? process.env.HERMESD_BENCH_BASELINE_CLI! : CLI;
        // The refusal path works too: a forbidden line is stopped.
        writeFileSync(join(repo, 'leak.txt'), 'key AKIAABCDEFGHIJKLMNOP\n');
        sh('git', ['add', 'leak.txt'], repo, env);
        const refused = spawnSync('git', ['commit', '-qm', 'leak'], { cwd: repo, env, encoding: 'utf8' });
        if (refused.status === 0) skipped.push(`${peer.name}: a forbidden line was NOT refused (bench sanity check failed)`);
        spawnSync(process.execPath, [cli, 'stop'], { cwd: repo, env });
      }
    }

    const goals: Goal[] = [];
    for (const [variant] of variants) {
      const baseline = results.find((r) => r.variant === variant && r.peer.name.startsWith('no hook'));
      const baseMed = baseline ? median(baseline.times) : 0;
      const hermes = results.find((r) => r.variant === variant && r.peer.name.startsWith('hermesd ('));
      const hermesPre = results.find((r) => r.variant === variant && r.peer.name === 'hermesd pre-commit only');
      const hermesAdded = hermes ? median(hermes.times) - baseMed : NaN;
      const rows: Row[] = results
        .filter((r) => r.variant === variant)
        .map((r) => {
          const med = median(r.times);
          const added = med - baseMed;
          return {
            peer: r.peer.name,
            'median commit': r.failed ? 'failed' : ms(med, 1),
            'p90 commit': r.failed ? '' : ms(percentile(r.times, 90), 1),
            'added over no hook': r.failed ? r.failed.slice(0, 60) : ms(added, 1),
            'vs hermesd (added)': r.failed || r.peer.name.startsWith('no hook') || r.peer === hermes?.peer ? '' : `${(added / hermesAdded).toFixed(1)}×`,
          };
        });
      printTable(`pre-commit on ${FILES} staged files, ${RUNS} commits each, peers in turn (${variant})`, rows);
      if (hermes)
        printNote(
          `hermesd adds ${ms(hermesAdded, 1)} (median) over a hook-less commit with all its hooks; goal ≤ ${ADDED_GOAL_MS} ms: ${hermesAdded <= ADDED_GOAL_MS ? 'met' : 'NOT met'}.`,
        );
      const multiples: Array<[string, number]> = [];
      for (const name of ['pre-commit framework', 'husky + lint-staged']) {
        const peer = results.find((r) => r.variant === variant && r.peer.name.startsWith(name) && !r.failed);
        if (peer && hermes) {
          const x = (median(peer.times) - baseMed) / hermesAdded;
          multiples.push([name, x]);
          printNote(`${name}: ${x.toFixed(1)}× hermesd's added time; goal ≥ ${PEER_MULTIPLE_GOAL}×: ${x >= PEER_MULTIPLE_GOAL ? 'met' : 'NOT met'}.`);
        }
      }
      if (hermesPre) {
        const added = median(hermesPre.times) - baseMed;
        printNote(`hermesd's pre-commit alone adds ${ms(added, 1)}: ${added <= ADDED_GOAL_MS ? 'met' : 'NOT met'}.`);
      }
      if (hermes && !hermes.failed) {
        const peersAdded = results
          .filter(
            (r) => r.variant === variant && !r.failed && ['lefthook', 'pre-commit framework', 'husky + lint-staged'].some((n) => r.peer.name.startsWith(n)),
          )
          .map((r) => `${r.peer.name.replace(/ \(.*\)$/, '')} ${(median(r.times) - baseMed).toFixed(1)}`);
        goals.push({
          measure: `added to a ${FILES}-file commit, all hermesd hooks, warm daemon (${variant})`,
          result: `${ms(hermesAdded, 1)}${peersAdded.length ? ` (${peersAdded.join(', ')} ms)` : ''}`,
          goal: `≤ ${ADDED_GOAL_MS} ms`,
          met: hermesAdded <= ADDED_GOAL_MS,
        });
        if (multiples.length) {
          goals.push({
            measure: `${multiples.map(([n]) => n).join(' / ')}: added time ÷ hermesd's (${variant})`,
            result: multiples.map(([, x]) => `${x.toFixed(1)}×`).join(' / '),
            goal: `≥ ${PEER_MULTIPLE_GOAL}×`,
            met: multiples.every(([, x]) => x >= PEER_MULTIPLE_GOAL),
          });
        }
      }
    }
    for (const p of peers) if (p.note) printNote(`Note: ${p.name}: ${p.note}`);
    for (const s of skipped) printNote(`Skipped: ${s}`);
    rmSync(base, { recursive: true, force: true });
    return goals;
  },
};

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await bench.run();
}
