/**
 * The two flows of docs/architecture.md, traced in a real daemon: Claude Code's PreToolUse
 * about a Write to a protected file, and a commit holding a key. The daemon runs from the
 * per-file build with every function's entry recorded (helpers/flow-trace/), with its stack;
 * for the request's own work (stacks under the HTTP handler) the test reads which folders of
 * src/ it entered, and whether one was entered again while it was still on the stack (a
 * folder calling up into a caller's folder, through an injected function or an event: the
 * returns to a folder already left that the layering forbids). Each flow enters only the
 * folders docs/architecture.md names for it, and none of them twice.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, commitIn, gitIn, makeEnv, REPO_ROOT, waitFor, type TestEnv } from '../helpers/env.js';
import { claudeWrite, expectRefused, guardedConfig, KEY, recordedPid } from '../helpers/transport.js';

type Frame = [file: string, fn: string];

const DAEMON = join(REPO_ROOT, 'dist', 'src', 'server', 'main.js');
const PRELOAD = join(REPO_ROOT, 'test', 'helpers', 'flow-trace', 'preload.mjs');
/** The request's own work: what ran under the daemon's HTTP handler. */
const HANDLER = 'server/http.js';

const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '(root)');

/** The folders a flow entered, and every stack in which a folder comes back above another one. */
function readFlow(events: Frame[][]): { folders: string[]; reentries: string[] } {
  const folders = new Set<string>();
  const reentries = new Set<string>();
  for (const frames of events.filter((fr) => fr.some(([file]) => file === HANDLER))) {
    const collapsed: string[] = [];
    for (const [file] of frames) {
      const f = folderOf(file);
      folders.add(f);
      if (collapsed.at(-1) !== f) collapsed.push(f);
    }
    if (new Set(collapsed).size !== collapsed.length) reentries.add(frames.map(([file, fn]) => `${file} ${fn}`).join(' < '));
  }
  return { folders: [...folders].sort(), reentries: [...reentries] };
}

/** The folders docs/architecture.md names for each flow, in its order (write, commit). */
function documented(): string[][] {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
  return [...doc.matchAll(/^Folders it enters on the daemon side \([^)]*\): (.+)\.$/gm)].map((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!).sort());
}

let t: TestEnv;
let repo: string;
let daemon: ChildProcess;
let traces: string;
let recorded = 0;

/** Runs `act` with the daemon recording; the recording. */
async function traced(act: () => Promise<unknown> | unknown): Promise<Frame[][]> {
  const file = `${traces}.${recorded++}.json`;
  daemon.kill('SIGUSR2');
  // The signal is taken on the daemon's next turn of its loop.
  await new Promise((r) => setTimeout(r, 300));
  await act();
  daemon.kill('SIGUSR2');
  await waitFor(() => existsSync(file), 10_000).catch(() => {
    throw new Error(
      `the traced daemon wrote no recording at ${file} (its output: ${readFileSync(join(repo, '.git', 'hermesd', 'daemon.log'), 'utf8').slice(-2000)})`,
    );
  });
  return JSON.parse(readFileSync(file, 'utf8')) as Frame[][];
}

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': guardedConfig('  - id: no-secrets\n    message: Never commit credentials.\n    secrets: true\n'),
    'gen/api.ts': 'x\n',
    '.claude/settings.json': '{}\n',
  });
  expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
  await t.cli(['stop'], { cwd: repo });
  traces = join(t.home, 'flow');
  daemon = spawn(process.execPath, ['--import', PRELOAD, DAEMON, repo], { cwd: repo, env: { ...t.env, HERMESD_FLOW_TRACE: traces }, stdio: 'ignore' });
  await waitFor(() => recordedPid(repo) === daemon.pid, 20_000).catch(() => {
    throw new Error('the traced daemon (dist/src/server/main.js under helpers/flow-trace) did not start');
  });
  // Both flows once untraced: what a first question loads or builds is not the flow.
  expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
  writeFileSync(join(repo, 'creds.txt'), `key = "${KEY}"\n`);
  gitIn(t, repo, 'add', 'creds.txt');
  expect(commitIn(t, repo, ['-qm', 'warm']).code, 'the untraced commit of a key was not refused').toBe(1);
  // The services that start after the first questions (the watcher among them) are running.
  await waitFor(() => {
    const r = spawnSync(process.execPath, [CLI, 'status', '--json'], { cwd: repo, env: t.env, encoding: 'utf8' });
    return r.status === 0 && (JSON.parse(r.stdout) as { watcher?: { state?: string } }).watcher?.state === 'ready';
  }, 20_000).catch(() => {
    throw new Error("the traced daemon's watcher did not report ready (hermesd status --json)");
  });
}, 60_000);

afterAll(async () => {
  daemon?.kill('SIGTERM');
  await t?.cleanup();
});

describe('the two flows of docs/architecture.md', () => {
  it('documents the folders of each flow', () => {
    expect(documented(), 'docs/architecture.md should name the folders of its two flows ("Folders it enters on the daemon side…: `a`, `b`.")').toHaveLength(2);
  });

  it("Claude Code's PreToolUse about a Write to a protected file enters the documented folders, none of them twice", async () => {
    const flow = readFlow(await traced(async () => expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'generated')));
    expect(flow.reentries, 'a folder was entered again while it was still on the stack (stacks, callee first)').toEqual([]);
    expect(flow.folders, 'the write flow entered other folders than docs/architecture.md names').toEqual(documented()[0]);
  }, 60_000);

  it('a commit holding a key enters the documented folders, none of them twice', async () => {
    const flow = readFlow(
      await traced(() => {
        const r = commitIn(t, repo, ['-qm', 'key']);
        expect(r.code, `the commit of a key was not refused: ${r.out}`).toBe(1);
      }),
    );
    expect(flow.reentries, 'a folder was entered again while it was still on the stack (stacks, callee first)').toEqual([]);
    expect(flow.folders, 'the commit flow entered other folders than docs/architecture.md names').toEqual(documented()[1]);
  }, 60_000);
});
