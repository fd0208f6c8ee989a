/**
 * The script other agents' shell commands run in (src/guard/agent-shell.ts), run as an agent's
 * shell runs it, with the real bubblewrap: the command runs once, in bash (the agent's shell),
 * its output and exit status as they would be; where bubblewrap cannot start (a sandbox that
 * forbids namespaces, as an agent's own may) it runs as written, once; where bubblewrap starts
 * but cannot set up this confinement, it does not run at all. The scripts' folder hands a script out
 * only as it was written (it outlives the daemon that wrote it) and keeps it while it is handed out.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confineScript, confineScriptFile, confinedCommand } from '../../src/guard/agent-shell.js';
import { sandboxAvailability, type SandboxAvailability, type SandboxPlan } from '../../src/guard/sandbox.js';
import { findOnPath } from '../../src/process/path.js';

const bwrap = sandboxAvailability(process.env);
const bash = findOnPath('bash')!;

/** A plan as the daemon makes one (guard/agent-shell.ts agentShellPlan): `dir` and /tmp writable, `readOnly` read-only. */
function plan(dir: string, readOnly: string[]): SandboxPlan {
  return { cwd: dir, writable: [dir, '/tmp'], readOnly, maskFiles: [], maskDirs: [], visible: [], empty: dir, files: [], hide: [], network: true };
}
const script = (bw: SandboxAvailability, dir: string, readOnly: string[]) =>
  confineScript({ bwrap: bw as Extract<SandboxAvailability, { kind: 'bwrap' }>, plan: plan(dir, readOnly), shell: bash, shared: ['/tmp'] });

describe('the confine script of an agent shell command', () => {
  let dir: string;
  let kept: string;
  let scriptFile: string;

  beforeEach(() => {
    expect(bwrap.kind, 'these tests need bubblewrap (CI installs it)').toBe('bwrap');
    dir = mkdtempSync(join(tmpdir(), 'hd-confine-'));
    kept = join(dir, 'kept');
    mkdirSync(kept);
    writeFileSync(join(kept, 'a.ts'), 'original\n');
    scriptFile = join(dir, 'confine.sh');
    writeFileSync(scriptFile, script(bwrap, dir, [kept]));
    chmodSync(scriptFile, 0o600);
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The rewritten command, run as Claude Code runs a Bash call: `bash -c <command>`, from the work tree. */
  const run = (command: string, o: { env?: NodeJS.ProcessEnv; wrap?: string[] } = {}) => {
    const line = confinedCommand(scriptFile, command);
    const argv = [...(o.wrap ?? []), bash, '-c', line];
    return spawnSync(argv[0]!, argv.slice(1), { cwd: dir, encoding: 'utf8', env: { ...process.env, SHELL: bash, ...o.env } });
  };

  it('runs the command once, in bash, with its output and exit status, and the bound paths read-only', () => {
    const r = run(`echo ran >> runs.txt; x=({a,b}); [[ \${x[1]} == b ]] && echo "bash \${x[1]}"; echo to-stderr >&2; echo changed > kept/a.ts; exit 7`);
    expect(r.status).toBe(7);
    expect(r.stdout).toBe('bash b\n');
    expect(r.stderr).toContain('to-stderr');
    expect(r.stderr).toMatch(/kept\/a\.ts: Read-only file system/);
    expect(r.stderr).not.toContain('bwrap');
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\n');
    expect(readFileSync(join(kept, 'a.ts'), 'utf8')).toBe('original\n');
    // A command that fails on its own is not run a second time.
    const failed = run('echo ran >> runs.txt; false');
    expect(failed.status).toBe(1);
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\nran\n');
  });

  it("runs in the agent's shell where that is bash, else in the shell it was written with", () => {
    expect(run('echo "$0"').stdout).toBe(`${bash}\n`);
    // Neither bash nor zsh: the script's own shell (bash here), not the stranger.
    expect(run('echo "$0"', { env: { SHELL: '/bin/sh' } }).stdout).toBe(`${bash}\n`);
  });

  it('where bubblewrap cannot start (its namespaces refused), runs the command as written, once, without a word from bubblewrap', () => {
    // An agent's own sandbox, as far as bubblewrap is concerned: an unprivileged user with no new namespaces.
    const wrap = [(bwrap as { path: string }).path, '--unshare-user', '--uid', '1000', '--disable-userns', '--dev-bind', '/', '/', '--'];
    const probe = spawnSync(wrap[0]!, [...wrap.slice(1), (bwrap as { path: string }).path, '--dev-bind', '/', '/', '/bin/true'], { encoding: 'utf8' });
    expect(probe.status, 'bubblewrap cannot start inside it').not.toBe(0);
    const r = run(`echo ran >> runs.txt; [[ -d kept ]] && echo here; echo changed > kept/a.ts; exit 3`, { wrap });
    expect(r.status).toBe(3);
    expect(r.stdout).toBe('here\n');
    expect(r.stderr).toBe('');
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\n');
    // Unconfined: the after-call check is what puts this back (agents-shell-writes-… test).
    expect(readFileSync(join(kept, 'a.ts'), 'utf8')).toBe('changed\n');
  });

  it('where bubblewrap fails without a word and cannot start here at all, runs the command as written, once', () => {
    // A bubblewrap that fails silently, and whose probe fails too: /bin/false in its place.
    writeFileSync(scriptFile, script({ kind: 'bwrap', path: '/bin/false', disableUserns: false }, dir, [kept]));
    const r = run('echo ran >> runs.txt; echo here');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('here\n');
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\n');
  });

  it('where bubblewrap starts but cannot set up this confinement (a bound path gone), does not run the command, and says so', () => {
    rmSync(kept, { recursive: true });
    const r = run('echo ran >> runs.txt');
    expect(r.status).toBe(126);
    expect(r.stderr).toMatch(/^hermesd: not run: bubblewrap could not set up the confinement of this command \(bwrap: Can't find source path .*kept/);
    expect(existsSync(join(dir, 'runs.txt'))).toBe(false);
  });
});

describe("the confine scripts' folder: a script is handed out only as written, and kept while it is handed out", () => {
  let dir: string;
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'hd-confine-files-')), 'confine');
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  const HOURS_AGO = (h: number) => new Date(Date.now() - h * 3_600_000);
  const age = (file: string, h: number) => utimesSync(file, HOURS_AGO(h), HOURS_AGO(h));

  it('a file found under the name but holding other bytes (changed while no daemon ran) is written again', () => {
    const file = confineScriptFile(dir, 'the script\n');
    writeFileSync(file, 'exec /bin/sh -c "$1"\n');
    expect(confineScriptFile(dir, 'the script\n')).toBe(file);
    expect(readFileSync(file, 'utf8'), 'a script changed since it was written was handed out as found').toBe('the script\n');
  });

  it('a link under the name is replaced, never written through, and never handed out', () => {
    const file = confineScriptFile(dir, 'the script\n');
    const elsewhere = join(dir, '..', 'elsewhere.sh');
    writeFileSync(elsewhere, 'the script\n');
    rmSync(file);
    symlinkSync(elsewhere, file);
    expect(confineScriptFile(dir, 'the script\n')).toBe(file);
    expect(lstatSync(file).isSymbolicLink(), 'a link at the script name was handed out').toBe(false);
    writeFileSync(elsewhere, 'changed through the link\n');
    expect(readFileSync(file, 'utf8')).toBe('the script\n');
  });

  it('scripts not handed out for an hour go when another is written; one handed out again stays, however old its writing', () => {
    const old = confineScriptFile(dir, 'old, never handed out again\n');
    const reused = confineScriptFile(dir, 'old, handed out again\n');
    age(old, 2);
    age(reused, 2);
    expect(confineScriptFile(dir, 'old, handed out again\n')).toBe(reused);
    confineScriptFile(dir, 'a new one\n');
    expect(existsSync(old), 'a script unused for two hours was kept').toBe(false);
    expect(existsSync(reused), 'a script handed out a moment ago was swept by its write time').toBe(true);
  });
});
