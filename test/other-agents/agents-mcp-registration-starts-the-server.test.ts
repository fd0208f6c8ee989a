/**
 * The MCP registrations `hermesd init --agents all` wrote start a working `hermesd mcp`, and
 * name nothing of this machine: each entry read back from its file (`.mcp.json`,
 * `.cursor/mcp.json`, `[mcp_servers.hermesd]` in `.codex/config.toml`, `mcpServers` in
 * `.gemini/settings.json`), its placeholders expanded as that agent expands them, started in
 * the agent's working directory with the environment that agent gives a server, then asked
 * through the SDK's own client for its tools and one call. The committed files carry no
 * absolute path of this machine; in a teammate's clone the same entries say on stderr that
 * hermesd is not set up there until `hermesd init --agents` runs in it, then serve that clone.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonc } from '../../src/other-agents/json-edit.js';
import { gitIn, makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';

type Entry = { command: string; args: string[]; env?: Record<string, string>; env_vars?: string[] };
type Agent = 'claude' | 'cursor' | 'codex' | 'gemini';
const AGENTS: Agent[] = ['claude', 'cursor', 'codex', 'gemini'];

function entries(root: string): Record<Agent, Entry> {
  const json = (f: string) => parseJsonc(readFileSync(join(root, f), 'utf8')).value as { mcpServers: Record<string, Entry> };
  const codex = parse(readFileSync(join(root, '.codex/config.toml'), 'utf8')) as unknown as { mcp_servers: Record<string, Entry> };
  return {
    claude: json('.mcp.json').mcpServers.hermesd!,
    cursor: json('.cursor/mcp.json').mcpServers.hermesd!,
    codex: codex.mcp_servers.hermesd!,
    gemini: json('.gemini/settings.json').mcpServers.hermesd!,
  };
}

/** Claude Code's expansion of `${VAR}` and `${VAR:-default}` in command, args and env, from its own environment. */
const claudeExpand = (s: string, env: NodeJS.ProcessEnv) =>
  s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, dflt?: string) => env[name] || (dflt ?? ''));

/**
 * How each agent starts the entry in a work tree `root`, as far as its docs and source say
 * (docs/agents.md, "The MCP server"): where, with which arguments and which environment.
 * `agentEnv` is the agent's own environment (the test's isolated one).
 */
function launch(
  agent: Agent,
  e: Entry,
  root: string,
  agentEnv: NodeJS.ProcessEnv,
): { command: string; args: string[]; cwd: string; env: Record<string, string> } {
  // What a stdio client passes a server at the least (the SDK's default environment).
  const base: Record<string, string> = { PATH: agentEnv.PATH ?? '', HOME: agentEnv.HOME ?? '' };
  const all = Object.fromEntries(Object.entries(agentEnv).filter((kv): kv is [string, string] => kv[1] !== undefined));
  switch (agent) {
    case 'claude':
      // CLAUDE_PROJECT_DIR is set in the server's environment, not in Claude Code's own: args expand to their default.
      return {
        command: claudeExpand(e.command, agentEnv),
        args: e.args.map((a) => claudeExpand(a, agentEnv)),
        cwd: root,
        env: { ...base, ...Object.fromEntries(Object.entries(e.env ?? {}).map(([k, v]) => [k, claudeExpand(v, agentEnv)])), CLAUDE_PROJECT_DIR: root },
      };
    case 'cursor':
      return { command: e.command, args: e.args.map((a) => a.replace('${workspaceFolder}', root)), cwd: root, env: all };
    case 'codex': {
      // Codex starts servers in the session's directory (here one below the root) with the variables env_vars names.
      const sub = join(root, 'src');
      mkdirSync(sub, { recursive: true });
      return {
        command: e.command,
        args: e.args,
        cwd: sub,
        env: { ...base, ...Object.fromEntries((e.env_vars ?? []).filter((v) => agentEnv[v]).map((v) => [v, agentEnv[v]!])) },
      };
    }
    case 'gemini':
      // Gemini CLI reads the project's settings in the directory it runs in, and starts servers there with its environment.
      return { command: e.command, args: e.args, cwd: root, env: all };
  }
}

async function serves(agent: Agent, root: string, agentEnv: NodeJS.ProcessEnv): Promise<string[]> {
  const transport = new StdioClientTransport({ ...launch(agent, entries(root)[agent], root, agentEnv), stderr: 'pipe' });
  const client = new Client({ name: `as-${agent}`, version: '1' });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((x) => x.name);
    const ctx = await client.callTool({ name: 'context', arguments: {} });
    expect(ctx.isError ?? false).toBe(false);
    expect(JSON.stringify(ctx.content)).toContain('AGENTS.md');
    return tools;
  } finally {
    await client.close();
  }
}

describe('the MCP servers init --agents registered', () => {
  let t: TestEnv;
  let repo: string;
  let clone: string;
  let committed: string[];
  /** The agent's environment: the test's, with a HOME of its own, where a server that lost HERMES_HOME would write. */
  const agentEnv = (): NodeJS.ProcessEnv => ({ ...t.env, HOME: join(dirname(repo), 'agent-home') });

  /** The official SDK client connected to the bundle's `file` in dist/mcp/ started with `args`, as an agent would (its environment). */
  const bundleClient = async (name: string, file: string, args: string[]): Promise<Client> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO_ROOT, 'dist', 'mcp', file), ...args],
      cwd: repo,
      env: Object.fromEntries(Object.entries(agentEnv()).filter((kv): kv is [string, string] => kv[1] !== undefined)),
      stderr: 'pipe',
    });
    const client = new Client({ name, version: '1' });
    await client.connect(transport);
    return client;
  };

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': 'rules: []\n', 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    const init = await t.cli(['init', '--agents', 'all', '--json'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    committed = [...init.json().commit, ...init.json().agents.commit];
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'hermesd for the agents');
    clone = join(dirname(repo), 'teammate');
    gitIn(t, dirname(repo), 'clone', '-q', repo, clone);
    mkdirSync(agentEnv().HOME!);
  });
  afterAll(async () => {
    await t.cli(['stop'], { cwd: clone }).catch(() => undefined);
    await t.cleanup();
  });

  it.each(AGENTS)('%s: the registered command serves the repository', async (agent) => {
    // The server starts the daemon itself, with the environment it was given.
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    const tools = await serves(agent, repo, agentEnv());
    expect(tools).toContain('memory');
    expect(tools).toContain('check');
    // hermesd's variables reached the server: nothing was written under the agent's HOME (~/.hermes is the default).
    expect(existsSync(join(agentEnv().HOME!, '.hermes'))).toBe(false);
  });

  it.each(AGENTS)('%s: the registered command asks git nothing before it serves (the stub found the git dirs)', async (agent) => {
    // A daemon runs (it needs git); the server is started with a PATH that has sh (the entries run it) and no git.
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const noGit = join(dirname(repo), 'no-git-bin');
    if (!existsSync(noGit)) {
      mkdirSync(noGit);
      symlinkSync('/bin/sh', join(noGit, 'sh'));
    }
    expect(await serves(agent, repo, { ...agentEnv(), PATH: noGit })).toContain('memory');
  });

  it('the launcher keeps NODE_EXTRA_CA_CERTS from the server (it makes no TLS connection) and gives it back to the daemon it starts', async () => {
    // The tests' environment has no extra certificates (helpers/env.ts): an agent's may have them.
    const ca = join(dirname(repo), 'extra-ca.pem');
    writeFileSync(ca, existsSync('/etc/ssl/certs/ca-certificates.crt') ? readFileSync('/etc/ssl/certs/ca-certificates.crt') : '');
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    const transport = new StdioClientTransport({ ...launch('gemini', entries(repo).gemini, repo, { ...agentEnv(), NODE_EXTRA_CA_CERTS: ca }), stderr: 'pipe' });
    const client = new Client({ name: 'with-extra-ca', version: '1' });
    await client.connect(transport);
    try {
      // The server starts the daemon for its first list.
      expect((await client.listResources()).resources.length).toBeGreaterThan(0);
      const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(environ(transport.pid!), "the MCP server's environment").not.toContain(`NODE_EXTRA_CA_CERTS=${ca}`);
      const daemon = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
      expect(environ(daemon), 'the environment of the daemon the MCP server started').toContain(`NODE_EXTRA_CA_CERTS=${ca}`);
    } finally {
      await client.close();
    }
  });

  it('given git dirs that are not there (a stub of another layout), the server asks git and serves all the same', async () => {
    const gone = join(repo, 'no-such-git-dir');
    const client = await bundleClient('wrong-git-dirs', 'main.cjs', ['--repo', repo, '--git-dir', gone, '--common-dir', gone]);
    try {
      const ctx = await client.callTool({ name: 'context', arguments: {} });
      expect(ctx.isError ?? false).toBe(false);
      expect(JSON.stringify(ctx.content)).toContain('AGENTS.md');
    } finally {
      await client.close();
    }
  });

  it('a launcher written before the server was CommonJS (it starts dist/mcp/main.js) still serves', async () => {
    const client = await bundleClient('old-launcher', 'main.js', ['--repo', repo]);
    try {
      expect((await client.listTools()).tools.map((x) => x.name)).toContain('memory');
    } finally {
      await client.close();
    }
  });

  it('the committed files name no path of this machine: not the work tree, the home, the socket dir, node or hermesd', () => {
    expect(committed).toEqual(
      expect.arrayContaining(['.mcp.json', '.cursor/mcp.json', '.codex/config.toml', '.gemini/settings.json', '.hermes/mcp', '.hermes/agent-hook']),
    );
    const local = [repo, t.home, t.socketDir, REPO_ROOT, process.execPath, dirname(process.execPath), dirname(repo)];
    for (const file of committed) {
      const text = readFileSync(join(repo, file), 'utf8');
      for (const p of local) expect(text.includes(p), `${file} names ${p}`).toBe(false);
    }
    // Nor does any entry start a program or read a file by an absolute path.
    for (const [agent, e] of Object.entries(entries(repo))) {
      for (const v of [e.command, ...e.args, ...Object.values(e.env ?? {})]) expect(v.startsWith('/'), `${agent}: ${v}`).toBe(false);
    }
  });

  it("in a teammate's clone without hermesd set up, every entry says so on stderr and exits non-zero, printing nothing on stdout", () => {
    expect(existsSync(join(clone, '.hermes/mcp'))).toBe(true);
    for (const agent of AGENTS) {
      const l = launch(agent, entries(clone)[agent], clone, agentEnv());
      const r = spawnSync(l.command, l.args, { cwd: l.cwd, env: l.env, input: '', encoding: 'utf8', timeout: 20_000 });
      expect(r.status, `${agent}: ${r.stderr}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('hermesd MCP server is not set up in this clone: run `hermesd init --agents` in it');
    }
  });

  it("Codex's entry, started outside any repository with hermesd, says so and exits 1, printing nothing on stdout", () => {
    const e = entries(repo).codex;
    const outside = join(dirname(repo), 'agent-home');
    const r = spawnSync(e.command, e.args, { cwd: outside, env: agentEnv(), input: '', encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`hermesd: no .hermes/mcp in ${outside} or above it`);
  });

  it("after hermesd init --agents in the teammate's clone, the same committed entries serve that clone", async () => {
    const init = await t.cli(['init', '--agents'], { cwd: clone });
    expect(init.code, init.stderr).toBe(0);
    // The entries were committed as they are: init leaves them alone.
    expect(gitIn(t, clone, 'status', '--porcelain')).toBe('');
    for (const agent of AGENTS) expect(await serves(agent, clone, agentEnv())).toContain('memory');
    // The server started the clone's own daemon.
    const info = JSON.parse(readFileSync(join(clone, '.git/hermesd/daemon.json'), 'utf8'));
    expect(info.root).toBe(clone);
  });
});
