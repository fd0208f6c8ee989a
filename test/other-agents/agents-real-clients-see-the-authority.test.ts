/**
 * The real Claude Code, Codex and Gemini CLI (pinned, installed from npm by the test setup:
 * test/helpers/agent-clis.ts) in a repository whose authority is HERMES.md, after `hermesd init
 * --agents <client>`, against a scripted model server: the first model request of a session
 * holds the authority's words exactly once — through Gemini CLI's context.fileName and Codex's
 * project_doc_fallback_filenames (the settings init wrote), through the session start's context
 * for Claude Code, which has no such setting. A sentence `hermesd remember` puts into the
 * authority (the proposal accepted) is in the next session's first request, once. With AGENTS.md
 * as the authority and a CLAUDE.md that says otherwise, Claude Code is told which one wins; with a
 * CLAUDE.md that imports it, Claude Code reads it itself and is not given it again. Codex reads an
 * AGENTS.md beside HERMES.md instead of its fallback name: then it gets HERMES.md at session start.
 * One repository per client: these clients are slow to start.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCli,
  PINNED,
  setUpClient,
  killTestProcesses,
  startNetworkTrap,
  type Client,
  type ClientSession,
  type NetworkTrap,
} from '../helpers/agent-clis.js';
import { startAgentModel, type AgentModel, type ModelRequest } from '../helpers/agent-models.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { until } from '../helpers/agents.js';

const MARKER = 'The quokka ledger is reconciled every Tuesday before noon.';
const REMEMBERED = 'Always run the wombat linter before committing in this repository.';
const AGENTS_MARKER = 'Releases are cut from the numbat branch only.';
const WINS = "AGENTS.md is this repository's authority; where CLAUDE.md says otherwise, AGENTS.md wins.";
const SETUP_MS = 420_000;
const SESSION_MS = 180_000;

const count = (text: string, what: string) => text.split(what).length - 1;

/** The strings of a request body that hold `what`: where in the request it came. */
function carriers(body: unknown, what: string, out: string[] = []): string[] {
  if (typeof body === 'string') {
    if (body.includes(what)) out.push(body);
  } else if (body && typeof body === 'object') for (const v of Object.values(body)) carriers(v, what, out);
  return out;
}
/** hermesd's session-start fence, as each client hands hook context on (Gemini CLI escapes `<` and `>`). */
const FENCED = /(<|&lt;)hermesd-context(>|&gt;)/;
/** How each client gets HERMES.md: Codex and Gemini CLI read it themselves (the setting init wrote); Claude Code at session start. */
const BY_HOOK: Record<Client, boolean> = { claude: true, codex: false, gemini: false };

function sees(client: Client, extra?: (s: () => Setup) => void): void {
  const pin = PINNED[client];
  describe(`${pin.pkg}@${pin.version} sees the repository's authority exactly once`, () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setUp(client);
    }, SETUP_MS);
    afterAll(async () => {
      await s?.cleanup();
    });

    it(
      "holds HERMES.md's words once in the first model request",
      async () => {
        const first = await s.session();
        expect(count(first.text, MARKER), `the marker of HERMES.md in ${client}'s first request (${first.text.length} characters)`).toBe(1);
        const [carrier] = carriers(first.body, MARKER);
        expect(
          FENCED.test(carrier!),
          `${client} got HERMES.md ${BY_HOOK[client] ? 'not from hermesd at session start' : 'from hermesd, not by its own setting'}`,
        ).toBe(BY_HOOK[client]);
      },
      SESSION_MS,
    );

    it(
      'sees a sentence hermesd remember put into HERMES.md in its next session, once',
      async () => {
        const r = await s.t.cli(['remember', REMEMBERED, '--json'], { cwd: s.repo });
        expect(r.code, r.stderr).toBe(0);
        const id = r.json().proposal?.id as string;
        expect(id, `remember made no proposal: ${r.stdout}`).toBeTruthy();
        const a = await s.t.cli(['proposals', 'accept', id], { cwd: s.repo });
        expect(a.code, a.stderr).toBe(0);
        expect(readFileSync(join(s.repo, 'HERMES.md'), 'utf8')).toContain(REMEMBERED);
        await s.authorityIs('HERMES.md', REMEMBERED);
        const next = await s.session();
        expect(count(next.text, REMEMBERED), `the remembered sentence in ${client}'s next first request`).toBe(1);
        expect(count(next.text, MARKER)).toBe(1);
      },
      SESSION_MS,
    );

    extra?.(() => s);
  });
}

type Setup = {
  t: TestEnv;
  repo: string;
  /** One session; its first model request. */
  session(): Promise<ModelRequest>;
  /** Waits until the daemon's authority is `file` holding `text`. */
  authorityIs(file: string, text: string): Promise<void>;
  cleanup(): Promise<void>;
};

async function setUp(client: Client): Promise<Setup> {
  const cli = await agentCli(client);
  const t = makeEnv();
  const repo = t.repo({ 'README.md': '# app\n', 'HERMES.md': `# Rules\n\n${MARKER}\n` });
  let model: AgentModel | undefined;
  let trap: NetworkTrap | undefined;
  const cleanup = async () => {
    await model?.close();
    await trap?.close();
    await t.cleanup();
    killTestProcesses(t.home);
  };
  try {
    model = await startAgentModel(cli.dialect);
    trap = await startNetworkTrap();
    const init = await t.cli(['init', '--agents', client], { cwd: repo });
    if (init.code !== 0) throw new Error(`hermesd init --agents ${client} failed: ${init.stderr}`);
    const agent: ClientSession = await setUpClient(cli, { env: t.env, base: join(t.home, '..'), repo, model, trap });
    const m = model;
    return {
      t,
      repo,
      async session() {
        const from = m.requests.length;
        m.clear();
        m.push({ text: 'Noted.' });
        const run = await agent.run('What are the rules of this repository?', { timeoutMs: SESSION_MS - 10_000 });
        const first = m.requests[from];
        if (!first) throw new Error(`${client} made no model request (exit ${run.code}): ${run.stderr.slice(-2000)}`);
        return first;
      },
      async authorityIs(file, text) {
        await until(
          () => t.cli(['context', '--json'], { cwd: repo }),
          (r) => r.code === 0 && (r.json().authority as string[]).some((a) => a.includes(file)) && readFileSync(join(repo, file), 'utf8').includes(text),
        );
      },
      cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

sees('claude', (s) => {
  it(
    'is told that AGENTS.md wins over a CLAUDE.md that says otherwise, and gets AGENTS.md once',
    async () => {
      const { repo } = s();
      rmSync(join(repo, 'HERMES.md'));
      writeFileSync(join(repo, 'AGENTS.md'), `# Agents\n\n${AGENTS_MARKER}\n`);
      writeFileSync(join(repo, 'CLAUDE.md'), '# Claude\n\nReleases are cut from any branch.\n');
      await s().authorityIs('AGENTS.md', AGENTS_MARKER);
      const first = await s().session();
      expect(count(first.text, WINS), "Claude Code's first request says which file wins").toBe(1);
      expect(count(first.text, AGENTS_MARKER)).toBe(1);
      // Its own CLAUDE.md is still read (Claude Code's doing), once.
      expect(count(first.text, 'Releases are cut from any branch.')).toBe(1);
    },
    SESSION_MS,
  );

  it(
    'reads AGENTS.md itself through a CLAUDE.md that imports it (@AGENTS.md): hermesd does not give it again',
    async () => {
      const { repo } = s();
      writeFileSync(join(repo, 'CLAUDE.md'), '# Claude\n\n@AGENTS.md\n');
      await s().authorityIs('AGENTS.md', AGENTS_MARKER);
      const first = await s().session();
      expect(count(first.text, AGENTS_MARKER), "AGENTS.md's words in Claude Code's first request").toBe(1);
      expect(FENCED.test(carriers(first.body, AGENTS_MARKER)[0]!), 'AGENTS.md came from hermesd, not through the import').toBe(false);
    },
    SESSION_MS,
  );
});

sees('codex', (s) => {
  it(
    'reads an AGENTS.md beside HERMES.md instead of the fallback name: hermesd gives HERMES.md at session start, and says it wins',
    async () => {
      const { repo } = s();
      writeFileSync(join(repo, 'AGENTS.md'), `# Agents\n\n${AGENTS_MARKER}\n`);
      await s().authorityIs('HERMES.md', MARKER);
      const first = await s().session();
      expect(count(first.text, MARKER), "HERMES.md's marker in Codex's first request").toBe(1);
      expect(FENCED.test(carriers(first.body, MARKER)[0]!), 'HERMES.md did not come from hermesd at session start').toBe(true);
      expect(count(first.text, AGENTS_MARKER), 'Codex read AGENTS.md itself, once').toBe(1);
      expect(
        count(first.text, "HERMES.md is this repository's authority; where AGENTS.md says otherwise, HERMES.md wins."),
        "Codex's first request says which file wins",
      ).toBe(1);
    },
    SESSION_MS,
  );
});
sees('gemini');
