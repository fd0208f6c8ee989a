/**
 * The doorbell (src/server/doorbell.ts, hooks/hermesd-bell.sh): a warm daemon answers the
 * git hooks and the agents' hooks without a client process. A `curl` on PATH that records
 * each start shows it is never run; the answers are the daemon's own. Twenty hooks at once
 * each get their own answer. After a crash, a bell file naming another live program (a
 * recycled pid) costs one bounded wait and sends that program nothing; a dead pid, no wait.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { denied, rewritten, hookCommands, runHook, toolHookCommand } from './helpers/agents.js';
import { alive, commitIn, gitIn, makeEnv, REPO_ROOT, waitFor, type TestEnv } from './helpers/env.js';

const CONFIG = 'agents:\n  timeoutMs: 800\nrules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n';

describe('the doorbell: hooks answered without a client process', () => {
  let t: TestEnv;
  let repo: string;
  let cmd: Record<string, string>;
  let curlLog: string;
  let env: NodeJS.ProcessEnv;
  const write = (file: string) => ({ session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, file), content: 'x' } });
  const pre = (file: string) => runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, ...env }, payload: write(file) });
  const curlRuns = () => (existsSync(curlLog) ? readFileSync(curlLog, 'utf8').split('--unix-socket').length - 1 : 0);

  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': CONFIG, 'src/generated/api.ts': 'x\n', '.claude/settings.json': '{}\n' });
    expect((await t.cli(['init', '--agents'], { cwd: repo })).code).toBe(0);
    cmd = hookCommands(repo, 'claude');
    // A curl that records that it ran, then does what real curl does against no daemon.
    const bin = join(dirname(t.home), 'recording-curl');
    curlLog = join(bin, 'runs');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'curl'), `#!/bin/sh\necho "$*" >> '${curlLog}'\nexit 7\n`);
    chmodSync(join(bin, 'curl'), 0o755);
    env = { PATH: `${bin}:${process.env.PATH}` };
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    await waitFor(() => existsSync(join(repo, '.git/hermesd/bell/daemon')));
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("answers an agent's tool calls, allowed and refused, and a commit's hooks without curl", async () => {
    const allowed = await pre('src/app.ts');
    expect(allowed).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const refused = await pre('src/generated/api.ts');
    expect(denied('claude', refused), JSON.stringify(refused)).toBeDefined();
    expect(denied('claude', refused)).toContain('generated-files');
    expect(denied('claude', refused)).toContain('npm run gen');

    writeFileSync(join(repo, 'src/app.ts'), 'export const a = 1;\n');
    gitIn(t, repo, 'add', 'src/app.ts');
    const ok = commitIn(t, repo, ['-qm', 'app'], env);
    expect(ok.code, ok.out).toBe(0);
    writeFileSync(join(repo, 'src/generated/api.ts'), 'changed\n');
    gitIn(t, repo, 'add', '-A');
    const no = commitIn(t, repo, ['-qm', 'generated'], env);
    expect(no.code).toBe(1);
    expect(no.out).toContain('generated-files');
    expect(curlRuns()).toBe(0);
    // The daemon's record: each hook answered (post-commit's evidence included).
    await waitFor(() => readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8').includes('hook post-commit'));
    expect(readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')).toContain('agent tool call refused');
    // Plain doctor says how the hooks reach the daemon.
    expect((await t.cli(['doctor'], { cwd: repo })).stdout).toMatch(/ok\s+doorbell\s+the hooks reach the daemon \(pid \d+\) without starting a process/);
    expect((await t.cli(['doctor'], { cwd: repo, env: { HERMESD_DOORBELL: '0' } })).stdout).toMatch(/warn\s+doorbell\s+HERMESD_DOORBELL=0/);
  });

  it('reads a Bash payload with the shell itself, whole (pretty-printed, backslashes, no final newline), and a Write payload with the cat init found', async () => {
    // A cat that records that it ran, then is cat: first on PATH when init runs, so the runners start it by its path.
    const bin = join(dirname(t.home), 'recording-cat');
    const catLog = join(bin, 'runs');
    mkdirSync(bin, { recursive: true });
    const realCat = execFileSync('sh', ['-c', 'command -v cat'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'cat'), `#!/bin/sh\necho cat >> '${catLog}'\nexec ${realCat} "$@"\n`);
    chmodSync(join(bin, 'cat'), 0o755);
    const realSleep = execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'sleep'), `#!/bin/sh\nexec ${realSleep} "$@"\n`);
    chmodSync(join(bin, 'sleep'), 0o755);
    const withCat = { CLAUDE_PROJECT_DIR: repo, PATH: `${bin}:${env.PATH}` };
    expect((await t.cli(['init', '--agents'], { cwd: repo, env: { PATH: withCat.PATH } })).code).toBe(0);
    expect(readFileSync(join(repo, '.git/hermesd/agent-hook'), 'utf8')).toContain(`HERMESD_CAT='${join(bin, 'cat')}'\nHERMESD_SLEEP='${join(bin, 'sleep')}'`);
    const catRuns = () => (existsSync(catLog) ? readFileSync(catLog, 'utf8').split('\n').length - 1 : 0);
    const bash = (command: string) =>
      JSON.stringify({ session_id: 's1', transcript_path: null, cwd: repo, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command, description: '  indented\tand tabbed  ' } }, null, 2);
    const small = toolHookCommand(repo, 'claude', 'PreToolUse', 'Bash');
    expect(small).toContain('PreToolUse small;');
    // The command is on the payload's ninth line: a read that stopped at the first line would leave the daemon nothing to
    // judge. Its double quotes reach the daemon as \" in JSON: a read that dropped backslashes would break the JSON.
    const refused = await runHook(t, small, { cwd: repo, env: withCat, payload: bash('printf "%s\\n" "a\\b" > src/generated/api.ts') });
    expect(denied('claude', refused), JSON.stringify(refused)).toBeDefined();
    expect(denied('claude', refused)).toContain('generated-files');
    expect(rewritten('claude', await runHook(t, small, { cwd: repo, env: withCat, payload: bash('npm test') }))).toContain('npm test');
    expect(catRuns()).toBe(0);

    const write = toolHookCommand(repo, 'claude', 'PreToolUse', 'Write');
    expect(write).not.toContain('small');
    const w = await runHook(t, write, { cwd: repo, env: withCat, payload: { session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, 'src/generated/api.ts'), content: 'a\\b\n'.repeat(1000) } } });
    expect(denied('claude', w), JSON.stringify(w)).toBeDefined();
    expect(catRuns()).toBe(1);
    // Started by its path, not found on PATH: the agent's PATH here does not have it.
    const noPathCat = await runHook(t, write, { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, PATH: env.PATH }, payload: { session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, 'src/generated/api.ts'), content: 'x' } } });
    expect(denied('claude', noPathCat), JSON.stringify(noPathCat)).toBeDefined();
    expect(catRuns()).toBe(2);
    // The cat and sleep init found are gone: the ones on PATH read the payload and bound the wait.
    rmSync(join(bin, 'cat'));
    rmSync(join(bin, 'sleep'));
    const gone = await runHook(t, write, { cwd: repo, env: withCat, payload: { session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, 'src/generated/api.ts'), content: 'x' } } });
    expect(denied('claude', gone), JSON.stringify(gone)).toBeDefined();
    expect(denied('claude', gone)).toContain('generated-files');
    expect(curlRuns()).toBe(0);
  });

  it('gives the same answers over the socket with HERMESD_DOORBELL=0 (curl runs: the path where there is no /proc)', async () => {
    // The real curl (the recording one stands in for no daemon).
    const viaCurl: NodeJS.ProcessEnv = { HERMESD_DOORBELL: '0', PATH: process.env.PATH };
    const run = (file: string) => runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, ...viaCurl }, payload: write(file) });
    const bell = join(repo, '.git/hermesd/bell');
    expect(await run('src/app.ts')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const refused = await run('src/generated/api.ts');
    expect(denied('claude', refused), JSON.stringify(refused)).toBeDefined();
    expect(denied('claude', refused)).toContain('generated-files');
    writeFileSync(join(repo, 'src/generated/api.ts'), 'changed\n');
    gitIn(t, repo, 'add', '-A');
    const no = commitIn(t, repo, ['-qm', 'generated'], viaCurl);
    expect(no.code).toBe(1);
    expect(no.out).toContain('generated-files');
    // Nothing went through the bell folder.
    expect(readdirSync(bell)).toEqual(['daemon']);
  });

  it('answers a payload over the API limit as the socket does: not judged, agents.onUnavailable decides', async () => {
    const huge = { ...write('src/generated/api.ts'), tool_input: { file_path: join(repo, 'src/generated/api.ts'), content: 'x'.repeat(5 * 1024 * 1024) } };
    const r = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, ...env }, payload: huge });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('the limit is 4194304 bytes');
    expect(r.stderr).toContain('not checked');
    expect(curlRuns()).toBe(0);
  });

  it('gives each of twenty hooks at once its own answer', async () => {
    const files = Array.from({ length: 20 }, (_, i) => (i % 2 ? `src/generated/f${i}.ts` : `src/f${i}.ts`));
    const runs = await Promise.all(files.map((f) => pre(f)));
    for (const [i, r] of runs.entries()) {
      if (i % 2) expect(denied('claude', r), JSON.stringify(r)).toContain(`src/generated/f${i}.ts`);
      else expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
    expect(curlRuns()).toBe(0);
  });

  it('after a crash: a recycled pid in the bell file is sent nothing and costs one bounded wait; a dead one none', async () => {
    const bell = join(repo, '.git/hermesd/bell/daemon');
    const daemon = Number(readFileSync(bell, 'utf8').split(' ')[0]);
    process.kill(daemon, 'SIGKILL');
    await waitFor(() => !alive(daemon));
    expect(existsSync(bell)).toBe(true);
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await waitFor(() => existsSync(`/proc/${other.pid}/stat`));
      // The pid the dead daemon wrote, now another program's.
      writeFileSync(bell, `${other.pid} 1 1\n`);
      const waited = await pre('src/generated/api.ts');
      expect(alive(other.pid!)).toBe(true);
      expect(waited.code).toBe(0);
      expect(waited.stderr).toContain('did not answer within 800 ms');
      expect(waited.ms).toBeGreaterThanOrEqual(700);
      expect(curlRuns()).toBe(0);
    } finally {
      other.kill();
    }
    await waitFor(() => !alive(other.pid!));
    // Nobody there: straight to the socket (the recording curl finds no daemon), no wait.
    const r = await pre('src/generated/api.ts');
    expect(curlRuns()).toBe(1);
    expect([0, 2]).toContain(r.code);
  });

  it("asks over the socket when the daemon's bell speaks another protocol (a runner of another hermesd version)", async () => {
    const bell = join(repo, '.git/hermesd/bell/daemon');
    const [pid, start] = readFileSync(bell, 'utf8').trim().split(' ');
    writeFileSync(bell, `${pid} ${start} 2\n`);
    const r = await pre('src/app.ts');
    expect(r.code).toBe(0);
    expect(curlRuns()).toBe(1);
    expect(readdirSync(join(repo, '.git/hermesd/bell'))).toEqual(['daemon']);
  });

  it("answers a post-commit's question (it wants no answer) that a daemon killed before reading it left behind", async () => {
    const bell = join(repo, '.git/hermesd/bell');
    const daemon = Number(readFileSync(join(bell, 'daemon'), 'utf8').split(' ')[0]);
    process.kill(daemon, 'SIGSTOP');
    // What hermesd_ring_once leaves: the body, then the marker with no bound (<ms> 0).
    writeFileSync(join(bell, '99999-1.in'), JSON.stringify({ via: 'sh', args: [] }));
    writeFileSync(join(bell, '99999-1=git=post-commit=0'), '');
    process.kill(daemon, 'SIGKILL');
    await waitFor(() => !alive(daemon));
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const log = join(repo, '.git/hermesd/daemon.log');
    await waitFor(() => readFileSync(log, 'utf8').split('daemon started').at(-1)!.includes('hook post-commit'));
    await waitFor(() => readdirSync(bell).every((f) => f === 'daemon'));
  });

  it('never answers a hook that stopped waiting: the same shell asking again gets its own answer', async () => {
    const rt = join(repo, '.git/hermesd');
    const daemon = Number(readFileSync(join(rt, 'bell/daemon'), 'utf8').split(' ')[0]);
    const body = (file: string) => JSON.stringify(write(file)).replace(/'/g, "'\\''");
    // As the git runner does for the pre-commit and its re-check: two questions from one shell.
    const script = [
      `hermesd_rt='${rt}'`,
      `. '${join(REPO_ROOT, 'hooks', 'hermesd-bell.sh')}'`,
      `kill -STOP ${daemon}`,
      `hermesd_ring claude PreToolUse 400 0.400 '${body('src/app.ts')}'`,
      'echo "first=$?"',
      `kill -CONT ${daemon}`,
      `hermesd_ring claude PreToolUse 3000 3.000 '${body('src/generated/api.ts')}'`,
      'echo "second=$? x=$hermesd_x"',
      '[ -n "$hermesd_ba" ] && cat "$hermesd_ba"',
    ].join('\n');
    let out: string;
    try {
      out = spawnSync('sh', ['-c', script], { encoding: 'utf8', timeout: 20_000 }).stdout;
    } finally {
      process.kill(daemon, 'SIGCONT');
    }
    expect(out).toContain('first=101');
    // Its own answer: the refusal of the second question (the first, allowed, would have no text).
    expect(out).toContain('second=0 x=0');
    expect(out).toContain('"permissionDecision":"deny"');
    expect(out).toContain('src/generated/api.ts');
    await waitFor(() => readFileSync(join(rt, 'daemon.log'), 'utf8').includes('doorbell: answered after the hook stopped waiting'));
  });
});
