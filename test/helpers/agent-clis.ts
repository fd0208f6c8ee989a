/**
 * The real agent CLIs — Claude Code, Codex, Gemini CLI — pinned, installed from npm into a
 * cache outside the project's dependencies, and started as a user starts them in a
 * repository where `hermesd init --agents` ran: a temporary HOME holding the user-level
 * config a user would have after trusting the project, a fake key, the scripted model
 * server of test/helpers/agent-models.ts as the API, and no network but 127.0.0.1.
 *
 *   const cli = await agentCli('codex');              // installed once, then reused
 *   const model = await startAgentModel(cli.dialect, […]);
 *   const agent = await setUpClient(cli, { env: t.env, base, repo, model });
 *   const run = await agent.run('fix the parser');    // exit code, output, debug log
 *
 * Each is installed once into the cache of test/helpers/npm-cache.ts and reused; a failed install
 * throws with npm's own words: a test that needs the client fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { AgentModel, Dialect } from './agent-models.js';
import { npmCached, runTool, tail } from './npm-cache.js';

export type Client = 'claude' | 'codex' | 'gemini';

type Pin = {
  pkg: string;
  version: string;
  /** The file npm's `bin` names, relative to the package. */
  bin: string[];
  /** Started with node (a JavaScript bin), or run itself (a native binary). */
  node: boolean;
  /** npm install flags beyond the common ones. */
  flags: string[];
  /** Whether its install script must run (npm 11 asks for that in the installing package.json). */
  script?: true;
  dialect: Dialect;
  /** The agent name of `hermesd init --agents`. */
  agent: 'claude' | 'codex' | 'gemini';
};

/**
 * The versions the end-to-end tests and the agents-e2e benchmark run. Claude Code: the last
 * release that runs on Node 20 (later ones need Node 22); its postinstall puts the platform's
 * native binary in place of bin/claude.exe. Codex: a Node launcher and a native binary in an
 * optional dependency per platform. Gemini CLI: one bundle; its optional dependencies
 * (node-pty, keytar) compile native code and are left out (it then runs shell commands
 * without a pseudo-terminal and keeps no keychain, neither of which a test here needs).
 */
export const PINNED: Record<Client, Pin> = {
  claude: {
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.197',
    bin: ['bin', 'claude.exe'],
    node: false,
    flags: [],
    script: true,
    dialect: 'anthropic',
    agent: 'claude',
  },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: ['bin', 'codex.js'], node: true, flags: [], dialect: 'responses', agent: 'codex' },
  gemini: {
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    bin: ['bundle', 'gemini.js'],
    node: true,
    flags: ['--omit=optional'],
    dialect: 'gemini',
    agent: 'gemini',
  },
};

export type AgentCli = { client: Client; dialect: Dialect; version: string; dir: string; command: string; prefix: string[] };

/** The pinned client, installed from npm into the cache when it is not there yet. */
export async function agentCli(client: Client): Promise<AgentCli> {
  const pin = PINNED[client];
  const found = (root: string): AgentCli => {
    const bin = join(root, 'node_modules', ...pin.pkg.split('/'), ...pin.bin);
    return { client, dialect: pin.dialect, version: pin.version, dir: root, command: pin.node ? process.execPath : bin, prefix: pin.node ? [bin] : [] };
  };
  const dir = await npmCached({ pkg: pin.pkg, version: pin.version, flags: pin.flags, ...(pin.script ? { script: true as const } : {}) }, async (tmp) => {
    // The client must start (Claude Code's binary is put in place by its postinstall); it may write to its HOME.
    const cli = found(tmp);
    const home = join(tmp, 'version-home');
    mkdirSync(home);
    const v = await runTool(cli.command, [...cli.prefix, '--version'], { env: { ...process.env, HOME: home }, timeoutMs: 60_000 });
    rmSync(home, { recursive: true, force: true });
    if (!v.out.includes(pin.version))
      throw new Error(
        `${pin.pkg}@${pin.version} installed, but \`${[cli.command, ...cli.prefix].join(' ')} --version\` printed (exit ${v.code}):\n${tail(v.out)}`,
      );
  });
  return found(dir);
}

// ---- no network but 127.0.0.1 --------------------------------------------------------------

/**
 * A proxy on 127.0.0.1 that refuses every request and records where it was going. The
 * clients get it as HTTP(S)_PROXY with NO_PROXY=127.0.0.1,localhost: the scripted model is
 * reached directly, anything else (update checks, telemetry, feature flags) is refused at
 * once instead of waiting on a network the tests must not use.
 */
export type NetworkTrap = { url: string; attempts: string[]; close(): Promise<void> };

export async function startNetworkTrap(): Promise<NetworkTrap> {
  const attempts: string[] = [];
  const server: Server = createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  server.on('connect', (req, socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- a client set up in a repository ---------------------------------------------------------

export type ClientRun = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Claude Code's debug log of the run (`--debug-file`); '' for the others. */
  debug: string;
};

export type RunningClient = {
  child: ChildProcess;
  done: Promise<ClientRun>;
  /** SIGKILLs the client: every process of its install (Codex's Node launcher and its native binary both). */
  kill(): void;
};

export type ClientSession = {
  cli: AgentCli;
  /** The client's HOME (its user-level config and transcripts live here). */
  home: string;
  env: NodeJS.ProcessEnv;
  /** Starts one headless session on `prompt` in the repository. */
  start(prompt: string, opts?: { env?: NodeJS.ProcessEnv; args?: string[] }): RunningClient;
  /** Runs one headless session to its end (killed after `timeoutMs`); `args`: the client's own options, before the prompt's. */
  run(prompt: string, opts?: { env?: NodeJS.ProcessEnv; args?: string[]; timeoutMs?: number }): Promise<ClientRun>;
};

/** Variables of the developer's environment that would point a client elsewhere or at real accounts. */
const FOREIGN = /^(ANTHROPIC_|CLAUDE_|OPENAI_|CODEX_|GEMINI_|GOOGLE_|VERTEX|AWS_|XDG_|HTTPS?_PROXY$|ALL_PROXY$|NO_PROXY$)/i;

const tomlString = (s: string) => JSON.stringify(s);

/**
 * Codex runs a project's hooks only once the user trusted each one (`/hooks` in its TUI),
 * which records `[hooks.state."<key>"] trusted_hash = "<hash>"` in the user's config.toml.
 * The TUI's review reads the hooks and their hashes from Codex's app server (`hooks/list`)
 * and writes the trust through it (`config/batchWrite`); this does the same, for every
 * hook of the repository that is not trusted yet.
 */
async function trustCodexHooks(cli: AgentCli, env: NodeJS.ProcessEnv, repo: string): Promise<string[]> {
  const child = spawn(cli.command, [...cli.prefix, 'app-server'], { env, cwd: repo, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const pending = new Map<number, (m: any) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let m: any;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof m.id === 'number' && pending.has(m.id)) {
      pending.get(m.id)!(m);
      pending.delete(m.id);
    }
  });
  let id = 0;
  const call = (method: string, params: unknown) =>
    new Promise<any>((resolve, reject) => {
      const n = ++id;
      const timer = setTimeout(() => reject(new Error(`codex app-server: no answer to ${method} within 30 s; stderr:\n${tail(stderr)}`)), 30_000);
      pending.set(n, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`codex app-server: ${method} failed: ${JSON.stringify(m.error)}`));
        else resolve(m.result);
      });
      child.stdin.write(JSON.stringify({ method, id: n, params }) + '\n');
    });
  try {
    await call('initialize', { clientInfo: { name: 'hermesd-test', title: null, version: '1' }, capabilities: null });
    child.stdin.write(JSON.stringify({ method: 'initialized' }) + '\n');
    const listed = await call('hooks/list', { cwds: [repo] });
    const hooks: Array<{ key: string; command?: string; currentHash: string; trustStatus: string }> = listed.data.flatMap((d: { hooks: unknown[] }) => d.hooks);
    const untrusted = hooks.filter((h) => h.trustStatus === 'untrusted' || h.trustStatus === 'modified');
    if (untrusted.length)
      await call('config/batchWrite', {
        edits: untrusted.map((h) => ({ keyPath: `hooks.state.${JSON.stringify(h.key)}.trusted_hash`, value: h.currentHash, mergeStrategy: 'upsert' })),
      });
    const after = (await call('hooks/list', { cwds: [repo] })).data.flatMap((d: { hooks: unknown[] }) => d.hooks) as typeof hooks;
    const left = after.filter((h) => h.trustStatus !== 'trusted' && h.trustStatus !== 'managed');
    if (left.length) throw new Error(`codex still lists hooks as not trusted: ${left.map((h) => `${h.key} (${h.trustStatus})`).join(', ')}`);
    return after.map((h) => h.command ?? h.key);
  } finally {
    child.stdin.end();
    child.kill('SIGKILL');
  }
}

/**
 * Makes the client's HOME and environment for sessions in `repo` (where `hermesd init
 * --agents` already ran): what a user has after installing the client, pointing it at an API,
 * trusting the project and, for Codex, its hooks. `base` is a temp dir of the test. Claude
 * Code writes a debug log of each run (`debugLog`, default on; ClientRun.debug).
 */
export async function setUpClient(
  cli: AgentCli,
  opts: { env: NodeJS.ProcessEnv; base: string; repo: string; model: AgentModel; trap: NetworkTrap; debugLog?: boolean },
): Promise<ClientSession> {
  const home = join(opts.base, `${cli.client}-home`);
  mkdirSync(home, { recursive: true });
  const inherited = Object.fromEntries(Object.entries(opts.env).filter(([k]) => !FOREIGN.test(k)));
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    HTTPS_PROXY: opts.trap.url,
    HTTP_PROXY: opts.trap.url,
    ALL_PROXY: opts.trap.url,
    NO_PROXY: '127.0.0.1,localhost',
  };
  const args: (prompt: string) => string[] = (() => {
    switch (cli.client) {
      case 'claude': {
        Object.assign(env, {
          ANTHROPIC_BASE_URL: opts.model.url,
          ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
          // Claude Code refuses --dangerously-skip-permissions as root unless it is told it runs in a sandbox.
          IS_SANDBOX: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        });
        // What approving the project's MCP server (.mcp.json) at Claude Code's prompt records.
        mkdirSync(join(home, '.claude'), { recursive: true });
        writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ enabledMcpjsonServers: ['hermesd'] }, null, 2) + '\n');
        return (prompt) => ['-p', prompt, '--output-format', 'json', '--dangerously-skip-permissions'];
      }
      case 'codex': {
        // Codex will not put its sandbox's helper (codex-linux-sandbox) into a CODEX_HOME under the temp dir, and its
        // workspace-write sandbox then fails every command: the temp dir moves into HOME, as for a user whose HOME is not in /tmp.
        Object.assign(env, { CODEX_HOME: join(home, '.codex'), TMPDIR: join(home, 'tmp'), SCRIPTED_API_KEY: 'sk-test-not-a-key' });
        mkdirSync(join(home, '.codex'), { recursive: true });
        mkdirSync(join(home, 'tmp'), { recursive: true });
        // A provider for the scripted server (Codex's documented model_providers), and the project trusted:
        // what Codex writes when the user answers its "trust this folder?" prompt.
        writeFileSync(
          join(home, '.codex', 'config.toml'),
          [
            'model = "gpt-5.5"',
            'model_provider = "scripted"',
            '',
            '[model_providers.scripted]',
            'name = "scripted"',
            `base_url = ${tomlString(opts.model.url)}`,
            'env_key = "SCRIPTED_API_KEY"',
            'wire_api = "responses"',
            '',
            `[projects.${tomlString(opts.repo)}]`,
            'trust_level = "trusted"',
            '',
          ].join('\n'),
        );
        return (prompt) => ['exec', '--skip-git-repo-check', prompt];
      }
      case 'gemini': {
        Object.assign(env, {
          GEMINI_API_KEY: 'test-not-a-key',
          GOOGLE_GEMINI_BASE_URL: opts.model.url,
          // Gemini CLI starts a second Node process to raise its heap limit: a second start (~1–2 s here), nothing else.
          GEMINI_CLI_NO_RELAUNCH: 'true',
        });
        // The auth method a user picks on first start, and the folder trusted at its prompt.
        mkdirSync(join(home, '.gemini'), { recursive: true });
        writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }, null, 2) + '\n');
        writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [opts.repo]: 'TRUST_FOLDER' }, null, 2) + '\n');
        return (prompt) => ['--approval-mode', 'yolo', '-p', prompt];
      }
    }
  })();
  if (cli.client === 'codex') await trustCodexHooks(cli, env, opts.repo);

  let runs = 0;
  const start: ClientSession['start'] = (prompt, o = {}) => {
    const debugFile = join(home, `debug-${++runs}.txt`);
    const extra = cli.client === 'claude' && opts.debugLog !== false ? ['--debug-file', debugFile] : [];
    const [first, ...rest] = args(prompt);
    // A subcommand (codex exec) keeps its place: the client's own options come after it.
    const ordered = cli.client === 'codex' ? [first!, ...(o.args ?? []), ...rest] : [...(o.args ?? []), first!, ...rest];
    const child = spawn(cli.command, [...cli.prefix, ...ordered, ...extra], { cwd: opts.repo, env: { ...env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const done = new Promise<ClientRun>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, debug: existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '' }));
    });
    const kill = () => {
      for (const p of testProcesses(String(env.HERMES_HOME), cli.dir)) if (p.kind === 'client') process.kill(p.pid, 'SIGKILL');
      child.kill('SIGKILL');
    };
    return { child, done, kill };
  };
  return {
    cli,
    home,
    env,
    start,
    async run(prompt, o = {}) {
      const s = start(prompt, o);
      const timer = setTimeout(() => s.child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
      try {
        return await s.done;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

// ---- the process table ---------------------------------------------------------------------

export type TestProcess = { pid: number; kind: 'daemon' | 'mcp' | 'hook' | 'client' | 'other'; cmd: string };

/** `path` with its symlinks resolved, or as given where it is not there. */
function realpathOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The live processes carrying this test's HERMES_HOME in their environment — everything the
 * test, its daemon, the client and what the client started run with — by what they are:
 * the daemon, hermesd's MCP server, a hook (the stub, the runner, the Node fallback), the
 * client, or anything else (a command the model ran).
 */
export function testProcesses(hermesHome: string, clientCommand?: string): TestProcess[] {
  const mark = `HERMES_HOME=${hermesHome}`;
  const out: TestProcess[] = [];
  // The client's folder as written and as its processes name it: Node resolves a script's symlinks,
  // so a wrapper started from a linked node_modules starts its binary by the real path.
  const client = clientCommand ? [...new Set([clientCommand, realpathOrSame(clientCommand)])] : [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ: string;
    let cmd: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (!environ.split('\0').includes(mark)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const kind: TestProcess['kind'] = /dist\/daemon\/main\.js/.test(cmd)
      ? 'daemon'
      : /\.hermes\/mcp|dist\/mcp\/main\.c?js|main\.js mcp\b|\bhermesd mcp\b/.test(cmd)
        ? 'mcp'
        : /agent-hook|\/hermesd\/client /.test(cmd)
          ? 'hook'
          : client.some((c) => cmd.includes(c))
            ? 'client'
            : 'other';
    out.push({ pid: Number(entry), kind, cmd });
  }
  return out;
}

/** hermesd's processes of this test other than its daemon: MCP servers and hooks. */
/** Kills whatever a test started under `hermesHome` and left (a hung MCP server, a writer a model put in the background). */
export function killTestProcesses(hermesHome: string): void {
  for (const p of testProcesses(hermesHome)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

export const hermesdLeft = (hermesHome: string): TestProcess[] => testProcesses(hermesHome).filter((p) => p.kind === 'mcp' || p.kind === 'hook');
