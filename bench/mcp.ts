/**
 * `npm run bench -- mcp` (issue 17): a tool call through `hermesd mcp` (the SDK client over
 * stdio → the server → the daemon's API) next to the daemon's own HTTP call for the same
 * operation from a kept-alive client, interleaved, medians. The difference is what MCP adds
 * (goal ≤ 2 ms). Also: `hermesd mcp` from spawn to an answered `initialize`, next to `node -e 0`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DaemonClient } from '../src/client/client.js';
import { ensureDaemon, stopDaemon } from '../src/client/lifecycle.js';
import { resolvePaths } from '../src/paths/index.js';
import { mcpLaunch } from '../src/mcp/launch.js';
import { median, ms, percentile, printTable, type Bench, type Row } from './table.js';

const RUNS = 200;
const WARMUP = 20;
const START_RUNS = 7;
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

      const starts: number[] = [];
      for (let i = 0; i < START_RUNS; i++) {
        const t = process.hrtime.bigint();
        const c = await connect(repo, env);
        starts.push(Number(process.hrtime.bigint() - t) / 1e6);
        await c.close();
      }
      const bare: number[] = [];
      for (let i = 0; i < START_RUNS; i++) {
        const t = process.hrtime.bigint();
        spawnSync(process.execPath, ['-e', '0'], { env: stdioEnv(env), stdio: 'ignore' });
        bare.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      printTable('hermesd mcp start: spawn to initialize answered (daemon running; the stdio client passes no NODE_EXTRA_CA_CERTS)', [
        { what: 'hermesd mcp → initialize', median: ms(median(starts), 1) },
        { what: 'node -e 0 (same env)', median: ms(median(bare), 1) },
      ]);
      http.close();
      return [
        {
          measure: `tool call through \`hermesd mcp\` minus the daemon's HTTP call, median of interleaved pairs (${ops.length} operations)`,
          result: `${Math.min(...overheads).toFixed(2)}–${ms(Math.max(...overheads))}`,
          goal: `≤ ${OVERHEAD_GOAL_MS} ms`,
          met: overheads.every((x) => x <= OVERHEAD_GOAL_MS),
        },
      ];
    } finally {
      await stopDaemon(paths).catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    }
  },
};
