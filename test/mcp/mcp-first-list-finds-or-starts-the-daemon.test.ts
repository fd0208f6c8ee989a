/**
 * The first thing Claude Code asks `hermesd mcp` after `initialize` and `tools/list` is
 * `resources/list`, which needs the daemon. The server looks for a running daemon at
 * `initialize` (src/mcp/link.ts warm) and the list waits for that look instead of sending its
 * own: whatever it finds — this version's daemon, none, another version's — the list is
 * answered by a daemon of this version, started only when none of this version runs.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyInstall, makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { connectMcp } from '../helpers/mcp.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const AUTHORITY = 'hermesd://authority/AGENTS.md';

let t: TestEnv;
let otherCli: string;

beforeAll(() => {
  t = makeEnv();
  otherCli = copyInstall(join(t.home, '..', 'other-install'), { version: `${VERSION}-other` });
}, 60_000);

afterAll(async () => {
  await t?.cleanup();
});

/** `hermesd start` of the other install; its exit, not its pipes' end (the daemon it starts is detached). */
function startOther(repo: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [otherCli, 'start'], { cwd: repo, env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** The daemon's status as `hermesd status --json` prints it, or undefined when none runs. */
async function status(repo: string): Promise<{ pid: number; version: string } | undefined> {
  const r = await t.cli(['status', '--json'], { cwd: repo });
  return r.code === 0 ? (r.json() as { pid: number; version: string }) : undefined;
}

/** A server whose first request after the handshake is resources/list: the list's URIs and what the server said on stderr. */
async function listFirst(repo: string): Promise<{ uris: string[]; stderr: string }> {
  const s = await connectMcp(t, repo, { name: 'lists-first' });
  try {
    const { resources } = await s.client.listResources();
    return { uris: resources.map((r) => r.uri), stderr: s.stderr() };
  } finally {
    await s.close();
  }
}

describe('the first resources/list of hermesd mcp', () => {
  it('with no daemon running: starts one and lists from it', async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    expect(await status(repo)).toBeUndefined();
    const { uris, stderr } = await listFirst(repo);
    expect(uris).toContain(AUTHORITY);
    expect(stderr).toMatch(/started the daemon of /);
    expect((await status(repo))?.version).toBe(VERSION);
  });

  it("with this version's daemon running: lists from it, starting none", async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const before = await status(repo);
    const { uris, stderr } = await listFirst(repo);
    expect(uris).toContain(AUTHORITY);
    expect(stderr).not.toMatch(/started the daemon/);
    expect((await status(repo))?.pid).toBe(before?.pid);
  });

  it("with another version's daemon running: this version's takes its place and lists", async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    const other = await startOther(repo);
    expect(other.code, other.out).toBe(0);
    expect((await status(repo))?.version).toBe(`${VERSION}-other`);
    const { uris, stderr } = await listFirst(repo);
    expect(uris).toContain(AUTHORITY);
    expect(stderr).toMatch(/started the daemon of /);
    expect((await status(repo))?.version).toBe(VERSION);
  });
});
