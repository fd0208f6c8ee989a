/**
 * The daemon as the CLI starts it (its idle footprint): from the bundle in dist/daemon,
 * with the memory-saving node flags and glibc's mmap threshold; and that allocator setting
 * stays in the daemon: the commands it runs (here a pre-commit check) get the environment the
 * user had (none, or the user's own value).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyInstall, makeEnv, REPO_ROOT } from '../helpers/env.js';
import { REAL_GIT, redTeam, type RedTeam } from '../helpers/redteam.js';

// A check that fails and prints what it was given; the daemon runs it at pre-commit.
const CONFIG = `checks:
  - id: show-env
    run: 'echo "threshold=\${MALLOC_MMAP_THRESHOLD_:-unset} marker=\${HERMESD_DAEMON_ALLOCATOR:-unset}"; exit 1'
hooks:
  pre-commit:
    checks: [show-env]
    fix: 'off'
`;

/** A commit the check refuses: what the check printed. */
function checkOutput(rt: RedTeam): string {
  writeFileSync(join(rt.repo, 'note.txt'), 'x\n');
  rt.g('add', 'note.txt');
  try {
    execFileSync(REAL_GIT, ['commit', '-q', '-m', 'note'], { cwd: rt.repo, env: rt.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout: string; stderr: string };
    return e.stdout + e.stderr;
  }
  throw new Error('the failing check did not stop the commit');
}

const procFile = (pid: number, name: string) => readFileSync(`/proc/${pid}/${name}`, 'utf8').split('\0');

let plain: RedTeam;
let own: RedTeam;
beforeAll(async () => {
  [plain, own] = await Promise.all([redTeam({ config: CONFIG }), redTeam({ config: CONFIG, env: { MALLOC_MMAP_THRESHOLD_: '65536' } })]);
}, 120_000);
afterAll(async () => Promise.all([plain?.close(), own?.close()]));

describe('the daemon process', () => {
  it("runs the bundle with no V8 flag (Node's built-in code cache holds) and the allocator setting", () => {
    const pid = plain.daemonPid();
    const argv = procFile(pid, 'cmdline');
    const entry = argv.indexOf(join(REPO_ROOT, 'dist', 'daemon', 'main.js'));
    expect(entry).toBeGreaterThan(0);
    // node, then the bundle: a flag here would make every start compile Node's own modules from source.
    expect(argv.slice(1, entry)).toEqual([]);
    // The environment it was started with (the process's own, before it dropped the setting).
    expect(procFile(pid, 'environ')).toContain('MALLOC_MMAP_THRESHOLD_=32768');
  });

  it('keeps the allocator setting to itself: the commands it runs do not get it', () => {
    expect(checkOutput(plain)).toContain('threshold=unset marker=unset');
  });

  it('leaves a value the user set as it is, for the daemon and for the commands it runs', () => {
    expect(procFile(own.daemonPid(), 'environ')).toContain('MALLOC_MMAP_THRESHOLD_=65536');
    expect(checkOutput(own)).toContain('threshold=65536 marker=unset');
  });
});

describe('a checkout built without the daemon bundle', () => {
  it('says what is missing and how to build it, without a stack trace', async () => {
    const t = makeEnv();
    try {
      // The package as tsc alone leaves it: an install without dist/daemon.
      const checkout = join(t.home, '..', 'checkout');
      const cli = copyInstall(checkout);
      rmSync(join(checkout, 'dist', 'daemon'), { recursive: true, force: true });
      const repo = t.repo({ 'README.md': '# r\n' });
      const r = spawnSync(process.execPath, [cli, 'start'], { cwd: repo, env: t.env, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`The daemon's bundle is missing (${join(checkout, 'dist', 'daemon', 'main.js')})`);
      expect(r.stderr).toContain('npm run build');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await t.cleanup();
    }
  });
});
