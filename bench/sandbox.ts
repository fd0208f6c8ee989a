/**
 * Sandbox benchmark: what the sandbox adds to one `terminal` command, and what another agent's
 * shell call pays for its confinement. The same command is run through the whole guard
 * (snapshot, secret scan, run, restore, verify, judge) with the sandbox and without it, and also
 * bare (bwrap versus sh alone), in the same run, medians. Goal: ≤ 15 ms added per command. Then
 * the confine script other agents' shell calls run in (hermesd's one sandbox plan), run as an
 * agent's shell runs it, beside bubblewrap running `true` and the command alone, interleaved.
 * Goal: ≤ bubblewrap + 2 ms.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { findRealGit } from '../src/git/real-git.js';
import { agentShellPlan, confinedCommand, confineScript } from '../src/guard/agent-shell.js';
import { compilePreload } from '../src/guard/refused-preload.js';
import { bwrapMountArgs, sandboxAvailability } from '../src/guard/sandbox.js';
import { prepareGuardEnv, standaloneSandbox, withRepoLock } from '../src/guard/terminal-guard.js';
import { median, ms, printNote, printTable, shuffled, timeRuns, type Bench, type Row } from './table.js';
import { shQuote } from '../src/text/sh-quote.js';

const RUNS = 40;
/** What the confine script may add over a bare bubblewrap start: the plan's mounts and the script's own shell. */
const CONFINE_OVER_BWRAP_GOAL_MS = 2;
const FILES = 300;
/** What the sandbox may add to one guarded command: small beside the guard's own git processes. */
const ADDED_GOAL_MS = 15;

const config = configSchema().parse({
  rules: [
    { id: 'generated-files', message: 'Do not edit generated files.', protect: ['src/generated/**'] },
    { id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' },
  ],
});

function setup(): { base: string; repo: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-bench-sandbox-')));
  const repo = join(base, 'repo');
  mkdirSync(repo);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env });
  git('init', '-q', '-b', 'main');
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), text);
  };
  for (let i = 0; i < FILES; i++) write(`src/mod${i % 30}/file${i}.ts`, `export const v${i} = ${i};\n`);
  for (let i = 0; i < 20; i++) write(`src/generated/api${i}.ts`, `export const g${i} = ${i};\n`);
  write('.gitignore', '.env\nbuild/\n');
  write('.hermes/config.yaml', 'rules: []\n');
  git('add', '-A');
  git('commit', '-qm', 'init');
  write('.env', 'SMTP_PASS=correcthorse9battery\nAPI_TOKEN=tok3nvalue8Xq2\n');
  write('build/.env', 'BUILD_PASS=buildvalue2Hn7Tc\n');
  return { base, repo };
}

/** One guarded command from prepare to the redacted output, the way the terminal tool runs it. */
async function guarded(repo: string, command: string, sandboxed: boolean): Promise<void> {
  await withRepoLock(repo, async () => {
    const gitDir = join(repo, '.git');
    const run = prepareGuardEnv({
      root: repo,
      gitDir,
      commonDir: gitDir,
      config,
      realGit: findRealGit(),
      sandbox: sandboxed ? standaloneSandbox(gitDir) : undefined,
    });
    const { file, args } = run.command(command);
    const r = spawnSync(file, args, { cwd: repo, env: run.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${command} failed (${sandboxed ? 'sandboxed' : 'unsandboxed'}): ${r.stderr}`);
    await run.finish();
    run.redact(r.stdout + r.stderr);
  });
}

/**
 * The confine script of another agent's shell call in `repo` (guard/agent-shell.ts: the plan the
 * daemon makes, protected paths and git dirs read-only, /tmp writable), run as Claude Code runs a
 * Bash call (`bash -c <command given back>`), beside `bwrap --ro-bind / / true` (the floor: what
 * any bubblewrap start costs) and the command alone, interleaved.
 */
function confineRows(
  repo: string,
  availability: Extract<ReturnType<typeof sandboxAvailability>, { kind: 'bwrap' }>,
): { rows: Row[]; parts: string; script: number; floor: number; alone: number; over: number; mounts: number } {
  const gitDir = join(repo, '.git');
  const protectedFiles = Array.from({ length: 20 }, (_, i) => ({ rel: `src/generated/api${i}.ts`, generator: false }));
  const { plan, shared } = agentShellPlan({
    root: repo,
    gitDir,
    commonDir: gitDir,
    config,
    protectedFiles,
    home: join(repo, '..', 'hermes-home'),
    userHome: join(repo, '..'),
    tmpDirs: ['/tmp'],
  });
  const file = join(repo, '..', 'confine.sh');
  // The record of refused writes, as the daemon sets it up (guard/refused-preload.ts): the library each process loads, a session's record.
  const lib = join(repo, '..', 'refused.so');
  const why = compilePreload(lib);
  const refused = why ? undefined : { lib, folder: mkdtempSync(join(repo, '..', 'refused-')) };
  const record = refused ? '0123456789abcdef' : undefined;
  const text = confineScript({ bwrap: availability, plan, shell: '/bin/bash', shared, ...(refused ? { refused } : {}) });
  writeFileSync(file, text);
  const bwrap = shQuote(availability.path);
  const lines: Array<[string, string, number[]]> = [
    ['bash -c true (the command alone)', 'true', []],
    ['bash -c "bwrap --ro-bind / / true" (the floor)', `${bwrap} --ro-bind / / /bin/true`, []],
    ["bash -c \"/bin/sh <confine script> 'true'\" (hermesd's confinement)", confinedCommand(file, 'true', record), []],
  ];
  if (why) printNote(`The record of refused writes was not built (${why}): the confinement is measured without it.`);
  // Where the script's time goes: the same script with one part taken out, in the same rounds.
  const parts: Array<[string, string]> = [];
  const variant = (part: string, edit: (t: string) => string) => {
    const changed = edit(text);
    if (changed === text) throw new Error(`the confine script's part "${part}" was not found in it: the bench's edit no longer matches the script`);
    const f = join(repo, '..', `confine-${parts.length}.sh`);
    writeFileSync(f, changed);
    parts.push([part, f]);
    lines.push([`the confine script without ${part}`, confinedCommand(f, 'true', record), []]);
  };
  // Without a record's name the script preloads nothing.
  if (record)
    lines.push(['the confine script without the record of refused writes (a library preloaded into each process)', confinedCommand(file, 'true'), []]);
  const q = (s: string) => shQuote(s).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const roBindsUnder = (dir: string) => new RegExp(` '--ro-bind' ${q(dir).slice(0, -1)}/[^']*' '[^']*'`, 'g');
  variant('its own /dev (`--dev /dev`: device nodes of its own)', (t) => t.replace(" '--dev' '/dev'", ''));
  variant('its own /proc (`--proc /proc`)', (t) => t.replace(" '--proc' '/proc'", ''));
  variant("the read-only binds inside .git (the guard's files)", (t) => t.replace(roBindsUnder(gitDir), ''));
  variant('the read-only binds of protected paths', (t) => t.replace(roBindsUnder(join(repo, 'src')), ''));
  variant('the namespaces and the capability drop', (t) => t.replace(/ '--unshare-user'.*'--new-session'/, ''));
  lines.push(['bash -c "bwrap --ro-bind / / bash -c true" (a shell inside: the command is a shell line)', `${bwrap} --ro-bind / / /bin/bash -c true`, []]);
  lines.push([
    `bash -c "/bin/sh -c 'x=\$(bwrap --ro-bind / / true)'" (the script's shell and capture)`,
    `/bin/sh -c ${shQuote(`x=$(${bwrap} --ro-bind / / /bin/true)`)}`,
    [],
  ]);
  for (let i = 0; i < RUNS + 2; i++) {
    for (const [, line, times] of shuffled(lines)) {
      const t = performance.now();
      const r = spawnSync('bash', ['-c', line], { cwd: repo, stdio: 'ignore' });
      if (i >= 2) times.push(performance.now() - t);
      if (r.status !== 0) throw new Error(`${line}: exit ${r.status}`);
    }
  }
  const [alone, floor, script] = lines.map(([, , times]) => median(times)) as [number, number, number];
  const rows = lines.map(([what, , times]) => ({
    what,
    median: ms(median(times)),
    'over the floor': ms(median(times) - floor),
    'the part costs': what.startsWith('the confine script without')
      ? ms(script - median(times))
      : what.includes('(a shell inside') || what.includes("script's shell")
        ? ms(median(times) - floor)
        : '',
  }));
  const costs = lines
    .filter(([what]) => what.startsWith('the confine script without'))
    .map(([what, , times]) => `${what.replace('the confine script without ', '').replace(/ \(.*/, '')} ${(script - median(times)).toFixed(1)}`);
  return {
    rows,
    parts: costs.join(', '),
    script,
    floor,
    alone,
    over: script - floor,
    mounts: [...bwrapMountArgs(plan)].filter((a) => a === '--bind' || a === '--ro-bind' || a === '--tmpfs').length,
  };
}

export const bench: Bench = {
  name: 'sandbox',
  async run() {
    const availability = sandboxAvailability();
    if (availability.kind !== 'bwrap') {
      printNote(`Skipped: ${availability.kind === 'none' ? availability.reason : 'not Linux'}.`);
      return [];
    }
    const { base, repo } = setup();
    try {
      const gitDir = join(repo, '.git');
      const rows = [];
      const added: number[] = [];
      for (const command of ['true', 'git status --short', 'cat src/mod1/file1.ts >/dev/null']) {
        // Interleaved, so the machine's load falls on both alike.
        const plain: number[] = [];
        const boxed: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          plain.push(...(await timeRuns(1, () => guarded(repo, command, false), i === 0 ? 2 : 0)));
          boxed.push(...(await timeRuns(1, () => guarded(repo, command, true), i === 0 ? 2 : 0)));
        }
        added.push(median(boxed) - median(plain));
        rows.push({
          command,
          'guarded, no sandbox': ms(median(plain)),
          'guarded, sandbox': ms(median(boxed)),
          'added by the sandbox': ms(median(boxed) - median(plain)),
          goal: `≤ ${ADDED_GOAL_MS} ms`,
        });
      }
      // The spawn alone: bwrap with the repository's mount plan versus sh.
      const run = prepareGuardEnv({ root: repo, gitDir, commonDir: gitDir, config, realGit: findRealGit(), sandbox: standaloneSandbox(gitDir) });
      const { file, args } = run.command('true');
      const sh = await timeRuns(RUNS, () => spawnSync('/bin/sh', ['-c', 'true']));
      const bw = await timeRuns(RUNS, () => spawnSync(file, args, { env: run.env }));
      await run.finish();
      rows.push({
        command: 'spawn only: sh -c true',
        'guarded, no sandbox': ms(median(sh)),
        'guarded, sandbox': ms(median(bw)),
        'added by the sandbox': ms(median(bw) - median(sh)),
        goal: '',
      });
      const mounts = args.filter((a) => a === '--bind' || a === '--ro-bind' || a === '--tmpfs').length;
      printTable(`terminal command with and without the sandbox (${RUNS} runs each, medians; ${mounts} mounts, ${FILES} files, 2 secret files)`, rows);
      const confine = confineRows(repo, availability);
      printTable(
        `another agent's shell call: the confine script beside bubblewrap alone (${RUNS} runs each, interleaved, medians; ${confine.mounts} mounts)`,
        confine.rows,
      );
      return [
        {
          measure: 'added per guarded `terminal` command by the sandbox (`true` / `git status` / `cat`), medians',
          result: `${added.map((x) => x.toFixed(1)).join(' / ')} ms (bwrap spawn alone +${(median(bw) - median(sh)).toFixed(1)} ms over \`sh -c\`)`,
          goal: `≤ ${ADDED_GOAL_MS} ms`,
          met: added.every((x) => x <= ADDED_GOAL_MS),
        },
        {
          measure: "another agent's shell call confined (`bash -c` running the confine script with `true`), over `bash -c` running `bwrap --ro-bind / / true`",
          result: `+${confine.over.toFixed(1)} ms (${ms(confine.script)} vs ${ms(confine.floor)}; the command alone ${ms(confine.alone)}); each part taken out saves, ms: ${confine.parts}`,
          goal: `≤ bwrap + ${CONFINE_OVER_BWRAP_GOAL_MS} ms`,
          met: confine.over <= CONFINE_OVER_BWRAP_GOAL_MS,
        },
      ];
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
