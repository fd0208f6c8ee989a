/**
 * Where the doorbell's files live: a private folder on a tmpfs, reached by the hooks through
 * `<git-dir>/hermesd/bell` (a link). Creating a file on a disk file system is a journal
 * transaction, and every hook question creates two; on tmpfs it costs next to nothing. The
 * socket dir is used when it is a tmpfs itself, else /dev/shm/hermesd-<uid>; a machine without
 * either keeps the folder in the git dir. Folders left by daemons that were killed are removed
 * by the next daemon that starts; an earlier daemon's folder in the git dir is carried over.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { procStat } from '../src/githooks/attempt.js';
import { denied, runHook, toolHookCommand } from './helpers/agents.js';
import { alive, commitIn, gitIn, makeEnv, waitFor, type TestEnv } from './helpers/env.js';

const TMPFS_MAGIC = 0x01021994;
const onTmpfs = (dir: string) => {
  try {
    return statfsSync(dir).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
};
const CONFIG = 'rules:\n  - id: generated-files\n    message: Do not edit generated files directly.\n    protect: ["src/generated/**"]\n';

describe('the doorbell keeps its files on a tmpfs', () => {
  let t: TestEnv;
  let repo: string;
  let link: string;
  const tmpDirs: string[] = [];

  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': CONFIG, 'src/generated/api.ts': 'x\n', '.claude/settings.json': '{}\n' });
    expect((await t.cli(['init', '--agents'], { cwd: repo })).code).toBe(0);
    link = join(repo, '.git/hermesd/bell');
  });
  afterEach(async () => {
    await t.cleanup();
    for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reaches a private tmpfs folder through .git/hermesd/bell, serves hooks through it, and leaves nothing when stopped', async () => {
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    await waitFor(() => existsSync(join(link, 'daemon')));
    if (!onTmpfs('/dev/shm')) {
      // No tmpfs here (the socket dir of a test is on disk): the folder is in the git dir.
      expect(lstatSync(link).isDirectory()).toBe(true);
      return;
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const home = readlinkSync(link);
    expect(home.startsWith(`/dev/shm/hermesd-${process.getuid!()}/`)).toBe(true);
    expect(onTmpfs(home)).toBe(true);
    const st = statSync(home);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid!());
    expect((await t.cli(['doctor'], { cwd: repo })).stdout).toContain(`its files on a tmpfs (${home})`);

    const write = { session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, 'src/generated/api.ts'), content: 'x' } };
    const refused = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, HERMESD_DOORBELL: '1' }, payload: write });
    expect(denied('claude', refused), JSON.stringify(refused)).toBeDefined();
    expect(denied('claude', refused)).toContain('generated-files');
    writeFileSync(join(repo, 'src/app.ts'), 'export const a = 1;\n');
    gitIn(t, repo, 'add', 'src/app.ts');
    const ok = commitIn(t, repo, ['-qm', 'app']);
    expect(ok.code, ok.out).toBe(0);
    expect(readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')).toMatch(/hook pre-commit \{"via":"sh"/);
    // Answered questions are removed 25 ms after their answer; a refusal's text (<id>.a) stays for its hook to read until the leftover scan.
    await waitFor(() => readdirSync(home).every((f) => f === 'daemon' || f.endsWith('.a')));
    expect(readdirSync(home).filter((f) => f.endsWith('.a'))).toHaveLength(1);

    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    expect(existsSync(link)).toBe(false);
    expect(existsSync(home)).toBe(false);
  });

  it('uses a socket dir that is a tmpfs itself, and removes the folders of killed daemons there, not those of live ones', async () => {
    if (!onTmpfs('/dev/shm')) return;
    const sockets = realpathSync(mkdtempSync('/dev/shm/hd-test-'));
    tmpDirs.push(sockets);
    const env = { HERMESD_SOCKET_DIR: sockets };
    // A daemon that was killed (its pid ended), and one that is alive (this test's process).
    const dead = spawnSync('true');
    expect(dead.status).toBe(0);
    mkdirSync(join(sockets, 'dead.bell'));
    writeFileSync(join(sockets, 'dead.bell', 'daemon'), `${dead.pid} 1 1\n`);
    mkdirSync(join(sockets, 'live.bell'));
    writeFileSync(join(sockets, 'live.bell', 'daemon'), `${process.pid} ${procStat(process.pid)!.start} 1\n`);

    expect((await t.cli(['start'], { cwd: repo, env })).code).toBe(0);
    await waitFor(() => existsSync(join(link, 'daemon')));
    const home = readlinkSync(link);
    expect(home.startsWith(`${sockets}/`)).toBe(true);
    expect(existsSync(join(sockets, 'dead.bell'))).toBe(false);
    expect(existsSync(join(sockets, 'live.bell'))).toBe(true);
    expect((await t.cli(['stop'], { cwd: repo, env })).code).toBe(0);
    expect(existsSync(home)).toBe(false);
  });

  it("carries over a question an earlier daemon's folder in the git dir still held", async () => {
    if (!onTmpfs('/dev/shm')) return;
    // As a daemon of the previous version left it: a folder, with a post-commit's question (no answer wanted).
    mkdirSync(link, { recursive: true, mode: 0o700 });
    writeFileSync(join(link, '99999-1.in'), JSON.stringify({ via: 'sh', args: [] }));
    writeFileSync(join(link, '99999-1=git=post-commit=0'), '');
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    await waitFor(() => existsSync(join(link, 'daemon')));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const log = join(repo, '.git/hermesd/daemon.log');
    await waitFor(() => readFileSync(log, 'utf8').includes('hook post-commit'));
    await waitFor(() => readdirSync(link).every((f) => f === 'daemon'));
    const pid = Number(readFileSync(join(link, 'daemon'), 'utf8').split(' ')[0]);
    expect(alive(pid)).toBe(true);
  });
});
