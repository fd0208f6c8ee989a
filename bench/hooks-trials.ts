/**
 * Randomised "never lose work" trials: a repository with partially staged files, untracked
 * and binary files, deletions, renames, mode changes and symlinks; a hook (bench/
 * hooks-trial-hook.ts) and its daemon (bench/hooks-trial-worker.ts: saves the state, touches
 * the work tree and the index, restores), each a real process. At a random instant one of
 * them is interrupted, or both, or none:
 *   - the daemon SIGINTed (a shutdown): it restores by itself;
 *   - the daemon SIGKILLed: the hook, still alive, restores the backup itself (src/githooks/recover.ts);
 *   - the hook SIGKILLed: the daemon sees its connection close and restores;
 *   - both SIGKILLed (a power cut): the backup waits for a manual `hermesd hook restore`.
 * Then whatever is still pending is restored by hand, as the next-command notice asks. Every
 * byte of the index file and of every file in the work tree is compared with the state before.
 *
 * `node dist/bench/hooks-trials.js [n]` runs n trials (default 500) and prints the tally;
 * `npm run bench -- hooks-trials [--write]` runs HERMESD_BENCH_TRIALS of them (default 500) as
 * a benchmark with its table; test/githooks/hooks-never-lose-work.test.ts runs a smaller number.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pendingBackups, recoverBackup } from '../src/githooks/backup.js';
import { printTable, type Bench } from './table.js';

const HOOK = join(dirname(fileURLToPath(import.meta.url)), 'hooks-trial-hook.js');
const HOOK_JS = HOOK.includes('/dist/') ? HOOK : HOOK.replace(/\/bench\//, '/dist/bench/');

type Fingerprint = { index: Buffer; files: Map<string, { kind: string; mode: number; data: Buffer }> };

export type Interrupt = 'none' | 'daemon-sigint' | 'daemon-kill' | 'hook-kill' | 'both-kill';

export type TrialTally = {
  trials: number;
  /** Trials by what was interrupted. */
  interrupts: Record<Interrupt, number>;
  /** Backups put back without the user: by the daemon itself (SIGINT, its hook gone) or by the hook (its daemon gone). */
  automaticRestores: { byDaemon: number; byHook: number };
  /** Backups left for `hermesd hook restore`. */
  manualRestores: number;
  /** …of which after a trial where only the daemon was killed (goal: 0). */
  manualAfterDaemonKill: number;
  bytesLost: number;
  lostTrials: Array<{ seed: number; interrupt: Interrupt; lost: string[] }>;
  /** Interrupts land at a random instant in [0, this) ms after the daemon is up: the uninterrupted sequence's time here, with a margin. */
  windowMs: number;
};

/** The shortest window for an interrupt's instant (the sequence takes some tens of ms on an idle machine). */
const MIN_WINDOW_MS = 120;

function makeRand(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const gitEnv = () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  for (const k of Object.keys(env))
    if (k.startsWith('GIT_') && !k.startsWith('GIT_AUTHOR') && !k.startsWith('GIT_COMMITTER') && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k];
  return env;
};

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, env: gitEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
}

function randomBytesFrom(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

function content(rand: () => number, tag: string): Buffer {
  if (rand() < 0.25) return randomBytesFrom(rand, 1 + Math.floor(rand() * 3000)); // binary
  const lines = 1 + Math.floor(rand() * 30);
  return Buffer.from(Array.from({ length: lines }, (_, i) => `${tag} line ${i} ${Math.floor(rand() * 1e6)}`).join('\n') + (rand() < 0.8 ? '\n' : ''));
}

function write(root: string, rel: string, data: Buffer): void {
  const p = join(root, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, data);
}

/** A repository with a random history and a random, messy uncommitted state. */
export function makeTrialRepo(base: string, seed: number): string {
  const rand = makeRand(seed);
  const root = join(base, `t${seed}`);
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  const files: string[] = [];
  const n = 6 + Math.floor(rand() * 10);
  for (let i = 0; i < n; i++) {
    const rel = `${rand() < 0.4 ? `d${Math.floor(rand() * 3)}/` : ''}f${i}${rand() < 0.3 ? '.bin' : '.txt'}`;
    write(root, rel, content(rand, `v0 ${rel}`));
    files.push(rel);
  }
  if (rand() < 0.5) {
    chmodSync(join(root, files[0]!), 0o755);
  }
  if (rand() < 0.4) symlinkSync(files[1]!, join(root, 'link'));
  writeFileSync(join(root, '.gitignore'), 'ignored/\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'init');
  write(root, 'ignored/cache.bin', randomBytesFrom(rand, 100));

  const pick = () => files[Math.floor(rand() * files.length)]!;
  const ops = 3 + Math.floor(rand() * 8);
  for (let i = 0; i < ops; i++) {
    const r = rand();
    const f = pick();
    try {
      if (r < 0.15) {
        write(root, f, content(rand, `staged ${i}`));
        git(root, 'add', f);
      } else if (r < 0.35) {
        // partially staged: one version staged, another in the work tree
        write(root, f, content(rand, `staged ${i}`));
        git(root, 'add', f);
        write(root, f, content(rand, `unstaged ${i}`));
      } else if (r < 0.45) {
        write(root, f, content(rand, `unstaged only ${i}`));
      } else if (r < 0.52) {
        rmSync(join(root, f), { force: true });
      } else if (r < 0.58) {
        git(root, 'rm', '-q', '--cached', '--ignore-unmatch', f);
      } else if (r < 0.66) {
        const to = `renamed/${i}-${f.replace(/\//g, '_')}`;
        mkdirSync(join(root, 'renamed'), { recursive: true });
        git(root, 'mv', '-k', f, to);
        if (rand() < 0.5) write(root, to, content(rand, `renamed then edited ${i}`));
      } else if (r < 0.8) {
        write(root, `${rand() < 0.5 ? 'new/' : ''}untracked-${i}${rand() < 0.4 ? '.bin' : '.txt'}`, content(rand, `untracked ${i}`));
      } else if (r < 0.88) {
        const p = `added-${i}.txt`;
        write(root, p, content(rand, `added ${i}`));
        git(root, 'add', p);
        if (rand() < 0.5) write(root, p, content(rand, `added then edited ${i}`));
      } else if (r < 0.94) {
        chmodSync(join(root, f), rand() < 0.5 ? 0o755 : 0o644);
      } else {
        rmSync(join(root, f), { force: true });
        write(root, f, content(rand, `recreated ${i}`));
      }
    } catch {
      // an op that does not apply to this state (e.g. the file was renamed away)
    }
  }
  return root;
}

function walk(root: string, rel: string, out: Fingerprint['files']): void {
  for (const name of readdirSync(join(root, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    if (r === '.git') continue;
    const full = join(root, r);
    const st = lstatSync(full);
    if (st.isDirectory()) walk(root, r, out);
    else if (st.isSymbolicLink()) out.set(r, { kind: 'symlink', mode: 0, data: Buffer.from(readlinkSync(full)) });
    else out.set(r, { kind: 'file', mode: st.mode & 0o777, data: readFileSync(full) });
  }
}

export function fingerprint(root: string): Fingerprint {
  const files = new Map<string, { kind: string; mode: number; data: Buffer }>();
  walk(root, '', files);
  return { index: readFileSync(join(root, '.git', 'index')), files };
}

/** Bytes of the "before" state that are not exactly there in the "after" state, and which paths. */
export function compare(before: Fingerprint, after: Fingerprint): { bytesLost: number; lost: string[]; extra: string[] } {
  let bytesLost = 0;
  const lost: string[] = [];
  if (!before.index.equals(after.index)) {
    bytesLost += before.index.length;
    lost.push('.git/index');
  }
  for (const [path, b] of before.files) {
    const a = after.files.get(path);
    if (!a || a.kind !== b.kind || a.mode !== b.mode || !a.data.equals(b.data)) {
      bytesLost += Math.max(1, b.data.length);
      lost.push(path);
    }
  }
  const extra = [...after.files.keys()].filter((p) => !before.files.has(p));
  return { bytesLost, lost, extra };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Runs one trial's hook (which runs its daemon) and interrupts per `interrupt` after `delayMs`; resolves once both are gone. */
function runHook(
  root: string,
  seed: number,
  attempt: string,
  interrupt: Interrupt,
  delayMs: number,
): Promise<{ selfRestored: number; daemonRestored: boolean; ms: number }> {
  const marker = `${root}.daemon-restored`;
  let up = 0;
  return new Promise((resolve, reject) => {
    const hook = spawn(process.execPath, [HOOK_JS, root, join(root, '.git'), String(seed), attempt, marker], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: gitEnv(),
    });
    let out = '';
    let err = '';
    let daemonPid: number | undefined;
    hook.stderr.on('data', (d) => (err += d));
    hook.stdout.setEncoding('utf8');
    hook.stdout.on('data', (d: string) => {
      out += d;
      const m = /daemon (\d+)\n/.exec(out);
      if (m && daemonPid === undefined) {
        daemonPid = Number(m[1]);
        up = performance.now();
        if (interrupt === 'none') return;
        setTimeout(() => {
          const kill = (pid: number | undefined, sig: NodeJS.Signals) => {
            try {
              if (pid) process.kill(pid, sig);
            } catch {
              // already gone
            }
          };
          if (interrupt === 'daemon-sigint') kill(daemonPid, 'SIGINT');
          if (interrupt === 'daemon-kill' || interrupt === 'both-kill') kill(daemonPid, 'SIGKILL');
          if (interrupt === 'hook-kill' || interrupt === 'both-kill') kill(hook.pid, 'SIGKILL');
        }, delayMs);
      }
    });
    hook.on('error', reject);
    hook.on('close', async (code, signal) => {
      // A daemon whose hook was killed is still putting things back: wait for it to be gone.
      const end = Date.now() + 30_000;
      while (daemonPid !== undefined && alive(daemonPid) && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
      if (interrupt === 'none' && code !== 0) reject(new Error(`trial hook failed (${code ?? signal}): ${err}${out}`));
      else {
        const daemonRestored = existsSync(marker);
        rmSync(marker, { force: true });
        resolve({ selfRestored: Number(/self-restored (\d+)/.exec(out)?.[1] ?? 0), daemonRestored, ms: up ? performance.now() - up : 0 });
      }
    });
  });
}

function pick(r: number): Interrupt {
  if (r < 0.15) return 'none';
  if (r < 0.3) return 'daemon-sigint';
  if (r < 0.65) return 'daemon-kill';
  if (r < 0.85) return 'hook-kill';
  return 'both-kill';
}

export async function runTrials(n: number, opts: { firstSeed?: number; onProgress?: (i: number, t: TrialTally) => void } = {}): Promise<TrialTally> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-trials-')));
  const tally: TrialTally = {
    trials: 0,
    interrupts: { none: 0, 'daemon-sigint': 0, 'daemon-kill': 0, 'hook-kill': 0, 'both-kill': 0 },
    automaticRestores: { byDaemon: 0, byHook: 0 },
    manualRestores: 0,
    manualAfterDaemonKill: 0,
    bytesLost: 0,
    lostTrials: [],
    windowMs: MIN_WINDOW_MS,
  };
  try {
    // How long the save → touch → restore sequence takes on this machine now, uninterrupted: a
    // fixed window would put every interrupt before the backup is made on a busy machine (the
    // restores would then never be exercised), and after it on a fast one.
    const calibration = makeTrialRepo(base, 0);
    const { ms } = await runHook(calibration, 0, 'calibration', 'none', 0);
    rmSync(calibration, { recursive: true, force: true });
    tally.windowMs = Math.max(MIN_WINDOW_MS, Math.round(1.2 * ms));
    for (let i = 0; i < n; i++) {
      const seed = (opts.firstSeed ?? 1) + i;
      const rand = makeRand(seed * 7919);
      const root = makeTrialRepo(base, seed);
      const before = fingerprint(root);
      const interrupt = pick(rand());
      // Interrupts land before, during and after the save → touch → restore sequence.
      const { selfRestored, daemonRestored } = await runHook(root, seed, `${seed}:${i}`, interrupt, rand() * tally.windowMs);
      tally.interrupts[interrupt]++;
      tally.automaticRestores.byHook += selfRestored;
      if (daemonRestored) tally.automaticRestores.byDaemon++;
      for (const state of pendingBackups(join(root, '.git'))) {
        recoverBackup(join(root, '.git'), state.id);
        tally.manualRestores++;
        if (interrupt === 'daemon-kill') tally.manualAfterDaemonKill++;
      }
      const result = compare(before, fingerprint(root));
      tally.trials++;
      tally.bytesLost += result.bytesLost;
      if (result.lost.length) tally.lostTrials.push({ seed, interrupt, lost: result.lost });
      opts.onProgress?.(i, tally);
      rmSync(root, { recursive: true, force: true });
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return tally;
}

/** Enough trials that every kind of interrupt lands before, during and after the restore many times. */
const DEFAULT_TRIALS = 500;

export const bench: Bench = {
  name: 'hooks-trials',
  async run() {
    const n = Number(process.env.HERMESD_BENCH_TRIALS ?? DEFAULT_TRIALS);
    const t = await runTrials(n, {
      onProgress: (i, t) => {
        if ((i + 1) % 50 === 0)
          process.stdout.write(`${i + 1} trials, ${t.manualAfterDaemonKill} manual restores after a daemon kill, ${t.bytesLost} bytes lost\n`);
      },
    });
    const k = t.interrupts;
    printTable(`Randomised interrupt trials (${t.trials}): what was interrupted, who restored the work`, [
      { what: 'interrupted: nothing', count: k.none },
      { what: 'interrupted: the daemon, SIGINT (a shutdown)', count: k['daemon-sigint'] },
      { what: 'interrupted: the daemon, SIGKILL', count: k['daemon-kill'] },
      { what: 'interrupted: the hook, SIGKILL', count: k['hook-kill'] },
      { what: 'interrupted: both, SIGKILL (a power cut)', count: k['both-kill'] },
      { what: 'backups restored by the daemon itself', count: t.automaticRestores.byDaemon },
      { what: 'backups restored by the hook itself (its daemon gone)', count: t.automaticRestores.byHook },
      { what: 'backups left for `hermesd hook restore`, restored by hand', count: t.manualRestores },
      { what: '…of them after a trial where only the daemon was killed', count: t.manualAfterDaemonKill },
      { what: 'bytes lost (the index and every file compared)', count: t.bytesLost },
      { what: 'interrupts at a random instant within (ms after the daemon is up; the uninterrupted sequence here × 1.2, at least 120)', count: t.windowMs },
    ]);
    return [
      {
        measure: 'randomised interrupt trials (daemon, hook or both SIGKILLed, daemon SIGINTed, at random instants)',
        result: `${t.trials} trials, ${t.bytesLost} bytes lost; ${k['daemon-kill']} daemon kills, ${t.manualAfterDaemonKill} manual restores after them`,
        goal: '0 bytes lost, 0 manual restores when only the daemon is killed',
        met: t.bytesLost === 0 && t.manualAfterDaemonKill === 0,
      },
    ];
  },
};

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const n = Number(process.argv[2] ?? DEFAULT_TRIALS);
  const t0 = Date.now();
  const tally = await runTrials(n, {
    onProgress: (i, t) => {
      if ((i + 1) % 50 === 0)
        process.stdout.write(`${i + 1} trials, ${t.manualAfterDaemonKill} manual restores after a daemon kill, ${t.bytesLost} bytes lost\n`);
    },
  });
  process.stdout.write(JSON.stringify({ ...tally, seconds: Math.round((Date.now() - t0) / 1000) }, null, 2) + '\n');
  process.exitCode = tally.bytesLost === 0 && tally.manualAfterDaemonKill === 0 ? 0 : 1;
}
