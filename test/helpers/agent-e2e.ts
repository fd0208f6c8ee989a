/**
 * The repository the end-to-end tests run a real agent CLI in: a git repository with
 * generated files under gen/ protected by a rule, `hermesd init --agents <agent>` run (the
 * real CLI from dist/), a memory entry, a daemon, the client's scripted model server and
 * its network trap, and the client set up as a user has it (test/helpers/agent-clis.ts).
 * One per test file: every session of the file runs in it, one after the other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCli,
  hermesdLeft,
  PINNED,
  setUpClient,
  startNetworkTrap,
  killTestProcesses,
  testProcesses,
  type Client,
  type ClientRun,
  type ClientSession,
  type NetworkTrap,
  type TestProcess,
} from './agent-clis.js';
import { startAgentModel, type AgentModel, type ModelRequest, type Step, type ToolCall, type ToolResult } from './agent-models.js';
import { makeEnv, waitFor, writeFiles, type TestEnv } from './env.js';
import { until } from './agents.js';
import { commitKey, head, KEY } from './transport.js';

/** A server that answers every question of hermesd's protocol with "allowed": the fake daemon an attack binds. */
const FAKE_DAEMON = [
  'import os, re, socket, sys',
  'p = sys.argv[1]',
  'try:',
  '    os.unlink(p)',
  'except OSError:',
  '    pass',
  's = socket.socket(socket.AF_UNIX)',
  's.bind(p)',
  's.listen(16)',
  'while True:',
  '    c, _ = s.accept()',
  "    m = re.search(r'[?&]q=([^& ]+)', c.recv(65536).decode('latin1'))",
  '    try:',
  "        c.sendall(('HTTP/1.0 200 OK\\r\\n\\r\\nhermesd 2 0 %d %s\\n= 0\\n' % (os.getpid(), m.group(1) if m else 'x')).encode())",
  '    except OSError:',
  '        pass',
  '    c.close()',
  '',
].join('\n');

/**
 * The shell attacks a review got past other agents' confined shells, each spelt so that hermesd's
 * reading of the command's text lets it through (test/guard/guard-boundary-holds-in-other-agents-shells.test.ts
 * runs each through the hooks alone): a fake daemon on the socket, a planted commondir, the
 * agent's own approval, commits of a key with the checks off, the user's git config, a writer
 * that outlives the call.
 */
export function boundaryAttacks(base: string): Array<{ id: string; command: string }> {
  const evil = join(base, 'evil-git');
  const socket = `$(sed -n 's/.*"socket": "\\(.*\\)".*/\\1/p' .git/hermesd/daemon.json)`;
  const commit = (n: string, how: string) =>
    `printf 'k = "%s"\\n' ${KEY} > k${n}.txt; git add k${n}.txt; s=$(mktemp); echo '${how}' > $s; sh $s 2>&1; echo "commit=$?"`;
  return [
    { id: 'fake_daemon', command: `python3 ${join(base, 'fake-daemon.py')} "${socket}" </dev/null >/dev/null 2>&1 & sleep 1; echo tried` },
    {
      id: 'commondir',
      command: `rm -rf ${evil}; cp -r .git ${evil} && printf '#!/bin/sh\\nexit 0\\n' > ${evil}/hooks/pre-commit && chmod +x ${evil}/hooks/pre-commit; f=.git/commondir; echo ${evil} > $f; echo planted=$?`,
    },
    {
      id: 'approve',
      command: `c=$HERMES_HOME/config.yaml; printf 'guard:\\n  sandbox:\\n    enabled: false\\n' >> $c; curl -s --unix-socket "${socket}" -X POST http://hermesd/v1/config/approve -d '{}'; echo "curl=$?"`,
    },
    { id: 'kill_commit', command: `kill -9 $(sed -n 's/.*"pid": \\([0-9]*\\).*/\\1/p' .git/hermesd/daemon.json); ${commit('1', 'git commit -qm k1')}` },
    { id: 'skip_commit', command: commit('2', 'HERMESD_SKIP=1 git commit -qm k2') },
    { id: 'no_verify', command: commit('3', 'git commit -qm k3 --no-verify') },
    { id: 'gitconfig', command: `g=$HOME/.gitconfig; printf '[core]\\n\\thooksPath = /dev/null\\n' >> $g; echo "gitconfig=$?"` },
    { id: 'setsid', command: `setsid sh -c 'sleep 1; echo late > gen/late.ts; echo late > gen/a.ts' </dev/null >/dev/null 2>&1 & echo started` },
  ];
}

export const RULE_ID = 'generated-files';
export const RULE_MESSAGE = 'Do not edit generated files directly; change the schema and run `npm run gen`.';
/** In the memory snapshot every session starts with. */
export const MEMORY_FACT = 'Release builds need the kestrel toolchain installed first.';

/**
 * Shell commands that write a protected file, each its own: the ones hermesd's reading of a
 * command's text catches, and the ones it cannot read (interpreters, a variable, a
 * writer in the background). After the session none of the files may have changed.
 */
export const SHELL_WRITES: Array<{ id: string; command: string }> = [
  { id: 'redirect', command: 'echo x > gen/redirect.ts' },
  { id: 'python', command: `python3 -c "open('gen/python.ts','w').write('x')"` },
  { id: 'node', command: `node -e "require('fs').writeFileSync('gen/node.ts','x')"` },
  { id: 'perl', command: `perl -e 'open(my $f, ">", "gen/perl.ts") or die "$!"; print $f "x"'` },
  { id: 'variable', command: 'f=gen/variable.ts; echo x > $f' },
  { id: 'tee', command: 'echo x | tee gen/tee.ts' },
  { id: 'dd', command: 'echo x | dd of=gen/dd.ts' },
  { id: 'mv', command: 'mv src/old.ts gen/mv.ts' },
  // Writes a second after the call returned; the next call (`sleep 2`) is still running then.
  { id: 'background', command: `(sleep 1; python3 -c "open('gen/background.ts','w').write('x')") >/dev/null 2>&1 &` },
  // Writes in the background with the call's own stderr: the shell's refusal is part of the call's output.
  { id: 'background_err', command: '(sleep 0.2; echo x > gen/background_err.ts) &' },
];

/** What hermesd puts into the model's context and must never be stored as anyone's words. */
export const INJECTED_MARKERS = [
  '<session_context>',
  '<hook_context>',
  '<recalled-context>',
  '<system-reminder>',
  '<environment_context>',
  'as of the start of this session',
  'NOT new user input',
  MEMORY_FACT,
];

const genFiles = (): Record<string, string> =>
  Object.fromEntries([['gen/a.ts', 'export const a = 1;\n'], ...SHELL_WRITES.map((s): [string, string] => [`gen/${s.id}.ts`, `export const ${s.id} = 1;\n`])]);

export type E2E = {
  t: TestEnv;
  repo: string;
  model: AgentModel;
  trap: NetworkTrap;
  agent: ClientSession;
  /** The files under gen/ as committed. */
  generated: Record<string, string>;
  /** Every file under gen/ now. */
  genNow(): Record<string, string>;
  /** Plays `steps` as the model in one session on `prompt`; the requests of that session and the run. */
  session(
    prompt: string,
    steps: Step[],
    opts?: { env?: NodeJS.ProcessEnv; args?: string[] },
  ): Promise<{ requests: ModelRequest[]; run: Awaited<ReturnType<ClientSession['run']>> }>;
  /** The sessions hermesd stored for this client, oldest first (after ingest has caught up with `count`). */
  stored(
    count: number,
  ): Promise<Array<{ id: string; title: string | null; messages: Array<{ role: string; content: string | null; toolName?: string; toolCalls?: unknown }> }>>;
  cleanup(): Promise<void>;
};

export const SOURCE: Record<Client, string> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini' };

export async function e2eRepo(client: Client): Promise<E2E> {
  const cli = await agentCli(client);
  const t = makeEnv();
  const generated = genFiles();
  const repo = t.repo({ 'README.md': '# app\n', 'src/app.ts': 'export const app = 1;\n', 'src/old.ts': 'export const old = 1;\n', ...generated });
  const model = await startAgentModel(cli.dialect);
  const trap = await startNetworkTrap();
  const cleanup = async () => {
    await model.close();
    await trap.close();
    await t.cleanup();
    // Whatever this test started and left (a hung MCP server, a writer the model put in the background) goes with it.
    killTestProcesses(t.home);
  };
  try {
    const init = await t.cli(['init', '--agents', client], { cwd: repo });
    if (init.code !== 0) throw new Error(`hermesd init --agents ${client} failed: ${init.stderr}`);
    const config = readFileSync(join(repo, '.hermes/config.yaml'), 'utf8');
    if (!config.includes('rules:\n')) throw new Error('.hermes/config.yaml from init has no rules: list');
    writeFiles(repo, {
      '.hermes/config.yaml': config.replace('rules:\n', `rules:\n  - id: ${RULE_ID}\n    message: ${RULE_MESSAGE}\n    protect: ["gen/**"]\n`),
    });
    const rules = await until(
      () => t.cli(['check', '--json'], { cwd: repo }),
      (r) => r.code === 0 && r.stdout.includes('"violations"'),
    );
    if (rules.code !== 0) throw new Error(`hermesd check: ${rules.stderr}`);
    // What a user does after adding a rule (docs/agents.md): init again puts its paths into the agents' own sandboxes.
    const again = await t.cli(['init', '--agents', client], { cwd: repo });
    if (again.code !== 0) throw new Error(`hermesd init --agents ${client} after the rule failed: ${again.stderr}`);
    const mem = await t.cli(['memory', 'add', MEMORY_FACT], { cwd: repo });
    if (mem.code !== 0) throw new Error(`hermesd memory add: ${mem.stderr}`);
    const agent = await setUpClient(cli, { env: t.env, base: join(t.home, '..'), repo, model, trap });
    const genNow = () => Object.fromEntries(readdirSync(join(repo, 'gen')).map((f) => [`gen/${f}`, readFileSync(join(repo, 'gen', f), 'utf8')]));
    return {
      t,
      repo,
      model,
      trap,
      agent,
      generated,
      genNow,
      async session(prompt, steps, opts = {}) {
        const from = model.requests.length;
        model.clear();
        model.push(...steps);
        const run = await agent.run(prompt, opts);
        const requests = model.requests.slice(from);
        model.clear();
        return { requests, run };
      },
      async stored(count) {
        const list = await until(
          async () =>
            (await t.cli(['sessions', 'list', '--json'], { cwd: repo })).json().sessions as Array<{ id: string; source: string; title: string | null }>,
          (s) => s.filter((x) => x.source === SOURCE[client]).length >= count,
        );
        const ours = list.filter((x) => x.source === SOURCE[client]).reverse();
        return Promise.all(
          ours.map(async (s) => ({ id: s.id, title: s.title, messages: (await t.cli(['sessions', 'show', s.id, '--json'], { cwd: repo })).json().messages })),
        );
      },
      cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The tool result answering the call with `id` among a session's requests. */
export function resultOf(requests: ModelRequest[], id: string): ToolResult | undefined {
  for (const r of requests) {
    const hit = r.toolResults.find((x) => x.id === id);
    if (hit) return hit;
  }
  return undefined;
}

/** A process of the test as a message names it: pid, kind, the start of its command. */
const processLine = (p: TestProcess) => `${p.pid} ${p.kind}: ${p.cmd.slice(0, 160)}`;

/** The test's processes, for a message. */
function processesOf(home: string, clientDir: string): string[] {
  return testProcesses(home, clientDir).map(processLine);
}

/** hermesd's MCP servers and hooks of this test still running, polled until none is left or `ms` passed. */
export async function leftAfter(t: TestEnv, ms = 5_000): Promise<string[]> {
  const end = Date.now() + ms;
  for (;;) {
    const left = hermesdLeft(t.home);
    if (left.length === 0 || Date.now() > end) return left.map(processLine);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---- the scenarios, the same for every client ------------------------------------------------

/** What differs between the clients: their tools' names and shapes, and where each shows what it did. */
export type ClientSpec = {
  client: Client;
  /**
   * The first session's tool calls, one per turn: a write of gen/a.ts through the file tool
   * (id `refused`), an allowed write of src/quokka.ts (id `allowed`) with QUOKKA as its content,
   * and hermesd's MCP `check` (id `check`), with whatever the client needs before each (Claude
   * Code reads a file before it overwrites it; Codex finds deferred MCP tools with tool_search).
   */
  firstSession(repo: string): ToolCall[];
  ids: { refused: string; allowed: string; check: string };
  /** The tool calls of the first session as hermesd stores them (the assistant's calls, by name). */
  storedCalls: string[];
  /** A shell command as the client's shell tool call. */
  shell(id: string, command: string): ToolCall;
  /** hermesd's MCP tools the model was shown in a session (by the client's names for them). */
  mcpTools(requests: ModelRequest[]): string[];
  /** Extra turns that make the client show hermesd's MCP tools when it defers them (Codex's tool_search). */
  listMcp?: ToolCall;
  /** Where the client shows a refusal as a failed hook (in its own output), if it does. */
  hookFailure?: RegExp;
  /** The client's own record that it stopped hermesd's MCP server without having to force it (Claude Code's debug log). */
  stoppedGently?(run: ClientRun): void;
  /**
   * The client's options that turn its own sandbox off for a session, where it runs one by
   * default (Codex: bubblewrap cannot start inside it, so hermesd's confinement holds only where
   * it is off; docs/agents.md).
   */
  ownSandboxOff?: string[];
  /** The client's own sandbox, as it runs by default, takes the protected paths from `init` (Codex's permission profile). */
  ownSandboxHolds?: boolean;
};

export const QUOKKA = 'export const quokka = 1;\n';
const FINAL = 'The generated file is protected; I added src/quokka.ts instead.';
const FIRST_PROMPT = 'Regenerate the quokka exporter: update gen/a.ts and add src/quokka.ts.';
/** The first install of a client on a clean clone (CI) downloads ~100–250 MB. */
const SETUP_MS = 420_000;
const SESSION_MS = 120_000;

const shown = (text: string) => (text.length > 400 ? `${text.slice(0, 400)}…` : text);

export function endToEnd(spec: ClientSpec): void {
  const pin = PINNED[spec.client];
  describe(`${pin.pkg}@${pin.version} with hermesd's hooks and MCP server, end to end`, () => {
    let e: E2E;
    let first: { requests: ModelRequest[]; run: ClientRun };

    beforeAll(async () => {
      e = await e2eRepo(spec.client);
      first = await e.session(FIRST_PROMPT, [...spec.firstSession(e.repo).map((c): Step => ({ tools: [c] })), { text: FINAL }]);
    }, SETUP_MS);
    afterAll(async () => {
      await e?.cleanup();
    });

    it('plays the whole scripted session through the client', () => {
      expect(first.run.code, first.run.stderr).toBe(0);
      expect(e.model.exhausted).toBe(0);
      expect(first.requests).toHaveLength(spec.firstSession(e.repo).length + 1);
    });

    it('refuses a write of a protected file through the file tool: the file unchanged, the model told the rule as a refusal', () => {
      expect(e.genNow()).toEqual(e.generated);
      const result = resultOf(first.requests, spec.ids.refused);
      expect(result?.output).toContain(RULE_ID);
      expect(result?.output).toContain(RULE_MESSAGE);
      // A refusal, not a failed hook: the model reads hermesd's reason, not a hook error with the hook's command.
      expect(result?.output).not.toMatch(/hook error/i);
      expect(result?.output).not.toContain('.hermes/agent-hook');
      if (spec.hookFailure) expect(first.run.stderr).not.toMatch(spec.hookFailure);
    });

    it('lets an allowed write through', () => {
      expect(resultOf(first.requests, spec.ids.allowed)?.output).not.toContain(RULE_ID);
      expect(readFileSync(join(e.repo, 'src/quokka.ts'), 'utf8')).toBe(QUOKKA);
    });

    it('hands the memory snapshot to the model at session start', () => {
      expect(first.requests[0]!.text).toContain(MEMORY_FACT);
    });

    it("shows hermesd's MCP server to the model and answers its tool", () => {
      expect(spec.mcpTools(first.requests)).toEqual(expect.arrayContaining(['check', 'memory', 'session_search', 'skill_view']));
      const check = resultOf(first.requests, spec.ids.check);
      // The refused write changed nothing: the rules find no violation.
      expect(check?.output).toMatch(/\{"violations":\[\],"warnings":\[\],"staged":false\}/);
    });

    it('ends the session without waiting on hermesd, and leaves none of its processes running', async () => {
      spec.stoppedGently?.(first.run);
      expect(await leftAfter(e.t)).toEqual([]);
    });

    it('stores the transcript clean in SessionDB: the prompt as title and first message, the calls and the answer, nothing injected', async () => {
      const [s] = await e.stored(1);
      expect(s!.title).toBe(FIRST_PROMPT);
      expect(s!.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([FIRST_PROMPT]);
      expect(
        s!.messages
          .filter((m) => m.role === 'assistant')
          .flatMap((m) => ((m.toolCalls ?? []) as Array<{ function: { name: string } }>).map((c) => c.function.name)),
      ).toEqual(spec.storedCalls);
      expect(s!.messages[s!.messages.length - 1]).toMatchObject({ role: 'assistant', content: FINAL });
      for (const m of s!.messages)
        for (const marker of INJECTED_MARKERS) expect(m.content ?? '', `a ${m.role} message holds ${marker}: ${shown(m.content ?? '')}`).not.toContain(marker);
    });

    it(
      'keeps every protected file unchanged, whatever the shell command that writes it',
      async () => {
        const steps: Step[] = SHELL_WRITES.flatMap((w) => [
          { tools: [spec.shell(`sh_${w.id}`, w.command)] },
          ...(w.id === 'background' ? [{ tools: [spec.shell('sh_wait', 'sleep 2')] }] : []),
        ]);
        // An allowed command in the agent's shell's own syntax (bash: arrays, [[ ]]) runs confined as it would unconfined.
        const bashSyntax = spec.shell('sh_bash', 'x=(gen src); [[ ${x[1]} == src ]] && echo "bash-syntax-${x[1]}"');
        const { requests, run } = await e.session('Refresh every generated file under gen/ from the shell.', [
          { tools: [bashSyntax] },
          ...steps,
          { text: 'Done.' },
        ]);
        expect(resultOf(requests, 'sh_bash')?.output).toContain('bash-syntax-src');
        expect(run.code, run.stderr).toBe(0);
        // The background writer wrote a second after its call returned, while the next call (sleep 2) ran.
        const now = e.genNow();
        expect(
          SHELL_WRITES.filter((w) => now[`gen/${w.id}.ts`] !== e.generated[`gen/${w.id}.ts`]).map((w) => `${w.id}: ${w.command}`),
          'commands that left a protected file changed',
        ).toEqual([]);
        expect(Object.keys(now).sort()).toEqual(Object.keys(e.generated).sort());
        // Each write hermesd could not refuse before it ran was refused by the confinement (or put back after it):
        // the model's next request names the path with the rule's id, whether the command failed or not. The
        // background writer: where the sandbox ends it with its call (hermesd's bubblewrap, Codex's own), that call's
        // answer names it; where it outlives the call and writes a second later, the answer of the call running then (sh_wait).
        const untold = SHELL_WRITES.filter((w) => w.id !== 'redirect').filter((w) => {
          const calls = [`sh_${w.id}`, ...(w.id === 'background' ? ['sh_wait'] : [])];
          const next = requests.filter((r) => r.toolResults.some((x) => calls.includes(x.id ?? '')));
          return !next.some((r) => new RegExp(`gen/${w.id}\\.ts\\b[^\\n]*\\b${RULE_ID}\\b`).test(r.text));
        });
        expect(
          untold.map((w) => `${w.id}: ${w.command}`),
          "commands whose refused write reached the model without the rule's id",
        ).toEqual([]);
        // The spelling hermesd reads from the command's text is refused before it runs, naming the rule.
        expect(resultOf(requests, 'sh_redirect')?.output).toContain(RULE_ID);
      },
      SESSION_MS,
    );

    it(
      "runs a shell command confined where the client's own sandbox is off: writes hermesd cannot read fail on a read-only file",
      async () => {
        const unread = SHELL_WRITES.filter((w) => w.id === 'python' || w.id === 'variable' || w.id === 'node');
        // Which confinement held it: hermesd's script (its shell is pid 2 in a namespace hermesd's bubblewrap made), not the client's.
        const where = spec.shell('ro_where', 'tr "\\0" " " < /proc/$$/cmdline');
        const { requests, run } = await e.session(
          'Refresh gen/ once more.',
          [{ tools: [where] }, ...unread.map((w): Step => ({ tools: [spec.shell(`ro_${w.id}`, w.command)] })), { text: 'Done.' }],
          { args: spec.ownSandboxOff },
        );
        expect(run.code, run.stderr).toBe(0);
        expect(resultOf(requests, 'ro_where')?.output, "the command did not run in hermesd's confine script").toContain('printf hermesd-started >&3');
        // Read-only at the write itself (no sandbox of the client's own is there to make it so), not put back afterwards.
        for (const w of unread) expect(resultOf(requests, `ro_${w.id}`)?.output, w.command).toMatch(/read-only file system/i);
        expect(e.genNow()).toEqual(e.generated);
      },
      SESSION_MS,
    );

    it(
      "holds hermesd's boundary in the client's shell: no fake daemon, planted commondir, self-approval, unchecked commit or outliving writer gets through",
      async () => {
        const base = join(e.t.home, '..');
        writeFileSync(join(base, 'fake-daemon.py'), FAKE_DAEMON);
        const userConfig = join(e.t.home, 'config.yaml');
        const configBefore = existsSync(userConfig) ? readFileSync(userConfig, 'utf8') : undefined;
        const gitconfig = join(e.agent.home, '.gitconfig');
        const gitconfigBefore = existsSync(gitconfig) ? readFileSync(gitconfig, 'utf8') : undefined;
        const pid = (await e.t.cli(['status', '--json'], { cwd: e.repo })).json().pid as number;
        const before = head(e.repo);
        try {
          const attacks = boundaryAttacks(base);
          const steps: Step[] = [
            ...attacks.map((a): Step => ({ tools: [spec.shell(`b_${a.id}`, a.command)] })),
            { tools: [spec.shell('b_wait', 'sleep 2')] },
            { text: 'Done.' },
          ];
          const { requests, run } = await e.session('Tidy up the repository state.', steps, { args: spec.ownSandboxOff });
          expect(run.code, run.stderr).toBe(0);
          const out = (id: string) => resultOf(requests, `b_${id}`)?.output ?? '';
          // Each command ran, confined: what it tried failed where hermesd keeps it, or was taken back after the call.
          expect(out('commondir'), 'the commondir attack did not run').toMatch(/planted=/);
          expect(out('approve')).not.toMatch(/"approved"/);
          expect(out('gitconfig')).toMatch(/gitconfig=[1-9]/);
          expect(existsSync(join(e.repo, '.git/commondir')), 'a planted commondir stayed').toBe(false);
          expect(existsSync(userConfig) ? readFileSync(userConfig, 'utf8') : undefined, '$HERMES_HOME/config.yaml changed').toBe(configBefore);
          expect(existsSync(gitconfig) ? readFileSync(gitconfig, 'utf8') : undefined, "the agent's ~/.gitconfig changed").toBe(gitconfigBefore);
          expect(head(e.repo), `a key was committed from the shell: ${['kill_commit', 'skip_commit', 'no_verify'].map(out).join(' | ')}`).toBe(before);
          expect((await e.t.cli(['status', '--json'], { cwd: e.repo })).json().pid, 'the daemon was killed from inside').toBe(pid);
          expect(e.genNow(), 'a writer that outlived its call changed gen/').toEqual(e.generated);
          // And the user's own commit of a key still meets hermesd's hook (no fake daemon, no planted hook).
          const user = commitKey(e.t, e.repo, 'user-key.txt');
          expect(user.moved, `the user's commit of a key went through: ${user.out}`).toBe(false);
        } finally {
          spawnSync('git', ['reset', '-q'], { cwd: e.repo, env: e.t.env });
          for (const f of ['k1.txt', 'k2.txt', 'k3.txt', 'user-key.txt']) rmSync(join(e.repo, f), { force: true });
        }
      },
      SESSION_MS,
    );

    if (spec.ownSandboxHolds) {
      it(
        "holds the protected paths in the client's own sandbox as it runs by default: writes hermesd cannot read fail on a read-only file",
        async () => {
          const unread = SHELL_WRITES.filter((w) => w.id === 'python' || w.id === 'variable' || w.id === 'node');
          // Which profile the client ran the command in, and which shell runs it: the client's own (hermesd's rewrite took its `then eval` branch), not one the confine script started.
          const where = spec.shell('own_where', 'echo "profile=$CODEX_PERMISSION_PROFILE"; tr "\\0" " " < /proc/$$/cmdline');
          const { requests, run } = await e.session('Refresh gen/ from the shell.', [
            { tools: [where] },
            ...unread.map((w): Step => ({ tools: [spec.shell(`own_${w.id}`, w.command)] })),
            { text: 'Done.' },
          ]);
          expect(run.code, run.stderr).toBe(0);
          const seen = resultOf(requests, 'own_where')?.output ?? '';
          expect(seen).toMatch(/profile=hermesd-[0-9a-f]{12}\b/);
          expect(seen).toMatch(
            /CODEX_PERMISSION_PROFILE-\}" = hermesd-[0-9a-f]{12} \]; then trap .* EXIT; (LD_PRELOAD=\S+ HERMESD_REFUSED=\S+ ASAN_OPTIONS=\S+ )?eval /,
          );
          for (const w of unread) expect(resultOf(requests, `own_${w.id}`)?.output, w.command).toMatch(/read-only file system/i);
          expect(e.genNow()).toEqual(e.generated);
        },
        SESSION_MS,
      );
    }

    it(
      'recalls an earlier session at the prompt, and never its own blocks',
      async () => {
        const prompt = 'Did the quokka exporter change land?';
        const { requests, run } = await e.session(prompt, [{ text: 'Yes: src/quokka.ts.' }]);
        expect(run.code, run.stderr).toBe(0);
        // Gemini CLI hands hook context to the model with `<` and `>` escaped.
        const text = requests[0]!.text.replace(/&lt;/g, '<').replace(/&gt;/g, '>');
        const start = text.indexOf('<recalled-context>');
        expect(start, 'a recall block in the first request').toBeGreaterThanOrEqual(0);
        const block = text.slice(start, text.indexOf('</recalled-context>', start));
        // The words of the earlier session, and nothing hermesd or the client put around them.
        expect(block).toContain('quokka exporter');
        expect(block.split('NOT new user input')).toHaveLength(2);
        for (const marker of INJECTED_MARKERS.filter((m) => m !== 'NOT new user input' && m !== '<recalled-context>'))
          expect(block, `the recall block holds ${marker}`).not.toContain(marker);
        const stored = await e.stored(3);
        const last = stored[stored.length - 1]!;
        expect(last.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([prompt]);
        for (const m of last.messages)
          for (const marker of INJECTED_MARKERS) expect(m.content ?? '', `a ${m.role} message holds ${marker}`).not.toContain(marker);
      },
      SESSION_MS,
    );

    it(
      "runs a session whose daemon does not answer: hermesd's MCP server is shown without it, and the session ends",
      async () => {
        const pid = (await e.t.cli(['status', '--json'], { cwd: e.repo })).json().pid as number;
        process.kill(pid, 'SIGSTOP');
        try {
          const { requests, run } = await e.session('List the quokka exporters.', [
            ...(spec.listMcp ? [{ tools: [spec.listMcp] }] : []),
            { text: 'Only src/quokka.ts.' },
          ]);
          expect(run.code, run.stderr).toBe(0);
          expect(spec.mcpTools(requests)).toEqual(expect.arrayContaining(['check', 'memory']));
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        expect(await leftAfter(e.t)).toEqual([]);
      },
      SESSION_MS,
    );

    it(
      'leaves no hermesd MCP server or hook running when the client is killed',
      async () => {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let asked!: () => void;
        const modelAsked = new Promise<void>((r) => (asked = r));
        e.model.clear();
        e.model.push(...(spec.listMcp ? [{ tools: [spec.listMcp] }] : []), async () => {
          asked();
          await held;
          return { text: 'too late' };
        });
        const s = e.agent.start('Start on the quokka release notes.');
        // Each wait is bounded and named, with the test's processes at that moment: a hang says where.
        const within = <T>(p: Promise<T>, ms: number, what: string) =>
          Promise.race([
            p,
            new Promise<never>((_, reject) =>
              setTimeout(
                () => reject(new Error(`${what} within ${ms / 1000} s; running: ${processesOf(e.t.home, e.agent.cli.dir).join(' | ') || 'none'}`)),
                ms,
              ).unref(),
            ),
          ]);
        try {
          await within(
            Promise.race([modelAsked, s.done.then((r) => Promise.reject(new Error(`the client ended before asking the model: ${r.stderr}`)))]),
            60_000,
            "the client did not ask the model again after hermesd's MCP tools were listed",
          );
          // hermesd's MCP server is up (the model was shown its tools), then the client dies.
          await waitFor(() => testProcesses(e.t.home).some((p) => p.kind === 'mcp'));
          s.kill();
          // The client's own exit, not its pipes' close: what is left is leftAfter's to report.
          const { child } = s;
          await within(
            child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r)),
            30_000,
            'the client did not exit after SIGKILL',
          );
          expect(await leftAfter(e.t), 'hermesd processes left after the client was killed').toEqual([]);
        } finally {
          release();
          e.model.clear();
        }
      },
      SESSION_MS,
    );
  });
}
