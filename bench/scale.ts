/**
 * How the pre-commit's cost grows with the commit: 5, 50, 500 and 5,000
 * staged files, each size committed with no hook, with hermesd (all its hooks installed, the
 * rules of the config `hermesd init` writes — its secrets rule, gitleaks' rule set — warm
 * daemon, asked through hermesd's client) and with the `sh` floor: a plain hook doing a
 * forbidden-content check (one pattern, AWS keys) with one `git diff` and one `grep`. Peers take turns commit
 * by commit, in an order that rotates each round; hermesd's daemon finishes what a commit left
 * it (its evidence) before the next peer commits, so no peer's commit pays for it. Two
 * patterns, each with its own table and goal:
 * - **at once**, as people commit (`git add -A && git commit`): the commit follows `git add`
 *   with no pause, so hermesd's daemon judges the new index inside the hook;
 * - **settled**: between `git add` and `git commit` each peer gets the same pause, and hermesd's
 *   repository waits (untimed) until its daemon has judged the new index ahead, the staged
 *   verdict a commit made a moment after `git add` finds.
 * The table says how many of hermesd's answers came from that kept verdict.
 * Measured with NODE_EXTRA_CA_CERTS as the environment has it and without it (no Node
 * process starts on the fast path; the figure shows it). The daemon's CPU time per commit
 * (its /proc utime + stime over the timed rounds, each round's `git add` included) says what a
 * commit costs it in the background.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DaemonClient } from '../src/client/daemon-client.js';
import { resolvePaths } from '../src/paths/index.js';
import { median, ms, printNote, printTable, type Bench, type Goal, type Row } from './table.js';
import { benchEnv } from './env.js';
import { GREP_HOOK } from './hooks.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');
const SIZES = (process.env.HERMESD_BENCH_SIZES ?? '5,50,500,5000').split(',').map(Number);
const RUNS = Number(process.env.HERMESD_BENCH_RUNS ?? 21);
/** Commits per peer at a size: a 5,000-file round writes 15,000 files, so fewer of them. */
const runsAt = (size: number) => (size >= 5000 ? Math.min(RUNS, 5) : size >= 500 ? Math.min(RUNS, 11) : RUNS);
/** Pause between `git add` and `git commit`, and after each commit. */
const SETTLE_MS = 60;
/** After hermesd's commit its daemon writes the commit's evidence (the post-commit answers first); the next peer commits after. */
const HERMESD_AFTER_MS = 400;
/** The two ways a commit follows `git add` (see above). */
const PATTERNS = ['at once', 'settled'] as const;
/** How long hermesd's daemon may take to judge an index ahead before the commit goes anyway. */
const JUDGE_WAIT_MS = 5_000;
/** The issue's goals: hermesd's added time ÷ the sh floor's. */
const GOAL_AT: Record<number, number> = { 50: 1.1, 5000: 1.5 };

type Staged = { hits: number; misses: number; ahead: number; judged?: string };
type Peer = { name: string; kind: 'none' | 'hermesd' | 'floor' };

const PEERS: Peer[] = [
  { name: 'no hook (baseline)', kind: 'none' },
  { name: 'hermesd (all hooks, the secrets rule init writes, warm daemon)', kind: 'hermesd' },
  { name: 'sh floor (git diff | grep)', kind: 'floor' },
];

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A process's CPU time so far (user + system, all its threads), from /proc; 0 where there is
 * none. In nanoseconds where the kernel keeps them (each thread's schedstat: the daemon's threads
 * live as long as it does), else in clock ticks (10 ms: a mean over a few rounds of a 10 ms
 * commit is then mostly rounding).
 */
export function cpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // no schedstat here: the ticks below
  }
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
/**
 * The time git spent in hooks during a command, from its trace2 events: every hook child a
 * top-level git started (pre-commit, post-commit…; every git of `sh -c 'git add && git commit'`),
 * start to exit (`all`), and the pre-commit hooks alone (`pre`: what the goal is stated on). A
 * git run inside a hook writes events under a nested session id (`parent/child`); they are
 * inside their hook's time already and are not counted twice. No trace file: no hook ran.
 */
export function hookTime(traceFile: string): { all: number; pre: number } {
  const hooks = new Map<string, string>();
  let all = 0;
  let pre = 0;
  let text = '';
  try {
    text = readFileSync(traceFile, 'utf8');
  } catch {
    return { all, pre };
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { event: string; sid: string; child_id?: number; child_class?: string; hook_name?: string; t_rel?: number };
    if (e.sid.includes('/')) continue;
    const key = `${e.sid} ${e.child_id}`;
    if (e.event === 'child_start' && e.child_class === 'hook') hooks.set(key, e.hook_name ?? '');
    else if (e.event === 'child_exit' && hooks.has(key)) {
      all += e.t_rel! * 1000;
      if (hooks.get(key) === 'pre-commit') pre += e.t_rel! * 1000;
    }
  }
  return { all, pre };
}

/** Linux's USER_HZ, the unit of /proc's times. */
const CLOCK_TICKS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fileName = (i: number) => `d${i % 50}/f${i}.txt`;

export const bench: Bench = {
  name: 'scale',
  async run() {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-bench-scale-')));
    const home = join(base, 'home');
    mkdirSync(home);
    const env = benchEnv(base, home);
    const withoutCa = { ...env };
    delete withoutCa.NODE_EXTRA_CA_CERTS;
    const variants: Array<[string, NodeJS.ProcessEnv]> = [[process.env.NODE_EXTRA_CA_CERTS ? 'NODE_EXTRA_CA_CERTS set' : 'NODE_EXTRA_CA_CERTS unset', env]];
    if (process.env.NODE_EXTRA_CA_CERTS) variants.push(['NODE_EXTRA_CA_CERTS unset', withoutCa]);

    const goals: Goal[] = [];
    const problems: string[] = [];
    let dropped = 0;
    const rows: Record<string, Row[]> = {};
    let n = 0;
    for (const size of SIZES) {
      const repos = PEERS.map((peer) => {
        const repo = join(base, `r${n++}`);
        mkdirSync(repo);
        run('git', ['init', '-q', '-b', 'main'], repo, env);
        for (let d = 0; d < Math.min(size, 50); d++) mkdirSync(join(repo, `d${d}`));
        for (let i = 0; i < size; i++) writeFileSync(join(repo, fileName(i)), `file ${i}\n`);
        run('git', ['add', '-A'], repo, env);
        run('git', ['commit', '-qm', 'init', '--no-verify'], repo, env);
        if (peer.kind === 'hermesd') {
          // The config init writes: its secrets rule (gitleaks' rule set), which judges more than the floor's one pattern.
          run(process.execPath, [CLI, 'init'], repo, env);
          run(process.execPath, [CLI, 'start'], repo, env);
        } else if (peer.kind === 'floor') {
          writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), GREP_HOOK);
          chmodSync(join(repo, '.git', 'hooks', 'pre-commit'), 0o755);
        }
        return { peer, repo };
      });
      const hermes = repos.find((r) => r.peer.kind === 'hermesd')!;
      const client = new DaemonClient(resolvePaths(hermes.repo, env).socket);
      const staged = async (): Promise<Staged | undefined> => {
        // A daemon busy with a 15,000-file write storm may drop a new connection: ask again.
        for (let attempt = 0; ; attempt++) {
          try {
            return (await client.call<{ hooks?: { staged?: Staged } }>('GET', '/v1/status')).hooks?.staged;
          } catch (err) {
            if (attempt >= 5) throw err;
            dropped++;
            await sleep(100);
          }
        }
      };
      // the daemon answers status before its services have loaded
      for (const deadline = Date.now() + JUDGE_WAIT_MS; !(await staged()) && Date.now() < deadline; ) await sleep(20);
      const daemonPid = (await client.call<{ pid: number }>('GET', '/v1/status')).pid;

      let round = 0;
      for (const [venvName, venv] of variants)
        for (const pattern of PATTERNS) {
          const variant = `${pattern}, ${venvName}`;
          const times = new Map(repos.map((r) => [r.peer.kind, [] as number[]]));
          const inHooks = new Map(repos.map((r) => [r.peer.kind, [] as number[]]));
          const inPreCommit = new Map(repos.map((r) => [r.peer.kind, [] as number[]]));
          const trace = join(base, 'trace2.json');
          const before = (await staged())!;
          let cpuBefore = 0;
          for (let r = -1; r < runsAt(size); r++) {
            round++;
            if (r === 0) cpuBefore = cpuMs(daemonPid);
            for (let k = 0; k < repos.length; k++) {
              const { peer, repo } = repos[(k + round) % repos.length]!;
              for (let i = 0; i < size; i++) writeFileSync(join(repo, fileName(i)), `file ${i}\nround ${round}\n`);
              const judged = peer.kind === 'hermesd' ? (await staged())?.judged : undefined;
              run('git', ['add', '-u'], repo, venv);
              if (pattern === 'settled') await sleep(SETTLE_MS);
              if (pattern === 'settled' && peer.kind === 'hermesd') {
                const deadline = Date.now() + JUDGE_WAIT_MS;
                while ((await staged())?.judged === judged && Date.now() < deadline) await sleep(5);
              }
              const args = peer.kind === 'none' ? ['-c', 'core.hooksPath=/dev/null', 'commit', '-qm', `r${round}`] : ['commit', '-qm', `r${round}`];
              rmSync(trace, { force: true });
              const t0 = process.hrtime.bigint();
              const res = spawnSync('git', args, { cwd: repo, env: { ...venv, GIT_TRACE2_EVENT: trace }, encoding: 'utf8' });
              const dt = Number(process.hrtime.bigint() - t0) / 1e6;
              if (res.status !== 0) throw new Error(`${peer.name}, ${size} files: commit failed: ${(res.stderr || res.stdout).trim()}`);
              if (r >= 0) {
                times.get(peer.kind)!.push(dt);
                const spent = hookTime(trace);
                inHooks.get(peer.kind)!.push(spent.all);
                inPreCommit.get(peer.kind)!.push(spent.pre);
              }
              await sleep(peer.kind === 'hermesd' ? HERMESD_AFTER_MS : SETTLE_MS);
            }
          }
          const cpuPerCommit = (cpuMs(daemonPid) - cpuBefore) / runsAt(size);
          const after = (await staged())!;
          const baseMed = median(times.get('none')!);
          // Paired: each round's commit less the same round's hook-less commit, then the median.
          // Commits of one round are seconds apart, so they share the machine's mood; medians of
          // separate series did not (a hook-less 50-file commit took 16 ms in one run, 55 in the next).
          const added = (k: Peer['kind']) => median(times.get(k)!.map((t, r) => t - times.get('none')![r]!));
          const ratio = added('hermesd') / added('floor');
          const hooksOf = (k: Peer['kind']) => median(inHooks.get(k)!);
          const hooksRatio = hooksOf('hermesd') / hooksOf('floor');
          const preOf = (k: Peer['kind']) => median(inPreCommit.get(k)!);
          const preRatio = preOf('hermesd') / preOf('floor');
          (rows[variant] ??= []).push({
            'staged files': size,
            'no hook': ms(baseMed, 1),
            'sh floor added': ms(added('floor'), 1),
            'hermesd added': ms(added('hermesd'), 1),
            'hermesd ÷ floor': `${ratio.toFixed(2)}×`,
            'pre-commit hook: floor / hermesd': `${preOf('floor').toFixed(1)} / ${preOf('hermesd').toFixed(1)} ms = ${preRatio.toFixed(2)}×`,
            'all hooks: floor / hermesd': `${hooksOf('floor').toFixed(1)} / ${hooksOf('hermesd').toFixed(1)} ms = ${hooksRatio.toFixed(2)}×`,
            'kept verdict served': `${after.hits - before.hits} of ${after.hits - before.hits + after.misses - before.misses}`,
            'daemon CPU per commit': ms(cpuPerCommit, 0),
          });
          const goal = GOAL_AT[size];
          if (goal !== undefined) {
            goals.push({
              measure: `pre-commit hook, ${size} staged files, ÷ the sh floor's (git's trace2 time, ${variant})`,
              result: `${preRatio.toFixed(2)}× (${preOf('hermesd').toFixed(1)} vs ${preOf('floor').toFixed(1)} ms); the whole commit with all hermesd's hooks ${ratio.toFixed(2)}× the floor's added time (${added('hermesd').toFixed(1)} vs ${added('floor').toFixed(1)} ms)`,
              goal: `≤ ${goal}×`,
              met: preRatio <= goal,
            });
          }
        }

      // The refusal path at this size: a forbidden line among the staged files is stopped.
      writeFileSync(join(hermes.repo, fileName(0)), `key AKIAABCDEFGHIJKLMNOP\n`);
      run('git', ['add', '-u'], hermes.repo, env);
      if (spawnSync('git', ['commit', '-qm', 'leak'], { cwd: hermes.repo, env }).status === 0)
        problems.push(`${size} files: a forbidden line was NOT refused (bench sanity check failed)`);
      spawnSync(process.execPath, [CLI, 'stop'], { cwd: hermes.repo, env });
      for (const { repo } of repos) rmSync(repo, { recursive: true, force: true });
    }
    // What each approach starts per commit: the floor's git; curl, which hermesd's hooks start only where the client could not be built.
    const starts: Row[] = [];
    for (const [what, argv] of [
      ['git --version', ['git', '--version']],
      ['curl --version', ['curl', '--version']],
      ['sh -c "exit 0"', ['sh', '-c', 'exit 0']],
    ] as const) {
      const t: number[] = [];
      for (let i = 0; i < 21; i++) {
        const t0 = process.hrtime.bigint();
        spawnSync(argv[0], argv.slice(1), { stdio: 'ignore' });
        t.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      starts.push({ process: what, 'median start to exit': ms(median(t), 2) });
    }
    for (const [variant, r] of Object.entries(rows))
      printTable(
        `pre-commit added time by commit size, ${SIZES.map((n) => `${runsAt(n)}`).join('/')} commits per peer at ${SIZES.join('/')} files, peers in turn (${variant})`,
        r,
      );
    printNote(
      `Added time = the median over rounds of (the peer's commit − the hook-less commit of the same round); "pre-commit hook" and "all hooks" = the median time git spent in its pre-commit hook, and in all its hook children (trace2 events): hermesd runs a post-commit hook too (the audit and the commit's evidence), the floor none. The goal is on the pre-commit hook. The sh floor: ${GREP_HOOK.split('\n')[1]}`,
    );
    printNote(
      'hermesd\'s pre-commit asks its daemon through hermesd\'s client (one small C process), and the daemon serves the verdict it judged when the index changed where it has one; "kept verdict served" counts those answers (the rest were judged in full, in the hook: what "at once" measures).',
    );
    printTable('one process started and ended, 21 times each (what a hook pays per process it starts)', starts);
    if (dropped) printNote(`${dropped} status request(s) of the bench itself were dropped by a busy daemon and asked again.`);
    for (const p of problems) printNote(`Problem: ${p}`);
    rmSync(base, { recursive: true, force: true });
    return goals;
  },
};

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await bench.run();
}
