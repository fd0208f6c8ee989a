/**
 * Sandbox benchmark (issue 20): what the sandbox adds to one `terminal` command. The same
 * command is run through the whole guard (snapshot, secret scan, run, restore, verify,
 * judge) with the sandbox and without it, and also bare (bwrap versus sh alone), in the same
 * run, medians. Goal: ≤ 15 ms added per command.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { findRealGit } from '../src/git/real-git.js';
import { sandboxAvailability } from '../src/guard/sandbox.js';
import { prepareGuardEnv, standaloneSandbox, withRepoLock } from '../src/guard/terminal.js';
import { median, ms, printNote, printTable, timeRuns, type Bench } from './table.js';

const RUNS = 40;
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
    const run = prepareGuardEnv({ root: repo, gitDir, commonDir: gitDir, config, realGit: findRealGit(), sandbox: sandboxed ? standaloneSandbox(gitDir) : undefined });
    const { file, args } = run.command(command);
    const r = spawnSync(file, args, { cwd: repo, env: run.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${command} failed (${sandboxed ? 'sandboxed' : 'unsandboxed'}): ${r.stderr}`);
    await run.finish();
    run.redact(r.stdout + r.stderr);
  });
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
      rows.push({ command: 'spawn only: sh -c true', 'guarded, no sandbox': ms(median(sh)), 'guarded, sandbox': ms(median(bw)), 'added by the sandbox': ms(median(bw) - median(sh)), goal: '' });
      const mounts = args.filter((a) => a === '--bind' || a === '--ro-bind' || a === '--tmpfs').length;
      printTable(`terminal command with and without the sandbox (${RUNS} runs each, medians; ${mounts} mounts, ${FILES} files, 2 secret files)`, rows);
      return [
        {
          measure: 'added per guarded `terminal` command by the sandbox (`true` / `git status` / `cat`), medians',
          result: `${added.map((x) => x.toFixed(1)).join(' / ')} ms (bwrap spawn alone +${(median(bw) - median(sh)).toFixed(1)} ms over \`sh -c\`)`,
          goal: `≤ ${ADDED_GOAL_MS} ms`,
          met: added.every((x) => x <= ADDED_GOAL_MS),
        },
      ];
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};
