/**
 * `npm run bench -- mcp`: a tool call through `hermesd mcp` (the SDK client over
 * stdio → the server → the daemon's API) next to the daemon's own HTTP call for the same
 * operation from a kept-alive client, interleaved, medians. The difference is what MCP adds
 * (goal ≤ 2 ms). Also: `hermesd mcp` from spawn to answered `initialize` and `tools/list` (what
 * every agent waits for before its first model request; goal ≤ 120 ms), as agents start it
 * (the committed stub `.hermes/mcp`), as the bundle and as the CLI, with and without
 * NODE_EXTRA_CA_CERTS, beside a Node process that answers the same two requests from a
 * literal; and how long it takes to end once its client closes stdin or signals it (goal ≤ 100 ms).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DaemonClient } from '../src/client/daemon-client.js';
import { ensureDaemon, stopDaemon } from '../src/client/lifecycle.js';
import { resolvePaths } from '../src/paths/index.js';
import { mcpLaunch } from '../src/mcp/launch.js';
import { CLI_ENTRY } from '../src/version.js';
import { median, ms, percentile, printTable, type Bench, type Goal, type Row } from './table.js';

const RUNS = 200;
const WARMUP = 20;
const START_RUNS = 15;
/** Spawn to `tools/list` answered: every agent waits for it before its first model request. */
const START_GOAL_MS = 120;
/** A client stopping its servers (Claude Code: SIGINT, SIGTERM 100 ms later, SIGKILL 400 ms after) must not wait on hermesd. */
const EXIT_GOAL_MS = 100;
/** Spawn to the first resources/list answered, ÷ a Node process answering from literals. */
const LIST_GOAL = 1.3;
/** What `hermesd mcp` may add to the daemon's own HTTP call: invisible beside a model turn. */
const OVERHEAD_GOAL_MS = 2;

type Op = { label: string; mcp: (c: Client) => Promise<unknown>; http: (d: DaemonClient) => Promise<unknown> };

function setup() {
  const base = mkdtempSync(join(tmpdir(), 'hd-bench-mcp-'));
  const repo = join(base, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, 'AGENTS.md'), '# Rules\nUse pnpm.\n');
  const env: NodeJS.ProcessEnv = { ...process.env, HERMES_HOME: join(base, 'home'), HERMESD_SOCKET_DIR: join(base, 's') };
  return { base, repo, env, paths: resolvePaths(repo, env) };
}

/** A Node process that answers initialize, tools/list and resources/list from a literal: the floor of any Node MCP server. */
const FLOOR_SERVER = `process.stdin.on('data', (d) => { for (const l of String(d).split('\\n')) { if (!l) continue; const m = JSON.parse(l); if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } }) + '\\n'); } }); process.stdin.on('end', () => process.exit(0));`;

type Start = { initialize: number; tools: number; resources?: number; exit: number };

/**
 * Spawns a server, asks initialize then tools/list (then resources/list, with `resources`: what
 * Claude Code also waits for), then ends it (`end`): the times from spawn to each answer, and
 * from `end` to its exit.
 */
function oneStart(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, end: 'stdin' | 'SIGINT', resources = false): Promise<Start> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    const times: Partial<Start> = {};
    let ended = 0n;
    let buf = '';
    /** The last answer came: the client goes, as `end` says. */
    const finish = () => {
      ended = process.hrtime.bigint();
      if (end === 'stdin') child.stdin.end();
      else child.kill('SIGINT');
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')}: no answer within 20 s`));
    }, 20_000);
    child.on('exit', () => {
      clearTimeout(timer);
      times.exit = since(ended);
      resolve(times as Start);
    });
    child.stdout.on('data', (d: Buffer) => {
      buf += d;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, i)) as { id?: number };
        buf = buf.slice(i + 1);
        if (m.id === 1) {
          times.initialize = since(t0);
          child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
          child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) + '\n');
        } else if (m.id === 2) {
          times.tools = since(t0);
          if (resources) child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/list' }) + '\n');
          else finish();
        } else if (m.id === 3) {
          times.resources = since(t0);
          finish();
        }
      }
    });
    child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      }) + '\n',
    );
  });
}

/** The start of `hermesd mcp` as agents start it, as the bundle and as the CLI, with and without NODE_EXTRA_CA_CERTS, interleaved. */
async function startTimes(repo: string, env: NodeJS.ProcessEnv): Promise<Goal[]> {
  execFileSync(process.execPath, [CLI_ENTRY, 'init', '--agents', 'claude'], { cwd: repo, env, stdio: 'ignore' });
  execFileSync(process.execPath, [CLI_ENTRY, 'stop'], { cwd: repo, env, stdio: 'ignore' });
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const withCa = { ...env, ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) };
  const withoutCa = { ...env };
  delete withoutCa.NODE_EXTRA_CA_CERTS;
  const launch = mcpLaunch({ repo, env });
  const variants: Array<{ label: string; command: string; args: string[]; env: NodeJS.ProcessEnv }> = [
    { label: 'the committed stub `sh .hermes/mcp` (as agents start it)', command: 'sh', args: [join(repo, '.hermes', 'mcp')], env: withCa },
    { label: 'the bundle, `node dist/mcp/main.cjs`', command: launch.command, args: launch.args, env: withCa },
    { label: 'the bundle, NODE_EXTRA_CA_CERTS unset', command: launch.command, args: launch.args, env: withoutCa },
    { label: '`hermesd mcp` through the CLI', command: process.execPath, args: [CLI_ENTRY, 'mcp', '--repo', repo], env: withCa },
    { label: 'floor: node answering from a literal', command: process.execPath, args: ['-e', FLOOR_SERVER], env: withCa },
    { label: 'floor, NODE_EXTRA_CA_CERTS unset', command: process.execPath, args: ['-e', FLOOR_SERVER], env: withoutCa },
  ];
  const runs = variants.map(() => [] as Start[]);
  const signalled = variants.map(() => [] as number[]);
  for (let i = 0; i < START_RUNS; i++) {
    for (const [k, v] of variants.entries()) {
      runs[k]!.push(await oneStart(v.command, v.args, repo, v.env, 'stdin'));
      signalled[k]!.push((await oneStart(v.command, v.args, repo, v.env, 'SIGINT')).exit);
    }
  }
  const rows: Row[] = variants.map((v, k) => ({
    'started as': v.label,
    'initialize answered': ms(median(runs[k]!.map((r) => r.initialize)), 1),
    'tools/list answered': ms(median(runs[k]!.map((r) => r.tools)), 1),
    'ends after stdin closes': ms(median(runs[k]!.map((r) => r.exit)), 1),
    'ends after SIGINT': ms(median(signalled[k]!), 1),
  }));
  printTable(
    `hermesd mcp: from spawn to answered initialize and tools/list, no daemon running (${START_RUNS} interleaved runs each, medians; NODE_EXTRA_CA_CERTS ${ca ? 'set' : 'not set'} in this environment)`,
    rows,
  );
  // What Claude Code waits for before its first model request: the three answers. The list comes from
  // the one this repository's last session was given (kept in the runtime folder), the daemon asked
  // after; beside the floor answering the same three from literals, interleaved.
  await ensureDaemon(resolvePaths(repo, env), env);
  await oneStart('sh', [join(repo, '.hermes', 'mcp')], repo, withCa, 'stdin', true);
  const listVariants = [
    { label: variants[0]!.label, command: 'sh', args: [join(repo, '.hermes', 'mcp')], env: withCa },
    { label: `${variants[0]!.label}, NODE_EXTRA_CA_CERTS unset`, command: 'sh', args: [join(repo, '.hermes', 'mcp')], env: withoutCa },
    { label: variants[4]!.label, command: process.execPath, args: ['-e', FLOOR_SERVER], env: withCa },
    { label: variants[5]!.label, command: process.execPath, args: ['-e', FLOOR_SERVER], env: withoutCa },
  ];
  const listRuns = listVariants.map(() => [] as Start[]);
  for (let i = 0; i < START_RUNS; i++)
    for (const [k, v] of listVariants.entries()) listRuns[k]!.push(await oneStart(v.command, v.args, repo, v.env, 'stdin', true));
  const listMed = (k: number) => median(listRuns[k]!.map((r) => r.resources!));
  printTable(
    `hermesd mcp as agents start it, a daemon running: from spawn to answered initialize, tools/list and resources/list (what Claude Code waits for before its first model request), beside a Node process answering the three from literals (${START_RUNS} interleaved runs, medians)`,
    listVariants.map((v, k) => ({
      'started as': v.label,
      'initialize answered': ms(median(listRuns[k]!.map((r) => r.initialize)), 1),
      'tools/list answered': ms(median(listRuns[k]!.map((r) => r.tools)), 1),
      'resources/list answered': ms(listMed(k), 1),
    })),
  );
  const listGoals: Goal[] = [0, 1].map((k) => ({
    measure: `\`hermesd mcp\` as agents start it: spawn to the first \`resources/list\` answered ÷ the floor's (${k === 0 ? 'NODE_EXTRA_CA_CERTS as set here' : 'NODE_EXTRA_CA_CERTS unset'})`,
    result: `${(listMed(k) / listMed(k + 2)).toFixed(2)}× (${ms(listMed(k), 1)} vs ${ms(listMed(k + 2), 1)})`,
    goal: `≤ ${LIST_GOAL}×`,
    met: listMed(k) / listMed(k + 2) <= LIST_GOAL,
  }));
  const stub = runs[0]!;
  const stubTools = median(stub.map((r) => r.tools));
  const ends = Math.max(median(stub.map((r) => r.exit)), median(signalled[0]!));
  return [
    {
      measure: '`hermesd mcp` as agents start it (`sh .hermes/mcp`): spawn to `tools/list` answered, no daemon running',
      result: `${ms(stubTools, 1)} (floor ${ms(median(runs[4]!.map((r) => r.tools)), 1)})`,
      goal: '≤ 120 ms',
      met: stubTools <= START_GOAL_MS,
    },
    {
      measure: '`hermesd mcp` ends after its client closes stdin or sends SIGINT (as Claude Code stops it)',
      result: ms(ends, 1),
      goal: '≤ 100 ms',
      met: ends <= EXIT_GOAL_MS,
    },
    ...listGoals,
  ];
}

function stdioEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'HERMES_HOME', 'HERMESD_SOCKET_DIR']) if (env[k]) out[k] = env[k]!;
  return { ...out, ...extra };
}

async function connect(repo: string, env: NodeJS.ProcessEnv): Promise<Client> {
  const launch = mcpLaunch({ repo, env });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: launch.command, args: launch.args, env: stdioEnv(env, launch.env), cwd: repo, stderr: 'ignore' }));
  return client;
}

export const bench: Bench = {
  name: 'mcp',
  async run() {
    const { base, repo, env, paths } = setup();
    try {
      const { status } = await ensureDaemon(paths, env);
      const http = new DaemonClient(String(status.socket), { keepAlive: true });
      const tool = (name: string, args: Record<string, unknown>): Op => ({
        label: `${name} ${JSON.stringify(args)}`,
        mcp: (c) => c.callTool({ name, arguments: args }),
        http: (d) => d.call('POST', `/v1/tools/${name}?session_id=bench`, args),
      });
      const memoryFact = { action: 'add', target: 'memory', content: 'Project uses pnpm workspaces' };
      await http.call('POST', '/v1/tools/memory', memoryFact);
      const ops: Op[] = [
        tool('skills_list', {}),
        // A duplicate add: the write path up to the lock and the store's answer, the file unchanged.
        tool('memory', memoryFact),
        tool('session_search', { query: 'pnpm' }),
        {
          label: 'resource hermesd://memory',
          mcp: (c) => c.readResource({ uri: 'hermesd://memory' }),
          http: (d) => d.call('GET', '/v1/memory/snapshot'),
        },
        {
          label: 'check {}',
          mcp: (c) => c.callTool({ name: 'check', arguments: {} }),
          http: (d) => d.call('POST', '/v1/check', { staged: false }),
        },
      ];

      const client = await connect(repo, env);
      const rows: Row[] = [];
      const overheads: number[] = [];
      for (const op of ops) {
        const viaMcp: number[] = [];
        const viaHttp: number[] = [];
        for (let i = 0; i < WARMUP + RUNS; i++) {
          // Interleaved, so both sides see the same moment of a shared machine.
          let t = process.hrtime.bigint();
          await op.mcp(client);
          const m = Number(process.hrtime.bigint() - t) / 1e6;
          t = process.hrtime.bigint();
          await op.http(http);
          const h = Number(process.hrtime.bigint() - t) / 1e6;
          if (i >= WARMUP) {
            viaMcp.push(m);
            viaHttp.push(h);
          }
        }
        const overhead = viaMcp.map((m, i) => m - viaHttp[i]!);
        overheads.push(median(overhead));
        rows.push({
          operation: op.label,
          'MCP (median)': ms(median(viaMcp)),
          'daemon HTTP (median)': ms(median(viaHttp)),
          'MCP overhead (median of pairs)': ms(median(overhead)),
          'overhead p90': ms(percentile(overhead, 90)),
        });
      }
      await client.close();
      printTable(`MCP tool call round trip vs the daemon's HTTP call (${RUNS} interleaved pairs each; goal: overhead ≤ ${OVERHEAD_GOAL_MS} ms)`, rows);

      await stopDaemon(paths).catch(() => undefined);
      const starts = await startTimes(repo, env);
      http.close();
      const overheadGoal = {
        measure: `tool call through \`hermesd mcp\` minus the daemon's HTTP call, median of interleaved pairs (${ops.length} operations)`,
        result: `${Math.min(...overheads).toFixed(2)}–${ms(Math.max(...overheads))}`,
        goal: `≤ ${OVERHEAD_GOAL_MS} ms`,
        met: overheads.every((x) => x <= OVERHEAD_GOAL_MS),
      };
      return [overheadGoal, ...starts];
    } finally {
      await stopDaemon(paths).catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    }
  },
};
