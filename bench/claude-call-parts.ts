/**
 * `npm run bench -- claude-call-parts`: where a Claude Code tool call's time goes
 * when hermesd is set up, part by part. agents-e2e compares hermesd (hooks + MCP server) with
 * do-nothing hooks and no MCP server; a tool call's difference there mixes hermesd's hooks with
 * what Claude Code itself does differently when a project has an MCP server with tools, and
 * when a pre-tool hook gives the command back, and with the confinement the command then runs
 * in. Here each part is a setup of its own, all with the do-nothing hooks of agents-e2e except
 * where named, the same session (a file read, `git status --short`, a new file written, three
 * times over), NODE_EXTRA_CA_CERTS unset, in a new random order each round; medians per kind
 * of call:
 *
 * - **no hooks**, **do-nothing hooks**: as in agents-e2e;
 * - **+ an MCP server with tools**: a Node process that lists eight tools with empty schemas and
 *   does nothing else (not hermesd's);
 * - **+ the command given back**: the Bash pre-tool hook prints `updatedInput` with the same
 *   command (sh builtins: no judging);
 * - **+ the command given back confined**: the same with hermesd's rewrite of it, taken once
 *   from hermesd's hook in that repository (the command runs in hermesd's bubblewrap script);
 * - **hermesd's hooks**: `init --agents claude` with its MCP registration taken out;
 * - **hermesd's hooks and MCP server**: as agents-e2e's hermesd setup (no rule, no memory).
 *
 * Claude Code only: its calls are the quickest of the three clients (~40–110 ms), so a few
 * milliseconds show; Codex's take ~150 ms and vary by more than the parts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDaemon, stopDaemon } from '../src/client/lifecycle.js';
import { resolvePaths } from '../src/paths/index.js';
import { shQuote } from '../src/text/sh-quote.js';
import { CLI_ENTRY } from '../src/version.js';
import { agentCli, setUpClient, startNetworkTrap, testProcesses } from '../test/helpers/agent-clis.js';
import { startAgentModel } from '../test/helpers/agent-models.js';
import { rewritten, toolHookCommand } from '../test/helpers/agents.js';
import { benchEnv, CALL_KINDS, gitRepo, interval, kill, noopHooks, ROUNDS, roundsProblem, runOnce, type Sample, type Setup } from './agents-e2e.js';
import { median, ms, printNote, printTable, shuffled, type Bench, type Row } from './table.js';

const WARMUP = 1;

const PARTS = ['none', 'noop', 'mcp-tools', 'given-back', 'given-back-confined', 'hermesd-hooks', 'hermesd'] as const;
type Part = (typeof PARTS)[number];
const LABEL: Record<Part, string> = {
  none: 'no hooks',
  noop: 'do-nothing hooks',
  'mcp-tools': 'do-nothing hooks + an MCP server with 8 tools that does nothing',
  'given-back': 'do-nothing hooks, the Bash command given back as it was',
  'given-back-confined': "do-nothing hooks, the Bash command given back confined (hermesd's rewrite)",
  'hermesd-hooks': "hermesd's hooks, no MCP server",
  hermesd: "hermesd's hooks and MCP server",
};

/** An MCP server that lists eight tools with empty schemas, answers every other request with {}, and ends with its stdin. */
const TOOLS_SERVER = `const tools = Array.from({ length: 8 }, (_, i) => ({ name: 't' + i, description: 'Does nothing.', inputSchema: { type: 'object', properties: {} } }));
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id === undefined) continue;
    const result = m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'tools', version: '1' } } : m.method === 'tools/list' ? { tools } : {};
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\\n');
  }
});
process.stdin.on('end', () => process.exit(0));`;

const NO_MCP = '{ "mcpServers": {} }\n';

type ClaudeSettings = { hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>> };

/** The Bash entry of PreToolUse in a Claude Code settings file. */
const bashPre = (st: ClaudeSettings) => st.hooks.PreToolUse!.find((g) => g.matcher?.split('|').includes('Bash'))!.hooks[0]!;

/**
 * The do-nothing hooks with the pre-tool hook of Bash (its entry also matches Read and Grep)
 * printing `updatedInput: {command}` for a Bash call, with sh builtins only.
 */
function givingBack(repo: string, command: string): void {
  noopHooks('claude', repo);
  const file = join(repo, '.claude', 'settings.json');
  const st = JSON.parse(readFileSync(file, 'utf8')) as ClaudeSettings;
  const answer = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command } } });
  writeFileSync(join(repo, 'given-back.sh'), `IFS= read -r p\ncase $p in *'"tool_name":"Bash"'*) printf '%s\\n' ${shQuote(answer)} ;; esac\n`);
  bashPre(st).command = `sh ${join(repo, 'given-back.sh')}`;
  writeFileSync(file, JSON.stringify(st, null, 2) + '\n');
}

/** hermesd's Bash pre-tool hook's rewrite of `command` in `repo` (its daemon running), run as Claude Code runs it. */
function hermesdRewrite(repo: string, env: NodeJS.ProcessEnv, command: string): string {
  const payload = {
    session_id: 'bench',
    transcript_path: join(repo, 'none.jsonl'),
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
  };
  const r = spawnSync('sh', ['-c', toolHookCommand(repo, 'claude', 'PreToolUse', 'Bash')], {
    cwd: repo,
    env: { ...env, CLAUDE_PROJECT_DIR: repo },
    input: JSON.stringify(payload),
    encoding: 'utf8',
  });
  const given = rewritten('claude', { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, ms: 0 });
  if (!given || given === command) throw new Error(`hermesd's hook gave back no confined command: exit ${r.status}, ${r.stdout}${r.stderr}`);
  return given;
}

export const bench: Bench = {
  name: 'claude-call-parts',
  async run() {
    const problem = roundsProblem();
    if (problem) throw new Error(problem);
    const base = mkdtempSync(join(tmpdir(), 'hd-bench-parts-'));
    const env = benchEnv();
    delete env.NODE_EXTRA_CA_CERTS;
    const cli = await agentCli('claude');
    const trap = await startNetworkTrap();
    const setups: Array<Setup & { part: Part; env: NodeJS.ProcessEnv }> = [];
    const serverFile = join(base, 'tools-server.mjs');
    writeFileSync(serverFile, TOOLS_SERVER);
    try {
      for (const part of PARTS) {
        const vbase = join(base, `${part}-home`);
        mkdirSync(vbase, { recursive: true });
        const repo = join(base, part);
        mkdirSync(repo);
        const venv = { ...env, HERMES_HOME: join(vbase, 'hermes'), HERMESD_SOCKET_DIR: join(base, 's') };
        gitRepo(repo, venv);
        if (part === 'noop') noopHooks('claude', repo);
        if (part === 'mcp-tools') {
          noopHooks('claude', repo);
          writeFileSync(
            join(repo, '.mcp.json'),
            JSON.stringify({ mcpServers: { tools: { type: 'stdio', command: process.execPath, args: [serverFile] } } }, null, 2) + '\n',
          );
        }
        if (part === 'given-back') givingBack(repo, 'git status --short');
        if (part === 'given-back-confined' || part === 'hermesd-hooks' || part === 'hermesd') {
          execFileSync(process.execPath, [CLI_ENTRY, 'init', '--agents', 'claude'], { cwd: repo, env: venv, stdio: 'ignore' });
          await ensureDaemon(resolvePaths(repo, venv), venv);
          if (part === 'given-back-confined') {
            // The daemon keeps running: the confine script is its file, and it takes the script away when it stops.
            givingBack(repo, hermesdRewrite(repo, venv, 'git status --short'));
            writeFileSync(join(repo, '.mcp.json'), NO_MCP);
          }
          if (part === 'hermesd-hooks') writeFileSync(join(repo, '.mcp.json'), NO_MCP);
        }
        const model = await startAgentModel(cli.dialect);
        const session = await setUpClient(cli, { env: venv, base: vbase, repo, model, trap, debugLog: false });
        setups.push({ variant: LABEL[part], part, repo, model, session, hermesHome: String(venv.HERMES_HOME), env: venv });
      }

      // One sample per setup per round: a part's cost is taken within a round, which shares the machine's noise.
      const rounds: Array<Map<Part, Sample>> = [];
      let n = 0;
      for (let round = 0; round < WARMUP + ROUNDS; round++) {
        const got = new Map<Part, Sample>();
        for (const s of shuffled(setups)) {
          const from = s.model.requests.length;
          const x = await runOnce('claude', s, ++n, 'unset', 0);
          // A call that failed (a command that could not run) is quick and measures nothing.
          const failed = s.model.requests
            .slice(from)
            .flatMap((r) => r.toolResults)
            .find((r) => r.isError);
          if (failed) throw new Error(`${s.variant}: a tool call failed: ${failed.output.slice(0, 500)}`);
          got.set(s.part, x);
        }
        if (round >= WARMUP) rounds.push(got);
      }

      const calls = (x: Sample, k: number) => x.tools.filter((_, j) => j % CALL_KINDS.length === k);
      const pooled = (p: Part, k: number) => median(rounds.flatMap((r) => calls(r.get(p)!, k)));
      const rows: Row[] = PARTS.map((p) => ({ setup: LABEL[p], ...Object.fromEntries(CALL_KINDS.map((name, k) => [name, ms(pooled(p, k), 1)])) }));
      printTable(
        `Claude Code ${cli.version}: a tool call by kind, per setup (${ROUNDS} rounds after ${WARMUP} warm-up, 3 calls of each kind a session, NODE_EXTRA_CA_CERTS unset; medians of every call)`,
        rows,
      );

      // A part: per round, the median of a kind's three calls with it less without it; the median over rounds, and its 90% interval.
      const part = (a: Part, b: Part, k: number) => {
        const d = rounds.map((r) => median(calls(r.get(a)!, k)) - median(calls(r.get(b)!, k)));
        const [lo, hi] = interval([d], ([g]) => median(g!));
        return `${ms(median(d), 1)} [${lo.toFixed(1)}, ${hi.toFixed(1)}]`;
      };
      const PAIRS: Array<[string, Part, Part]> = [
        ['an MCP server with tools, not hermesd’s (over do-nothing hooks)', 'mcp-tools', 'noop'],
        ['a pre-tool hook giving the Bash command back as it was (over do-nothing hooks)', 'given-back', 'noop'],
        ['the confinement that command then runs in (given back confined, over given back as it was)', 'given-back-confined', 'given-back'],
        ['hermesd’s hooks themselves (over do-nothing hooks giving back the same confined command)', 'hermesd-hooks', 'given-back-confined'],
        ['hermesd’s MCP server (over hermesd’s hooks alone)', 'hermesd', 'hermesd-hooks'],
        ['all of hermesd, hooks and MCP server (over do-nothing hooks)', 'hermesd', 'noop'],
      ];
      printTable(
        `What each part adds to a tool call: per round, the median of a kind's three calls with the part less without it; the median over ${ROUNDS} rounds [and its 90% bootstrap interval, ms]`,
        PAIRS.map(([what, a, b]) => ({ part: what, ...Object.fromEntries(CALL_KINDS.map((name, k) => [name, part(a, b, k)])) })),
      );
      printNote(
        'The do-nothing hooks that give the command back answer only for Bash (their entry also matches Read and Grep): for a read or a write, "hermesd’s hooks themselves" is hermesd’s hooks over do-nothing ones. ' +
          'An interval that spans zero is a part this run could not tell from the machine’s noise.',
      );
      return [];
    } finally {
      for (const s of setups) await s.model.close();
      await trap.close();
      for (const s of setups) await stopDaemon(resolvePaths(s.repo, s.env)).catch(() => undefined);
      for (const s of setups) for (const p of testProcesses(s.hermesHome)) kill(p.pid);
      rmSync(base, { recursive: true, force: true });
    }
  },
};
