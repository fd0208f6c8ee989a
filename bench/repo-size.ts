/**
 * Cost by repository size: does a commit cost what it changes, or what the repository holds?
 * Repositories of 1,000, 10,000 and 100,000 tracked files (generated: 20 files per folder under 50
 * packages, text files of varied sizes) and one real public repository (bufbuild/protobuf-es, Apache-2.0,
 * cloned from HERMESD_BENCH_REAL_REPO, default the local mirror /work/.mirror/bufbuild+protobuf-es/repo;
 * nothing of it is kept). In each, three copies take turns commit by commit (the order rotating
 * each round): no hook (`core.hooksPath=/dev/null`), the sh floor hook (`git diff --cached | grep`,
 * bench/hooks.ts) and all of hermesd's hooks (`hermesd init`'s config: its secrets rule,
 * gitleaks' rule set; a warm daemon). Each round commits as people do, `git add -A && git
 * commit` in one `sh -c`: a one-file change, then a 50-file change; output goes where a
 * terminal's would (not a pipe git's caller reads to its end).
 * The daemon's CPU (its /proc utime + stime: its own threads, not the git processes it starts)
 * is read around each of hermesd's commits, the 400 ms after it included (its audit and evidence
 * are the commit's cost), less what the daemon spends idle over the same time; and around an
 * index write with the hooks bypassed (`git -c core.hooksPath=/dev/null add` of one changed file),
 * which the daemon sees and judges ahead of a commit. Each size's rounds come after WARM_COMMITS
 * commits of that size in the hermesd copy: the daemon's CPU over those (the first of that size
 * after its start) is reported too. Last, commits made seconds apart, as a person makes them: the
 * daemon's CPU over each and the SPREAD_MS after it, its idle work included.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { resolvePaths } from '../src/paths/index.js';
import { IDLE_COLLECT_MS } from '../src/server/run-daemon.js';
import { GREP_HOOK } from './hooks.js';
import { cpuMs, hookTime } from './scale.js';
import { median, ms, printNote, printTable, type Bench, type Goal, type Row } from './table.js';
import { benchEnv } from './env.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');
const SIZES = (process.env.HERMESD_BENCH_REPO_SIZES ?? '1000,10000,100000').split(',').map(Number);
const REAL = process.env.HERMESD_BENCH_REAL_REPO ?? '/work/.mirror/bufbuild+protobuf-es/repo';
const RUNS = Number(process.env.HERMESD_BENCH_RUNS ?? 11);
/** Fewer rounds where each commit is slow to set up. */
const runsAt = (files: number) => (files >= 100_000 ? Math.min(RUNS, 5) : RUNS);
/** After each of hermesd's commits: its audit and evidence finish before the next peer commits. */
const AFTER_MS = 400;
const PAUSE_MS = 60;
const GOAL_RATIO = 1.2;
const GOAL_CPU_COMMIT = 20;
const GOAL_CPU_INDEX = 5;
/** Commits measured seconds apart, and how far apart: past the daemon's idle collection. */
const SPREAD_COMMITS = Number(process.env.HERMESD_BENCH_SPREAD_COMMITS ?? 7);
const SPREAD_MS = IDLE_COLLECT_MS + 1_500;
/**
 * Commits made in the hermesd copy after its daemon starts and before the measured rounds. A
 * daemon serves a day of commits; its first ones after a start also pay V8's compiling of the
 * code they run (its worker threads: about as much again as the commit's own work, measured
 * 2026-12-05). Measured apart and reported beside the rounds' figure.
 */
const WARM_COMMITS = Number(process.env.HERMESD_BENCH_WARM_COMMITS ?? 15);

type Kind = 'none' | 'floor' | 'hermesd';
const PEERS: Array<{ kind: Kind; name: string }> = [
  { kind: 'none', name: 'no hook' },
  { kind: 'floor', name: 'sh floor (git diff --cached | grep)' },
  { kind: 'hermesd', name: 'hermesd (all hooks, init config, warm daemon)' },
];

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
/**
 * The daemon's CPU is judged by the median over the rounds, as every goal of the issue is; the
 * mean is shown beside it (a garbage collection now and then moves it). Read in ns from
 * schedstat where there is one (a median of 10 ms /proc ticks would say little).
 */
/**
 * How long the daemon's status question waits, asked one after another for `ms` while `act`
 * runs (from its start): the longest wait is the longest the daemon held its loop.
 */
async function waitsWhile(socket: string, ms: number, act: () => Promise<unknown> = async () => undefined): Promise<number[]> {
  const ask = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const req = request({ socketPath: socket, path: '/v1/status', method: 'GET' }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      });
      req.on('error', reject);
      req.end();
    });
  const waits: number[] = [];
  // Its failure is held until the questions end (a rejection nobody awaited yet would stop the process).
  const acting = act().then(
    () => undefined,
    (err: unknown) => err,
  );
  const end = Date.now() + ms;
  while (Date.now() < end) waits.push(await ask());
  const failed = await acting;
  if (failed) throw failed;
  return waits;
}
const asyncRun = (cmd: string, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<void>((resolve, reject) => {
    const c = spawn('sh', ['-c', cmd], { cwd, env, stdio: 'ignore' });
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd}: exit ${code}`))));
  });

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const cpuFigure = (xs: number[]) => `${median(xs).toFixed(1)} ms (mean ${mean(xs).toFixed(1)})`;
/** Index writes measured per repository (each is one `git add` and the daemon's reaction: cheap, so more than the commit rounds). */
const indexWritesAt = (files: number) => (files >= 100_000 ? 11 : 25);
const run = (args: string[], cwd: string, env: NodeJS.ProcessEnv) =>
  execFileSync(args[0]!, args.slice(1), { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });

/**
 * A generated tree of `n` files laid out as source trees are (the Linux kernel holds ~15 files
 * per folder): 20 files per folder, the folders under 50 top-level packages, text of varied sizes.
 */
function generate(dir: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const folder = Math.floor(i / 20);
    const path = join(dir, `pkg${folder % 50}`, `mod${folder}`, `file${i}.ts`);
    if (i % 20 === 0) mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `// file ${i}\n${'export const value = "lorem ipsum dolor";\n'.repeat(1 + (i % 23))}`);
  }
}

/** The files a change touches: existing tracked files, spread over the tree. */
function changed(files: string[], count: number, round: number): string[] {
  const out: string[] = [];
  const step = Math.max(1, Math.floor(files.length / count));
  for (let k = 0; k < count; k++) out.push(files[(k * step + round * 7) % files.length]!);
  return out;
}

export const bench: Bench = {
  name: 'repo-size',
  async run() {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-bench-size-')));
    const env = benchEnv(base);
    const goals: Goal[] = [];
    const rows: Row[] = [];
    const cpuRows: Row[] = [];
    const stallRows: Row[] = [];
    const repos: Array<{ label: string; make: (dir: string) => void }> = SIZES.map((n) => ({
      label: `${n.toLocaleString('en')} files (generated)`,
      make: (dir) => {
        run(['git', 'init', '-q', '-b', 'main', dir], base, env);
        generate(dir, n);
      },
    }));
    if (existsSync(REAL))
      repos.push({ label: 'bufbuild/protobuf-es (real)', make: (dir) => run(['git', 'clone', '-q', '--no-hardlinks', REAL, dir], base, env) });
    else printNote(`The real repository was not measured: ${REAL} does not exist (HERMESD_BENCH_REAL_REPO names a clone or bare repository).`);

    let id = 0;
    for (const repo of repos) {
      const origin = join(base, `origin${id++}`);
      repo.make(origin);
      run(['git', 'add', '-A'], origin, env);
      spawnSync('git', ['-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'tree'], { cwd: origin, env });
      const files = run(['git', 'ls-files', '-z'], origin, env)
        .split('\0')
        .filter((f) => f && !f.startsWith('.'));
      const copies = PEERS.map((peer) => {
        const dir = join(base, `c${id++}`);
        run(['git', 'clone', '-q', origin, dir], base, env);
        // git's automatic gc and maintenance, which a commit starts now and then in one copy and not
        // in another, are no hook's cost (a 50-file round once timed a no-hook commit 45 ms above the others).
        run(['git', 'config', 'gc.auto', '0'], dir, env);
        run(['git', 'config', 'maintenance.auto', 'false'], dir, env);
        if (peer.kind === 'floor') {
          writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), GREP_HOOK);
          chmodSync(join(dir, '.git', 'hooks', 'pre-commit'), 0o755);
        } else if (peer.kind === 'hermesd') {
          run([process.execPath, CLI, 'init'], dir, env);
          run([process.execPath, CLI, 'start'], dir, env);
        }
        return { peer, dir };
      });
      const hermes = copies.find((c) => c.peer.kind === 'hermesd')!;
      const pid = (JSON.parse(run([process.execPath, CLI, 'status', '--json'], hermes.dir, env)) as { pid: number }).pid;
      // Past the daemon's first idle collection, which is no idle cost.
      await sleep(IDLE_COLLECT_MS + 1_000);
      // The daemon's idle CPU per ms, over a quiet window.
      const idle0 = cpuMs(pid);
      await sleep(3_000);
      const idlePerMs = (cpuMs(pid) - idle0) / 3_000;
      const windowCpu = (f: () => void | Promise<void>) => async () => {
        const c0 = cpuMs(pid);
        const t0 = Date.now();
        await f();
        await sleep(AFTER_MS);
        return Math.max(0, cpuMs(pid) - c0 - idlePerMs * (Date.now() - t0));
      };
      // The daemon's first commit after its start (its first record in SessionDB, its first look at the secret files):
      // how long a question waits meanwhile, against the same questions while it is idle.
      const socket = resolvePaths(hermes.dir, env).socket;
      const idleWaits = await waitsWhile(socket, 1_500);
      writeFileSync(join(hermes.dir, changed(files, 1, 199)[0]!), '// the first commit\n');
      const firstWaits = await waitsWhile(socket, 2_500, () => asyncRun('git add -A && git commit -qm "the first"', hermes.dir, env));
      stallRows.push({
        repository: repo.label,
        'tracked files': files.length,
        'idle: median / longest': `${ms(median(idleWaits), 1)} / ${ms(Math.max(...idleWaits), 1)}`,
        'during and after the first commit: median / longest': `${ms(median(firstWaits), 1)} / ${ms(Math.max(...firstWaits), 1)}`,
        questions: `${idleWaits.length} / ${firstWaits.length}`,
      });
      /** One commit of `size` files in hermesd's copy, before the rounds: the daemon's CPU over it. */
      const warmUp = async (size: number, w: number) => {
        for (const f of changed(files, size, 200 + w)) writeFileSync(join(hermes.dir, f), `// warm-up ${w} size ${size}\n${f}\n`);
        return windowCpu(() => void run(['sh', '-c', `git add -A && git commit -qm "warm-up ${w}"`], hermes.dir, env))();
      };
      const cold = new Map<number, number[]>();
      for (const size of [1, 50]) {
        // The first commits of each size after the daemon's start also pay V8's compiling of the
        // code that size runs (a 50-file commit reaches code a 1-file one does not): measured apart.
        const coldCpu: number[] = [];
        for (let w = 0; w < WARM_COMMITS; w++) coldCpu.push(await warmUp(size, w));
        cold.set(size, coldCpu);
        cpuRows.push({
          repository: repo.label,
          'tracked files': files.length,
          measure: `commit of ${size} file${size > 1 ? 's' : ''}, all hooks: the first ${WARM_COMMITS} of that size after the daemon started (before its rounds)`,
          'daemon CPU (median, mean)': cpuFigure(coldCpu),
        });
        const times = new Map<Kind, number[]>(PEERS.map((p) => [p.kind, []]));
        const inHooks = new Map<Kind, number[]>(PEERS.map((p) => [p.kind, []]));
        const cpu: number[] = [];
        for (let round = -1; round < runsAt(files.length); round++) {
          for (let k = 0; k < copies.length; k++) {
            const { peer, dir } = copies[(k + round + 1) % copies.length]!;
            for (const f of changed(files, size, round + 2)) writeFileSync(join(dir, f), `// round ${round} size ${size}\n${f}\n`);
            const hooks = peer.kind === 'none' ? '-c core.hooksPath=/dev/null ' : '';
            const trace = `${dir}.trace2.json`;
            const commit = () => {
              const t0 = process.hrtime.bigint();
              const r = spawnSync('sh', ['-c', `git ${hooks}add -A && git ${hooks}commit -qm "r${round}"`], {
                cwd: dir,
                env: { ...env, GIT_TRACE2_EVENT: trace },
                stdio: 'ignore',
              });
              if (r.status !== 0) throw new Error(`${peer.name}, ${repo.label}: the commit failed (exit ${r.status})`);
              return Number(process.hrtime.bigint() - t0) / 1e6;
            };
            const hooksOf = () => {
              if (round >= 0) inHooks.get(peer.kind)!.push(hookTime(trace).all);
              rmSync(trace, { force: true });
            };
            if (peer.kind === 'hermesd') {
              let dt = 0;
              const c = await windowCpu(() => void (dt = commit()))();
              if (round >= 0) (times.get('hermesd')!.push(dt), cpu.push(c));
              hooksOf();
            } else {
              const dt = commit();
              if (round >= 0) times.get(peer.kind)!.push(dt);
              hooksOf();
              await sleep(PAUSE_MS);
            }
          }
        }
        const none = times.get('none')!;
        const added = (k: Kind) => median(times.get(k)!.map((t, r) => t - none[r]!));
        const ratio = added('hermesd') / added('floor');
        const hooksMedian = (k: Kind) => median(inHooks.get(k)!);
        const hookRatio = hooksMedian('hermesd') / hooksMedian('floor');
        rows.push({
          repository: repo.label,
          'tracked files': files.length,
          change: `${size} file${size > 1 ? 's' : ''}`,
          'no hook': ms(median(none), 1),
          'sh floor added': ms(added('floor'), 1),
          'hermesd added': ms(added('hermesd'), 1),
          'hermesd ÷ floor': `${ratio.toFixed(2)}×`,
          'in hooks (trace2): floor / hermesd': `${ms(hooksMedian('floor'), 1)} / ${ms(hooksMedian('hermesd'), 1)}`,
          'hermesd ÷ floor, in hooks': `${hookRatio.toFixed(2)}×`,
        });
        cpuRows.push({
          repository: repo.label,
          'tracked files': files.length,
          measure: `commit of ${size} file${size > 1 ? 's' : ''}, all hooks`,
          'daemon CPU (median, mean)': cpuFigure(cpu),
        });
        goals.push({
          measure: `${size}-file commit (add -A && commit), all hermesd's hooks, ${repo.label}: added time ÷ the sh floor's (and git's time in hook children, trace2)`,
          result: `${ratio.toFixed(2)}× (${added('hermesd').toFixed(1)} vs ${added('floor').toFixed(1)} ms); in hooks ${hookRatio.toFixed(2)}× (${hooksMedian('hermesd').toFixed(1)} vs ${hooksMedian('floor').toFixed(1)} ms)`,
          goal: `≤ ${GOAL_RATIO}×`,
          // A floor that adds nothing measurable (git's own noise is larger) decides nothing.
          met: added('floor') > 0 ? ratio <= GOAL_RATIO : undefined,
        });
        goals.push({
          measure: `daemon CPU per ${size}-file commit, ${repo.label}`,
          result: `${cpuFigure(cpu)}; the first ${WARM_COMMITS} of that size after its start: ${cpuFigure(cold.get(size)!)}`,
          goal: `≤ ${GOAL_CPU_COMMIT} ms`,
          met: median(cpu) <= GOAL_CPU_COMMIT,
        });
      }
      // An index write with the hooks bypassed: the daemon's reaction (it judges the index ahead).
      const writes: number[] = [];
      for (let r = 0; r < indexWritesAt(files.length); r++) {
        const f = changed(files, 1, 100 + r)[0]!;
        writeFileSync(join(hermes.dir, f), `// index write ${r}\n`);
        writes.push(await windowCpu(() => void run(['git', '-c', 'core.hooksPath=/dev/null', 'add', f], hermes.dir, env))());
      }
      cpuRows.push({
        repository: repo.label,
        'tracked files': files.length,
        measure: 'index write, hooks bypassed',
        'daemon CPU (median, mean)': cpuFigure(writes),
      });
      goals.push({
        measure: `daemon CPU per index write with the hooks bypassed, ${repo.label}`,
        result: `${cpuFigure(writes)} over ${writes.length} writes`,
        goal: `≤ ${GOAL_CPU_INDEX} ms`,
        met: median(writes) <= GOAL_CPU_INDEX,
      });
      // Commits as a person makes them, seconds apart: the daemon's CPU over each commit and the
      // SPREAD_MS after it, its idle work included (the rounds' windows end AFTER_MS after the commit).
      const spread: number[] = [];
      for (let r = 0; r < SPREAD_COMMITS; r++) {
        writeFileSync(join(hermes.dir, changed(files, 1, 300 + r)[0]!), `// spread ${r}\n`);
        const c0 = cpuMs(pid);
        const t0 = Date.now();
        run(['sh', '-c', `git add -A && git commit -qm "spread ${r}"`], hermes.dir, env);
        await sleep(SPREAD_MS);
        spread.push(Math.max(0, cpuMs(pid) - c0 - idlePerMs * (Date.now() - t0)));
      }
      cpuRows.push({
        repository: repo.label,
        'tracked files': files.length,
        measure: `commit of 1 file, all hooks, ${SPREAD_MS / 1000} s apart (the daemon's work after it included)`,
        'daemon CPU (median, mean)': cpuFigure(spread),
      });
      goals.push({
        measure: `daemon CPU per 1-file commit, commits ${SPREAD_MS / 1000} s apart (its idle work after each included), ${repo.label}`,
        result: `${cpuFigure(spread)} over ${spread.length} commits`,
        goal: `≤ ${GOAL_CPU_COMMIT} ms`,
        met: median(spread) <= GOAL_CPU_COMMIT,
      });
      spawnSync(process.execPath, [CLI, 'stop'], { cwd: hermes.dir, env });
      // The stopped daemon may still be closing its files in the copy: removal tries again.
      for (const dir of [...copies.map((c) => c.dir), origin]) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
    printTable(
      "the daemon's status asked one question after another: idle, then from the start of the first commit after the daemon's start (add -A && commit, all hooks) for 2.5 s; the longest wait is the longest the daemon held its loop",
      stallRows,
    );
    printTable(
      `commits by repository size, ${SIZES.map(runsAt).join('/')} rounds per peer; peers in turn (NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'})`,
      rows,
    );
    printTable(
      "the daemon's CPU (its own threads; the git processes it starts not counted), less its idle CPU over the same time; the median and the mean over the rounds (each thread's /proc schedstat, in ns)",
      cpuRows,
    );
    printNote(
      "Added time = the median over rounds of (the peer's commit − the hook-less commit of the same round). hermesd's post-commit hook returns once its question is written to the daemon's socket; its audit and evidence run after, inside the CPU window. The floor runs one `git diff --cached` and `grep` in a pre-commit hook.",
    );
    rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    return goals;
  },
};

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await bench.run();
}
