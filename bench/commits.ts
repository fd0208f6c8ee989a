/**
 * `hermesd check --commits` over a ~700-commit range of a real public repository's history: the
 * whole CLI process (Node's start, the rules read from the range's base, the range's diffs), with
 * the rules `hermesd init` writes (its `no-secrets` rule: gitleaks' rule set) and with three
 * custom forbid rules and a protect rule, next to the floor a script would set, `git log -p
 * <range> | grep -E` of the three forbid patterns, and the peer a JavaScript user would reach
 * for, secretlint (bench/secretlint-range.ts: secretlint's recommended preset over what each
 * commit adds to each file, read from one `git log -p -U0` stream of the same range, its own
 * process, Node's start and secretlint's loading included; its profiler turned off, see there).
 * All measured in the same run, round by round in a new random order, with NODE_EXTRA_CA_CERTS
 * as this environment has it and without (each Node process start pays for it); the floor is
 * one process of git and grep, whatever the setting. Medians; the ratios are taken within each
 * round, then their median. gitleaks' own `git` scan cannot run here: Debian 12 has no gitleaks
 * package, and the one npm build is WebAssembly whose `git` command stops at "pipe: not
 * implemented on js". Also shown once: the range judged the way the push broker and the
 * post-commit audit judge commits, one git process per commit (guard/commits.ts), which check
 * --commits replaces with three for the range.
 *
 * The repository is read from HERMESD_BENCH_REPO (a clone or a bare git dir; nothing of it is
 * copied into this repository). The rules go into commits made on top of the range's base in a
 * scratch repository that borrows the objects (git's alternates), so the repository is only
 * read. HERMESD_BENCH_TIP picks the tip (default: its HEAD), HERMESD_BENCH_NAME the name shown
 * (default: from its origin URL), HERMESD_BENCH_RUNS the rounds (9).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../src/config/schema.js';
import { commitViolations } from '../src/guard/commits.js';
import { INIT_CONFIG_TEMPLATE } from '../src/version.js';
import { median, printNote, printTable, shuffled, type Bench } from './table.js';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(DIST, 'cli', 'main.js');
const SECRETLINT = join(DIST, 'bench', 'secretlint-range.js');
/** The range: the first first-parent ancestor of the tip whose range holds at least this many commits. */
const RANGE_COMMITS = 700;
const ROUNDS = Number(process.env.HERMESD_BENCH_RUNS ?? 9);
/** The issue's goals: check --commits ÷ the grep floor; and ÷ secretlint, under 1 (faster). */
const GOAL = 1.5;
const PEER_GOAL = 1;

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
  '  git clone --bare https://github.com/pallets/flask /tmp/flask.git',
  '  HERMESD_BENCH_REPO=/tmp/flask.git npm run bench -- commits',
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
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): { ms: number; cpuMs: number; stdout: string; code: number } {
  const t = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', '"$@"; code=$?; times >&2; exit $code', 'timed', cmd, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
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

    // A scratch repository that reads the objects where they are, with each set of rules committed on top of the base.
    const scratch = mkdtempSync(join(tmpdir(), 'hd-bench-commits-'));
    try {
      git(scratch, ['init', '-q']);
      writeFileSync(join(scratch, '.git', 'objects', 'info', 'alternates'), (isAbsolute(objects) ? objects : resolve(repo, objects)) + '\n');
      // The source's branches and tags, as a clone has them (not a mirror's pull-request refs):
      // the guard reads every version of a secret file that any ref reaches, not only the range's.
      const refs = git(repo, ['for-each-ref', '--format=create %(refname) %(objectname)', 'refs/heads', 'refs/tags']);
      git(scratch, ['update-ref', '--stdin'], refs + '\n');
      const refCount = refs.split('\n').filter(Boolean).length;
      const reachable = Number(git(scratch, ['rev-list', '--count', '--all']));
      // The tip checked out, as CI checks out what it judges: the guard looks for secret files
      // (.env, keys) in the work tree, and where there are some it reads their whole history.
      git(scratch, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', tip]);
      const rulesOnBase = (text: string, message: string) => {
        const blob = git(scratch, ['hash-object', '-w', '--stdin'], text);
        const hermes = git(scratch, ['mktree'], `100644 blob ${blob}\tconfig.yaml\n`);
        const top = git(scratch, ['ls-tree', `${base}^{tree}`])
          .split('\n')
          .filter((l) => !l.endsWith('\t.hermes'));
        const tree = git(scratch, ['mktree'], [...top, `040000 tree ${hermes}\t.hermes`].join('\n') + '\n');
        return git(scratch, ['commit-tree', '-p', base, '-m', message, tree], '');
      };
      const customCommit = rulesOnBase(RULES, 'the rules that judge the range');
      // The config `hermesd init` writes, as it writes it.
      const initCommit = rulesOnBase(readFileSync(INIT_CONFIG_TEMPLATE, 'utf8'), "hermesd init's config");
      const commits = Number(git(scratch, ['rev-list', '--count', `${base}..${tip}`]));
      const merges = Number(git(scratch, ['rev-list', '--count', '--merges', `${base}..${tip}`]));

      const floor = ['-c', `git log -p ${base}..${tip} | LC_ALL=C grep -E -c ${FORBID.map((p) => `-e '${p}'`).join(' ')}`];
      type Kind = 'default' | 'custom' | 'secretlint';
      const kinds: Kind[] = ['default', 'custom', 'secretlint'];
      const argsOf: Record<Kind, string[]> = {
        default: [CLI, 'check', '--commits', `${initCommit}..${tip}`, '--json'],
        custom: [CLI, 'check', '--commits', `${customCommit}..${tip}`, '--json'],
        secretlint: [SECRETLINT, `${base}..${tip}`],
      };
      // NODE_EXTRA_CA_CERTS as this environment has it, and unset: every Node process's start pays for it.
      const cas = process.env.NODE_EXTRA_CA_CERTS ? (['set', 'unset'] as const) : (['unset'] as const);
      type Ca = (typeof cas)[number];
      const envOf = (ca: Ca): NodeJS.ProcessEnv => {
        if (ca === 'set') return process.env;
        const env = { ...process.env };
        delete env.NODE_EXTRA_CA_CERTS;
        return env;
      };
      const key = (k: Kind, ca: Ca) => `${k} ${ca}`;
      const wall = new Map<string, number[]>();
      const cpu = new Map<string, number[]>();
      const ratios = new Map<string, number[]>();
      const push = (m: Map<string, number[]>, k: string, v: number) => m.set(k, [...(m.get(k) ?? []), v]);
      let said: { default?: unknown[]; custom?: unknown[]; secretlint?: string; grep?: number } = {};
      for (let round = -1; round < ROUNDS; round++) {
        // Round -1 warms the page cache and is not counted; each round runs its setups in a new random order.
        const setups: Array<{ k: Kind | 'floor'; ca: Ca }> = shuffled([
          ...kinds.flatMap((k) => cas.map((ca) => ({ k, ca }))),
          { k: 'floor' as const, ca: cas[0] },
        ]);
        const got = new Map<string, ReturnType<typeof timed>>();
        for (const { k, ca } of setups) {
          const r = k === 'floor' ? timed('sh', floor, scratch) : timed(process.execPath, argsOf[k], scratch, envOf(ca));
          if (k !== 'floor' && k !== 'secretlint' && r.code !== 0 && r.code !== 1) throw new Error(`hermesd check --commits exited ${r.code}: ${r.stdout}`);
          if (k === 'secretlint' && r.code !== 0) throw new Error(`bench/secretlint-range.ts exited ${r.code}: ${r.stdout}`);
          got.set(k === 'floor' ? 'floor' : key(k, ca), r);
        }
        const floorRun = got.get('floor')!;
        said = {
          default: said.default ?? (JSON.parse(got.get(key('default', cas[0]))!.stdout) as { violations: unknown[] }).violations,
          custom: said.custom ?? (JSON.parse(got.get(key('custom', cas[0]))!.stdout) as { violations: unknown[] }).violations,
          secretlint: got.get(key('secretlint', cas[0]))!.stdout.trim(),
          grep: Number(floorRun.stdout.trim()) || 0,
        };
        if (round < 0) continue;
        push(wall, 'floor', floorRun.ms);
        push(cpu, 'floor', floorRun.cpuMs);
        for (const ca of cas) {
          for (const k of kinds) {
            const r = got.get(key(k, ca))!;
            push(wall, key(k, ca), r.ms);
            push(cpu, key(k, ca), r.cpuMs);
            if (k !== 'secretlint') push(ratios, `${k}/floor ${ca}`, r.ms / floorRun.ms);
          }
          push(ratios, `default/secretlint ${ca}`, got.get(key('default', ca))!.ms / got.get(key('secretlint', ca))!.ms);
        }
      }
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

      const s = (x: number) => `${(x / 1000).toFixed(2)} s`;
      const x = (r: number) => `${r.toFixed(2)}×`;
      const col = (ca: Ca) => `NODE_EXTRA_CA_CERTS ${ca}`;
      const row = (what: string, f: (ca: Ca) => string) => ({ what, ...Object.fromEntries(cas.map((ca) => [col(ca), f(ca)])), runs: ROUNDS });
      printTable(
        `${name}: ${commits.toLocaleString('en-US')} commits (${merges} merges), ${base.slice(0, 10)}..${tip.slice(0, 10)}; ${refCount} refs reaching ${reachable.toLocaleString('en-US')} commits`,
        [
          row("hermesd check --commits, init's rules (no-secrets: gitleaks' rule set), the whole CLI process", (ca) =>
            s(median(wall.get(key('default', ca))!)),
          ),
          row('hermesd check --commits, 3 forbid rules + 1 protect rule', (ca) => s(median(wall.get(key('custom', ca))!))),
          row('peer: secretlint preset-recommend over each commit’s added lines (bench/secretlint-range.ts)', (ca) =>
            s(median(wall.get(key('secretlint', ca))!)),
          ),
          row('floor: git log -p <range> | grep -E (the 3 forbid patterns; no Node)', () => s(median(wall.get('floor')!))),
          row("init's rules ÷ floor (paired by round, median)", (ca) => x(median(ratios.get(`default/floor ${ca}`)!))),
          row('3 forbid + 1 protect ÷ floor (paired by round, median)', (ca) => x(median(ratios.get(`custom/floor ${ca}`)!))),
          row("init's rules ÷ secretlint (paired by round, median)", (ca) => x(median(ratios.get(`default/secretlint ${ca}`)!))),
          row("CPU time, user + system, of the process and its children: init's rules", (ca) => s(median(cpu.get(key('default', ca))!))),
          row('CPU time: 3 forbid + 1 protect', (ca) => s(median(cpu.get(key('custom', ca))!))),
          row('CPU time: secretlint', (ca) => s(median(cpu.get(key('secretlint', ca))!))),
          row('CPU time: the floor (sh, git log, grep)', () => s(median(cpu.get('floor')!))),
          {
            what: 'one git process per commit, 3 forbid + 1 protect (guard/commits.ts, in-process)',
            ...Object.fromEntries(cas.map((ca) => [col(ca), s(perCommit)])),
            runs: 1,
          },
        ],
      );
      const [slCommits, slFiles, slFindings] = (said.secretlint ?? '').split(' ');
      printNote(
        `Findings: check --commits with init's rules ${said.default?.length ?? 0} violations, with the 3 forbid + 1 protect rules ${said.custom?.length ?? 0}, ` +
          `in ${commits} commits (a merge judged on what differs from every parent); secretlint ${slFindings} findings in ${slFiles} commit-file sources of ${slCommits} commits (merges not diffed); ` +
          `grep ${said.grep} matching lines of \`git log -p\` (context and removed lines included, merges not diffed). The tip: ${tip}.`,
      );
      const both = (f: (ca: Ca) => string) => cas.map((ca) => `${f(ca)} (CA ${ca})`).join('; ');
      const ratioOf = (k: string, ca: Ca) => median(ratios.get(`${k} ${ca}`)!);
      return [
        {
          measure: `\`check --commits\` over ${commits.toLocaleString('en-US')} commits of ${name}, init's rules ÷ \`git log -p | grep\``,
          result: both((ca) => `${x(ratioOf('default/floor', ca))}, ${s(median(wall.get(key('default', ca))!))} vs ${s(median(wall.get('floor')!))}`),
          goal: `≤ ${GOAL}×`,
          met: cas.every((ca) => ratioOf('default/floor', ca) <= GOAL),
        },
        {
          measure: `\`check --commits\` over the same range, init's rules ÷ secretlint (its recommended preset, each commit's added lines)`,
          result: both(
            (ca) => `${x(ratioOf('default/secretlint', ca))}, ${s(median(wall.get(key('default', ca))!))} vs ${s(median(wall.get(key('secretlint', ca))!))}`,
          ),
          goal: `< ${PEER_GOAL}× (faster)`,
          met: cas.every((ca) => ratioOf('default/secretlint', ca) < PEER_GOAL),
        },
        {
          measure: `\`check --commits\` over the same range, 3 forbid rules + 1 protect rule ÷ \`git log -p | grep\` of the same patterns`,
          result: both((ca) => `${x(ratioOf('custom/floor', ca))}, ${s(median(wall.get(key('custom', ca))!))}`) + `; a git process per commit ${s(perCommit)}`,
          goal: `≤ ${GOAL}×`,
          met: cas.every((ca) => ratioOf('custom/floor', ca) <= GOAL),
        },
      ];
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};
