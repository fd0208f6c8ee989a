/**
 * `hermesd check --commits` over a ~1,000-commit range of a real public repository's history
 *: the whole CLI process (Node's start, the rules read from the range's base, one
 * `git diff-tree` for the range) next to the floor a script would set, `git log -p <range> |
 * grep -E` of the same forbid patterns, measured in the same run, taking turns round by round;
 * and the same range judged by init's default rules (the base has no config: its secrets rule,
 * gitleaks' rule set) beside secretlint (preset-recommend, the peer a JS user would reach for)
 * over the lines `git log -p` shows added (bench/secretlint-range.ts).
 * gitleaks' own `git` scan is the peer the issue names, but it cannot run here: Debian 12 has
 * no gitleaks package, and the one npm build is WebAssembly whose `git` command stops at "pipe:
 * not implemented on js"; so the grep floor is the measure. Also shown once: the same range
 * judged the way the push broker and the post-commit audit judge commits, one git process per
 * commit (guard/commits.ts), which check --commits replaces with one for the range.
 *
 * The repository is read from HERMESD_BENCH_REPO (a clone or a bare git dir; nothing of it is
 * copied into this repository). The rules go into a commit made on top of the range's base in a
 * scratch repository that borrows the objects (git's alternates), so the repository is only
 * read. HERMESD_BENCH_TIP picks the tip (default: its HEAD), HERMESD_BENCH_NAME the name shown
 * (default: from its origin URL).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../src/config/schema.js';
import { commitViolations } from '../src/guard/commits.js';
import { median, printNote, printTable, type Bench } from './table.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');
/** The secretlint peer (bench/secretlint-range.ts). */
const SECRETLINT = join(dirname(fileURLToPath(import.meta.url)), 'secretlint-range.js');
/** The range: the first first-parent ancestor of the tip whose range holds at least this many commits. */
const RANGE_COMMITS = 1000;
const ROUNDS = Number(process.env.HERMESD_BENCH_RUNS ?? 9);
/** The issue's goal: check --commits ÷ the grep floor. */
const GOAL = 1.5;

/** Three secret shapes and a protected folder: what a repository's rules hold (grep can do the first three). */
const FORBID = ['AKIA[0-9A-Z]{16}', '-----BEGIN [A-Z ]*PRIVATE KEY-----', 'gh[pousr]_[A-Za-z0-9]{36}'];
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "${FORBID[0]}"
  - id: no-private-keys
    message: Never commit private keys.
    forbid: "${FORBID[1]}"
  - id: no-github-tokens
    message: Never commit GitHub tokens.
    forbid: "${FORBID[2]}"
  - id: ci-owned
    message: CI workflows are changed by maintainers only.
    protect: [".github/workflows/**"]
`;

const HOW_TO = [
  'bench commits: set HERMESD_BENCH_REPO to a git repository with a long history (a clone or a bare copy), e.g.',
  '  git clone --bare https://github.com/expressjs/express /tmp/express.git',
  '  HERMESD_BENCH_REPO=/tmp/express.git npm run bench -- commits',
].join('\n');

const git = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 }).trim();

/** bash's `times` line for the children: user and system time, e.g. `0m0.650s 0m0.080s`. */
const seconds = (s: string) =>
  s.split(' ').reduce((sum, x) => sum + Number(/(\d+)m([\d.]+)s/.exec(x)?.[1] ?? 0) * 60 + Number(/(\d+)m([\d.]+)s/.exec(x)?.[2] ?? 0), 0);

/**
 * Wall time of a command, in ms, its CPU time (user + system of it and every process it
 * waited for, from bash's `times`: on a shared machine the steadier measure) and what it printed.
 */
function timed(cmd: string, args: string[], cwd: string): { ms: number; cpuMs: number; stdout: string; code: number } {
  const t = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', '"$@"; code=$?; times >&2; exit $code', 'timed', cmd, ...args], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const children = r.stderr.trim().split('\n').pop() ?? '';
  return { ms, cpuMs: seconds(children) * 1000, stdout: r.stdout, code: r.status ?? -1 };
}

/** The tip's first-parent ancestor B with the fewest commits in B..tip that are still ≥ RANGE_COMMITS. */
function pickBase(repo: string, tip: string): string {
  const chain = git(repo, ['rev-list', '--first-parent', tip]).split('\n');
  const count = (i: number) => Number(git(repo, ['rev-list', '--count', `${chain[i]}..${tip}`]));
  let lo = 1;
  let hi = chain.length - 1;
  if (count(hi) < RANGE_COMMITS)
    throw new Error(`${repo}: ${tip} has fewer than ${RANGE_COMMITS} commits behind it; pick a longer history (HERMESD_BENCH_TIP, HERMESD_BENCH_REPO).`);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (count(mid) >= RANGE_COMMITS) hi = mid;
    else lo = mid + 1;
  }
  return chain[lo]!;
}

export const bench: Bench = {
  name: 'commits',
  async run() {
    const source = process.env.HERMESD_BENCH_REPO;
    if (!source) throw new Error(HOW_TO);
    const repo = resolve(source);
    const objects = resolve(repo, git(repo, ['rev-parse', '--git-common-dir']), 'objects');
    const tip = git(repo, ['rev-parse', '--verify', `${process.env.HERMESD_BENCH_TIP ?? 'HEAD'}^{commit}`]);
    const base = pickBase(repo, tip);
    const url = spawnSync('git', ['config', '--get', 'remote.origin.url'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
    const name = process.env.HERMESD_BENCH_NAME ?? (url ? url.replace(/^.*[/:]([^/]+\/[^/]+?)(\.git)?$/, '$1') : repo);

    // A scratch repository that reads the objects where they are, with the rules committed on top of the base.
    const scratch = mkdtempSync(join(tmpdir(), 'hd-bench-commits-'));
    try {
      git(scratch, ['init', '-q', '--bare']);
      writeFileSync(join(scratch, 'objects', 'info', 'alternates'), (isAbsolute(objects) ? objects : resolve(repo, objects)) + '\n');
      const blob = git(scratch, ['hash-object', '-w', '--stdin'], RULES);
      const hermes = git(scratch, ['mktree'], `100644 blob ${blob}\tconfig.yaml\n`);
      const top = git(scratch, ['ls-tree', `${base}^{tree}`])
        .split('\n')
        .filter((l) => !l.endsWith('\t.hermes'));
      const tree = git(scratch, ['mktree'], [...top, `040000 tree ${hermes}\t.hermes`].join('\n') + '\n');
      const rulesCommit = git(scratch, ['commit-tree', '-p', base, '-m', 'the rules that judge the range', tree], '');
      const commits = Number(git(scratch, ['rev-list', '--count', `${base}..${tip}`]));
      const merges = Number(git(scratch, ['rev-list', '--count', '--merges', `${base}..${tip}`]));

      const check = ['check', '--commits', `${rulesCommit}..${tip}`, '--json'];
      // The base has no .hermes/config.yaml: the range is judged by init's default rules (its secrets rule, gitleaks' rule set).
      const checkDefaults = ['check', '--commits', `${base}..${tip}`, '--json'];
      const floor = ['-c', `git log -p ${base}..${tip} | LC_ALL=C grep -E -c ${FORBID.map((p) => `-e '${p}'`).join(' ')}`];
      const peers = {
        ours: () => timed(process.execPath, [CLI, ...check], scratch),
        defaults: () => timed(process.execPath, [CLI, ...checkDefaults], scratch),
        floor: () => timed('sh', floor, scratch),
        secretlint: () => timed(process.execPath, [SECRETLINT, scratch, `${base}..${tip}`], scratch),
      };
      type PeerName = keyof typeof peers;
      const names = Object.keys(peers) as PeerName[];
      const wall = new Map<PeerName, number[]>(names.map((n) => [n, []]));
      const cpu = new Map<PeerName, number[]>(names.map((n) => [n, []]));
      const ratios: number[] = [];
      const defaultRatios: number[] = [];
      const secretlintRatios: number[] = [];
      let verdict: { violations: unknown[]; commits: number } | undefined;
      let defaultVerdict: { violations: unknown[]; commits: number } | undefined;
      let grepHits = 0;
      let secretlintSaid = '';
      for (let round = -1; round < ROUNDS; round++) {
        // Turns rotate who goes first; round -1 warms the page cache and is not counted.
        const order = names.map((_, k) => names[(k + Math.max(0, round)) % names.length]!);
        const got = new Map<PeerName, ReturnType<typeof timed>>();
        for (const n of order) got.set(n, peers[n]());
        const a = got.get('ours')!;
        const d = got.get('defaults')!;
        const b = got.get('floor')!;
        const sl = got.get('secretlint')!;
        for (const [n, r] of [
          ['ours', a],
          ['defaults', d],
        ] as const)
          if (r.code !== 0 && r.code !== 1) throw new Error(`hermesd check --commits (${n}) exited ${r.code}: ${r.stdout}`);
        if (sl.code !== 0) throw new Error(`secretlint over the range exited ${sl.code}: ${sl.stdout}`);
        verdict ??= JSON.parse(a.stdout) as { violations: unknown[]; commits: number };
        defaultVerdict ??= JSON.parse(d.stdout) as { violations: unknown[]; commits: number };
        grepHits = Number(b.stdout.trim()) || 0;
        secretlintSaid = sl.stdout.trim();
        if (round < 0) continue;
        for (const n of names) {
          wall.get(n)!.push(got.get(n)!.ms);
          cpu.get(n)!.push(got.get(n)!.cpuMs);
        }
        ratios.push(a.ms / b.ms);
        defaultRatios.push(d.ms / b.ms);
        secretlintRatios.push(d.ms / sl.ms);
      }
      const ours = wall.get('ours')!;
      const theirs = wall.get('floor')!;
      const oursCpu = cpu.get('ours')!;
      const theirsCpu = cpu.get('floor')!;
      const t0 = performance.now();
      const config = configSchema().parse({
        rules: [
          { id: 'no-aws-keys', message: 'm', forbid: FORBID[0] },
          { id: 'no-private-keys', message: 'm', forbid: FORBID[1] },
          { id: 'no-github-tokens', message: 'm', forbid: FORBID[2] },
          { id: 'ci-owned', message: 'm', protect: ['.github/workflows/**'] },
        ],
      });
      const list = git(scratch, ['rev-list', '--parents', `${base}..${tip}`])
        .split('\n')
        .map((l) => l.split(' '));
      for (const [commit, ...parents] of list) await commitViolations(scratch, config, { commit: commit!, parents });
      const perCommit = performance.now() - t0;

      const ratio = median(ratios);
      const defaultRatio = median(defaultRatios);
      const secretlintRatio = median(secretlintRatios);
      const s = (x: number) => `${(x / 1000).toFixed(2)} s`;
      printTable(
        `${name}: ${commits.toLocaleString('en-US')} commits (${merges} merges), ${base.slice(0, 10)}..${tip.slice(0, 10)}; peers in turn, ${ROUNDS} rounds (NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'})`,
        [
          { what: 'hermesd check --commits, 3 forbid rules + 1 protect rule (the whole CLI process)', median: s(median(ours)), runs: ours.length },
          { what: "hermesd check --commits, init's default rules (secrets: gitleaks' rule set)", median: s(median(wall.get('defaults')!)), runs: ours.length },
          { what: 'floor: git log -p <range> | grep -E (the 3 forbid patterns)', median: s(median(theirs)), runs: theirs.length },
          {
            what: "secretlint (preset-recommend) over git log -p's added lines, one lintSource call",
            median: s(median(wall.get('secretlint')!)),
            runs: ours.length,
          },
          { what: 'check --commits (3 rules) ÷ floor (paired by round, median)', median: `${ratio.toFixed(2)}×`, runs: ratios.length },
          { what: 'check --commits (default rules) ÷ floor', median: `${defaultRatio.toFixed(2)}×`, runs: ratios.length },
          { what: 'check --commits (default rules) ÷ secretlint', median: `${secretlintRatio.toFixed(2)}×`, runs: ratios.length },
          { what: 'CPU time, user + system, of the process and its children: check --commits (3 rules)', median: s(median(oursCpu)), runs: oursCpu.length },
          { what: 'CPU time: check --commits (default rules)', median: s(median(cpu.get('defaults')!)), runs: oursCpu.length },
          { what: 'CPU time, user + system: the floor (sh, git log, grep)', median: s(median(theirsCpu)), runs: theirsCpu.length },
          { what: 'CPU time: secretlint', median: s(median(cpu.get('secretlint')!)), runs: oursCpu.length },
          { what: 'one git process per commit (guard/commits.ts, in-process)', median: s(perCommit), runs: 1 },
        ],
      );
      printNote(
        `Findings: check --commits ${verdict?.violations.length ?? 0} violations (3 rules) and ${defaultVerdict?.violations.length ?? 0} (default rules) in ${verdict?.commits ?? 0} commits (a merge judged on what differs from every parent; the protect rule included); ` +
          `grep ${grepHits} matching lines of \`git log -p\` (context and removed lines included, merges not diffed); ${secretlintSaid} (merges not diffed). The tip: ${tip}. ` +
          'The scratch repository is bare: the secret-value rule (values of secret files in a work tree) is skipped, as in a CI clone without such files.',
      );
      return [
        {
          measure: `\`check --commits\` over ${commits.toLocaleString('en-US')} commits of ${name} ÷ \`git log -p | grep\` of the same patterns`,
          result: `${ratio.toFixed(2)}× (${s(median(ours))} vs ${s(median(theirs))}; CPU ${(median(oursCpu) / median(theirsCpu)).toFixed(2)}×; a git process per commit ${s(perCommit)})`,
          goal: `≤ ${GOAL}×`,
          met: ratio <= GOAL,
        },
        {
          measure: `\`check --commits\` with init's default rules over the same range ÷ \`git log -p | grep\``,
          result: `${defaultRatio.toFixed(2)}× (${s(median(wall.get('defaults')!))} vs ${s(median(theirs))})`,
          goal: `≤ ${GOAL}×`,
          met: defaultRatio <= GOAL,
        },
        {
          measure: `\`check --commits\` with init's default rules ÷ secretlint over the same range`,
          result: `${secretlintRatio.toFixed(2)}× (${s(median(wall.get('defaults')!))} vs ${s(median(wall.get('secretlint')!))})`,
          goal: '< 1× (faster)',
          met: secretlintRatio < 1,
        },
      ];
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};
