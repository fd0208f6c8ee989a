/**
 * `hermesd status` and `hermesd --version` are answered by the CLI's first file
 * (src/cli/launch.ts, bundled as dist/cli/main.js, and src/cli/quick.ts, as dist/cli/quick.cjs) without commander and the command modules;
 * every other command line goes to the full one (dist/cli/program.mjs). The answers are the
 * full command line's, byte for byte where nothing moves between two asks, and the first file
 * needs no other file of dist/cli than its quick.cjs to give them.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickCommand } from '../../src/cli/quick-command.js';
import { CLI, makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';

const PROGRAM = join(REPO_ROOT, 'dist', 'cli', 'program.mjs');

let t: TestEnv;
let repo: string;
let bare: string;

/** `entry` (a CLI file) run with `args` in `cwd`. */
function run(entry: string, args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [entry, ...args], { cwd, env: t.env, encoding: 'utf8', timeout: 25_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What moves between two asks of one daemon: its uptime and its memory. */
const steady = (text: string) => text.replace(/\(up \d+ s\)/, '(up N s)').replace(/[\d.]+ MiB RSS/, 'N MiB RSS');
const steadyJson = (text: string) => {
  const s = JSON.parse(text) as Record<string, unknown>;
  delete s.uptimeMs;
  delete s.rssBytes;
  return s;
};

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo();
  bare = t.repo();
  expect((await t.cli(['start'], { cwd: repo })).code, 'hermesd start failed').toBe(0);
}, 60_000);

afterAll(async () => {
  await t?.cleanup();
});

describe('the CLI first file', () => {
  it('answers status (with --json, --debug in any order) and --version itself, and nothing else', () => {
    for (const args of [['status'], ['--json', 'status'], ['status', '--json'], ['status', '--debug', '--json']])
      expect(quickCommand(args), args.join(' ')).toBe('status');
    for (const args of [['--version'], ['-V']]) expect(quickCommand(args), args.join(' ')).toBe('version');
    for (const args of [
      [],
      ['status', '--help'],
      ['status', '-h'],
      ['status', 'x'],
      ['status', '--bogus'],
      ['status', 'status'],
      ['statsu'],
      ['--version', 'status'],
      ['start'],
    ])
      expect(quickCommand(args), args.join(' ')).toBeUndefined();
  });

  it('gives the full command line’s status, human and --json, with a daemon and without one', () => {
    const quick = run(CLI, ['status'], repo);
    const full = run(PROGRAM, ['status'], repo);
    expect(quick.code, `hermesd status failed: ${quick.stderr}`).toBe(0);
    expect(steady(quick.stdout), 'hermesd status differs from the full command line’s').toBe(steady(full.stdout));
    expect(quick.stderr).toBe(full.stderr);
    const quickJson = run(CLI, ['--json', 'status'], repo);
    expect(quickJson.code, `hermesd --json status failed: ${quickJson.stderr}`).toBe(0);
    expect(steadyJson(quickJson.stdout), 'hermesd status --json differs from the full command line’s').toEqual(
      steadyJson(run(PROGRAM, ['status', '--json'], repo).stdout),
    );
    for (const args of [['status'], ['status', '--json']]) {
      const none = run(CLI, args, bare);
      expect(none, `hermesd ${args.join(' ')} without a daemon differs from the full command line’s`).toEqual(run(PROGRAM, args, bare));
      expect(none.code, 'status without a daemon should exit 3').toBe(3);
      expect(none.stderr).toContain('No daemon is running');
    }
    expect(run(CLI, ['status'], tmpdir())).toEqual(run(PROGRAM, ['status'], tmpdir()));
    expect(run(CLI, ['--version'], repo)).toEqual(run(PROGRAM, ['--version'], repo));
  });

  it('leaves every other command line to the full one (a usage error among them)', () => {
    const bogus = run(CLI, ['status', '--bogus'], repo);
    expect(bogus.code, 'an unknown option of status should be a usage error').toBe(2);
    expect(bogus.stderr).toContain("unknown option '--bogus'");
    const help = run(CLI, ['status', '--help'], repo);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: hermesd status');
  });

  it('needs no other file of dist/cli than quick.cjs: a package holding only the two answers status and --version', () => {
    const pkg = mkdtempSync(join(tmpdir(), 'hermesd-first-file-'));
    try {
      mkdirSync(join(pkg, 'dist', 'cli'), { recursive: true });
      copyFileSync(join(REPO_ROOT, 'package.json'), join(pkg, 'package.json'));
      for (const f of ['main.js', 'quick.cjs', 'package.json']) copyFileSync(join(REPO_ROOT, 'dist', 'cli', f), join(pkg, 'dist', 'cli', f));
      symlinkSync(join(REPO_ROOT, 'templates'), join(pkg, 'templates'));
      symlinkSync(join(REPO_ROOT, 'dist', 'src'), join(pkg, 'dist', 'src'));
      const first = join(pkg, 'dist', 'cli', 'main.js');
      const status = run(first, ['status', '--json'], repo);
      expect(status.code, `status from the first file alone failed: ${status.stderr}`).toBe(0);
      expect(steadyJson(status.stdout)).toEqual(steadyJson(run(CLI, ['status', '--json'], repo).stdout));
      expect(run(first, ['--version'], repo).stdout).toBe(run(CLI, ['--version'], repo).stdout);
      // The copy really lacks the rest: any other command needs it.
      const other = run(first, ['memory', 'list'], repo);
      expect(other.code, 'the copy of the first file ran a command without program.mjs').not.toBe(0);
      expect(other.stderr).toContain('program.mjs');
      // And without quick.cjs, status says so in one line, not with a stack trace.
      rmSync(join(pkg, 'dist', 'cli', 'quick.cjs'));
      const none = run(first, ['status'], repo);
      expect(none.code, 'status without quick.cjs should fail').toBe(1);
      expect(none.stderr).toMatch(/^hermesd: internal error: Cannot find module '\.\/quick\.cjs'/);
      expect(none.stderr, 'status without quick.cjs printed a stack trace').not.toMatch(/^\s+at /m);
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
