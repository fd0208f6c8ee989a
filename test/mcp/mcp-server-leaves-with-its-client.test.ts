/**
 * `hermesd mcp` ends when its client is gone, however it goes: stdin closed, a signal (Claude
 * Code stops servers with SIGINT, then SIGTERM), stdout or stderr broken, the client killed.
 * Before, a signal was logged and ignored (the open stdin kept Node alive), and a server whose
 * stderr reader had gone logged every error to it, raising another: an orphan spinning a core
 * for ever. It also answers `initialize` and `tools/list` from the SDK server's recorded
 * answers, with no daemon started for them; the daemon is reached on the first tool call.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAnswers } from '../../src/mcp/sdk-server.js';
import { alive, git, makeEnv, waitFor, type TestEnv } from '../helpers/env.js';
import { builtLaunch, serverEnv } from '../helpers/mcp.js';

/** A bound on "ends": the server either ends at once or never did (the product's own bound, 100 ms, is measured in `npm run bench -- mcp`). */
const ENDS_WITHIN_MS = 5_000;

type Server = { child: ChildProcessWithoutNullStreams; stdout(): string; stderr(): string; exited: Promise<{ code: number | null; signal: string | null }> };

describe('hermesd mcp leaves with its client', () => {
  let t: TestEnv;
  let repo: string;
  const started: ChildProcessWithoutNullStreams[] = [];

  async function start(): Promise<Server> {
    const { mcpLaunch } = await builtLaunch();
    const launch = mcpLaunch({ repo, env: t.env });
    const child = spawn(launch.command, launch.args, { cwd: repo, env: { ...serverEnv(t), ...launch.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    started.push(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    return { child, stdout: () => out, stderr: () => err, exited };
  }

  const send = (s: Server, m: unknown) => s.child.stdin.write(JSON.stringify(m) + '\n');
  const initialize = (s: Server) =>
    send(s, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'leaving-client', version: '1' } },
    });
  /** The answer to request `id`, once the server wrote it. */
  async function answer(s: Server, id: number): Promise<any> {
    let found: any;
    await waitFor(() => {
      found = s
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((m) => m.id === id);
      return found !== undefined;
    }, 20_000);
    return found;
  }
  async function ends(s: Server): Promise<{ code: number | null; signal: string | null }> {
    const timer = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still running ${ENDS_WITHIN_MS} ms later; stderr:\n${s.stderr()}`)), ENDS_WITHIN_MS),
    );
    return Promise.race([s.exited, timer]);
  }
  async function ready(): Promise<Server> {
    const s = await start();
    initialize(s);
    await answer(s, 1);
    send(s, { jsonrpc: '2.0', method: 'notifications/initialized' });
    return s;
  }

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ 'AGENTS.md': '# Rules\n' });
  });
  afterAll(async () => {
    for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await t.cleanup();
  });

  it('answers initialize and tools/list as the SDK server does, without starting the daemon', async () => {
    const s = await ready();
    send(s, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const quick = await answer(s, 2);
    expect(quick.result.tools.map((x: { name: string }) => x.name)).toEqual([
      'memory',
      'session_search',
      'skills_list',
      'skill_view',
      'skill_manage',
      'remember',
      'check',
      'context',
    ]);
    const init = await answer(s, 1);
    expect(init.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'hermesd' },
      capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
    });
    // Nothing reached for the daemon: no daemon.json in the git dir.
    await new Promise((r) => setTimeout(r, 300));
    const runtime = join(repo, '.git', 'hermesd', 'daemon.json');
    expect(existsSync(runtime)).toBe(false);
    // The SDK server, loaded by a request the front does not answer (a cursor), lists the same tools.
    send(s, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'from-the-sdk' } });
    expect((await answer(s, 3)).result).toEqual(quick.result);
    // And the recorded answer is what the SDK server gives for that protocol version.
    const recorded = await recordAnswers();
    expect(init.result).toEqual(recorded.initialize['2025-06-18']);
    // The first tool call reaches (and starts) the daemon, with the client's name from the replayed initialize.
    send(s, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'skills_list', arguments: {} } });
    const listed = await answer(s, 4);
    expect(listed.result.isError ?? false).toBe(false);
    expect(existsSync(runtime)).toBe(true);
    s.child.stdin.end();
    expect((await ends(s)).code).toBe(0);
    expect(s.stderr()).toContain('leaving-client 1 connected');
    expect(s.stderr()).toMatch(/closing \(stdin (ended|closed)\)/);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`ends on ${signal}, its stdin still open`, async () => {
      const s = await ready();
      s.child.kill(signal);
      const end = await ends(s);
      // Ended by the signal itself, raised again once logged: not by process.exit, whose teardown a client's bound waits for.
      expect(end, `how the server ended after ${signal}`).toEqual({ code: null, signal });
      expect(s.stderr()).toContain(`closing (${signal})`);
    });
  }

  it('ends when its stdout is broken (EPIPE on the next answer)', async () => {
    const s = await ready();
    s.child.stdout.destroy();
    send(s, { jsonrpc: '2.0', id: 7, method: 'ping' });
    expect((await ends(s)).code).toBe(0);
  });

  it('ends when its stderr is broken, instead of logging an error about logging for ever', async () => {
    const s = await ready();
    s.child.stderr.destroy();
    // A line that is not JSON is logged on stderr: the write fails.
    s.child.stdin.write('not json\n');
    expect((await ends(s)).code).toBe(0);
  });

  it('ends when its client is killed (SIGKILL): no orphan is left', async () => {
    const { mcpLaunch } = await builtLaunch();
    const launch = mcpLaunch({ repo, env: t.env });
    // The client: a process that starts the server on pipes, says its pid and waits; then it is killed.
    const script = `
      const { spawn } = require('node:child_process');
      const c = spawn(${JSON.stringify(launch.command)}, ${JSON.stringify(launch.args)}, { stdio: ['pipe', 'pipe', 'pipe'] });
      c.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'doomed', version: '1' } } }) + '\\n');
      c.stdout.once('data', () => process.stdout.write(String(c.pid) + '\\n'));
      setInterval(() => {}, 1000);
    `;
    const client = spawn(process.execPath, ['-e', script], { cwd: repo, env: { ...serverEnv(t), ...launch.env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    client.stdout.on('data', (d: Buffer) => (out += d));
    await waitFor(() => out.includes('\n'), 20_000);
    const pid = Number(out.trim());
    expect(alive(pid)).toBe(true);
    client.kill('SIGKILL');
    await waitFor(() => !alive(pid), ENDS_WITHIN_MS);
  });

  it('a repository it cannot serve ends it with the reason', async () => {
    const { mcpLaunch } = await builtLaunch();
    const outside = join(t.home, '..');
    const launch = mcpLaunch({ repo: outside, env: t.env });
    const child = spawn(launch.command, launch.args, {
      cwd: outside,
      env: { ...serverEnv(t), ...launch.env, GIT_CEILING_DIRECTORIES: join(outside, '..') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    started.push(child);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }) + '\n',
    );
    expect(await exited).toBe(1);
    expect(err).toMatch(/not inside a git work tree/i);
    git(repo, 'status');
  });
});
