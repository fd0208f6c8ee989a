/**
 * One question — "may this path be written (or committed)?" — is asked at nine entry points:
 * hermesd's write_file and terminal, Claude Code's Write and Bash hooks, Gemini CLI's
 * write_file hook, `check --staged`, the pre-commit hook, `check --commits` and the server's
 * pre-receive hook. Each spelling of a path below goes through every entry point that can say
 * it, and every one must give the same verdict with the same rule id — refused by "generated"
 * or "accents", or allowed for the controls. The write-time entry points are given the
 * spelling; the commit-time ones see what git stores after a program wrote through the
 * spelling and `git add -A` (the way people work). One answer (rules/protected-paths.ts) makes
 * them agree; an entry point that resolved or matched a path its own way would not.
 */
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentServices } from '../../src/agent/standalone.js';
import { runToolCall, TOOLS } from '../../src/agent/tools/index.js';
import { denied, geminiExpand, runHook, toolHookCommand, type HookRun } from '../helpers/agents.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

const CONFIG = `rules:
  - id: generated
    message: Do not edit generated files; run the generator.
    protect: ["gen/**"]
  - id: accents
    message: The translations are generated.
    protect: ["générés/**"]
`;

type Verdict = string; // 'refused by <rule>' | 'allowed'
type Spelling = {
  name: string;
  /** The path as an entry point is given it (relative to the work tree, or absolute). */
  path: (repo: string) => string;
  /** The shell command a program runs to write through it (default: printf into the path). */
  shell?: (path: string) => string;
  /** Whether a file tool can be given this spelling (a directory with a trailing slash cannot). */
  fileTool?: false;
  expect: Verdict;
};

const q = (p: string) => `'${p.replace(/'/g, `'\\''`)}'`;
/** A program writing through the path: its directory made first, as an editor's save would. */
const printfInto = (p: string) => `mkdir -p "$(dirname ${q(p)})" && printf 'x\\n' > ${q(p)}`;
const SPELLINGS: Spelling[] = [
  { name: 'gen/a.ts', path: () => 'gen/a.ts', expect: 'refused by generated' },
  { name: './gen/a.ts', path: () => './gen/a.ts', expect: 'refused by generated' },
  { name: 'gen//a.ts', path: () => 'gen//a.ts', expect: 'refused by generated' },
  { name: 'gen\\a.ts (a backslash)', path: () => 'gen\\a.ts', expect: 'refused by generated' },
  {
    name: 'gen/sub/ (a directory, trailing slash)',
    path: () => 'gen/sub/',
    shell: (p) => `cp README.md ${p}`,
    fileTool: false,
    expect: 'refused by generated',
  },
  { name: 'src/../gen/a.ts', path: () => 'src/../gen/a.ts', expect: 'refused by generated' },
  { name: 's/../x.ts (s → gen/sub: gen/x.ts to open(2))', path: () => 's/../x.ts', expect: 'refused by generated' },
  { name: 'GEN/a.ts (another case)', path: () => 'GEN/a.ts', expect: 'refused by generated' },
  { name: 'générés/fr.json in NFD', path: () => 'générés/fr.json'.normalize('NFD'), expect: 'refused by accents' },
  { name: 'link.ts (a symlink to gen/a.ts)', path: () => 'link.ts', expect: 'refused by generated' },
  { name: 'src/h.ts (a hard link of gen/a.ts)', path: () => 'src/h.ts', expect: 'refused by generated' },
  { name: '../<tree>/gen/a.ts (out of the tree and back)', path: (repo) => `../${basename(repo)}/gen/a.ts`, expect: 'refused by generated' },
  { name: '<tree>/gen/a.ts (absolute)', path: (repo) => join(repo, 'gen/a.ts'), expect: 'refused by generated' },
  { name: 'src/app.ts (control)', path: () => 'src/app.ts', expect: 'allowed' },
  { name: 'gen-notes/a.ts (control: a sibling of gen/)', path: () => 'gen-notes/a.ts', expect: 'allowed' },
  { name: 'src/gen/a.ts (control: gen/ below the root)', path: () => 'src/gen/a.ts', expect: 'allowed' },
];

const RULE_IDS = /\b(generated|accents)\b/;

/** The verdict in a refusal's words: the rule it names. */
function verdictOf(refusal: string | undefined): Verdict {
  if (refusal === undefined) return 'allowed';
  const m = /repository rule "([^"]+)"/.exec(refusal) ?? RULE_IDS.exec(refusal);
  return m ? `refused by ${m[1]}` : `refused without a rule id (${refusal.slice(0, 200)})`;
}

let t: TestEnv;
let repo: string;
let server: string;
let base: string;

function sh(command: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync('sh', ['-c', command], { cwd: repo, env: { ...t.env, ...env }, encoding: 'utf8' });
}

/** The work tree, the index and the branch as they were before the spelling's turn (git's checkout breaks the hard link: made again). */
function restore(): void {
  gitIn(t, repo, 'reset', '-q', '--hard', base);
  gitIn(t, repo, 'clean', '-fdq');
  rmSync(join(repo, 'src/h.ts'));
  linkSync(join(repo, 'gen/a.ts'), join(repo, 'src/h.ts'));
}

const agentEnv = () => ({ CLAUDE_PROJECT_DIR: repo });

async function hook(agent: 'claude' | 'gemini', tool: string, input: Record<string, unknown>): Promise<HookRun> {
  const event = agent === 'claude' ? 'PreToolUse' : 'BeforeTool';
  const command = toolHookCommand(repo, agent, event, tool);
  return runHook(t, agent === 'gemini' ? geminiExpand(command, repo) : command, {
    cwd: repo,
    env: agentEnv(),
    payload: { session_id: 'spelling', cwd: repo, hook_event_name: event, tool_name: tool, tool_input: input },
  });
}

async function ownTool(name: 'write_file' | 'terminal', args: Record<string, unknown>): Promise<string> {
  const services = createAgentServices({ root: repo, home: t.home });
  try {
    const ctx = { root: repo, sessionId: 'spelling', signal: new AbortController().signal, config: services.config, services };
    return (await runToolCall(TOOLS, { name, arguments: JSON.stringify(args) }, ctx)).content;
  } finally {
    services.sessions.close();
  }
}

/** Each entry point's verdict on one spelling. */
const ENTRY_POINTS: Array<{ name: string; ask: (s: Spelling, path: string, command: string) => Promise<Verdict | undefined> }> = [
  {
    name: "hermesd's write_file",
    ask: async (s, path) => {
      if (s.fileTool === false) return undefined;
      const r = JSON.parse(await ownTool('write_file', { path, content: 'x\n' })) as { error?: string };
      return verdictOf(r.error);
    },
  },
  {
    name: "hermesd's terminal",
    ask: async (_s, _path, command) => {
      // A write the sandbox refused (refused_writes names the rule), or one it let happen and undid after (rules_broken).
      const r = JSON.parse(await ownTool('terminal', { command })) as { exit_code: number; output: string; refused_writes?: string; rules_broken?: string[] };
      if (r.rules_broken?.length) return `refused by ${r.rules_broken.join(' ')}`;
      if (r.refused_writes) return verdictOf(/protected by rule (\S+?):/.exec(r.refused_writes)?.[1] ?? r.refused_writes);
      return r.exit_code === 0 ? 'allowed' : `refused without a rule id (${r.output.trim()})`;
    },
  },
  {
    name: "Claude Code's Write hook",
    ask: async (s, path) =>
      s.fileTool === false ? undefined : verdictOf(denied('claude', await hook('claude', 'Write', { file_path: path, content: 'x\n' }))),
  },
  {
    name: "Gemini CLI's write_file hook",
    ask: async (s, path) =>
      s.fileTool === false ? undefined : verdictOf(denied('gemini', await hook('gemini', 'write_file', { file_path: path, content: 'x\n' }))),
  },
  { name: "Claude Code's Bash hook", ask: async (_s, _path, command) => verdictOf(denied('claude', await hook('claude', 'Bash', { command }))) },
  {
    name: 'check --staged',
    ask: async (_s, _path, command) => {
      sh(`${command} && git add -A`);
      const r = await t.cli(['check', '--staged', '--json'], { cwd: repo });
      const rules = (r.json().violations as Array<{ rule: string }>).map((v) => v.rule);
      return r.code === 0 ? 'allowed' : verdictOf(rules.join(' '));
    },
  },
  {
    name: 'the pre-commit hook',
    ask: async (_s, _path, command) => {
      sh(`${command} && git add -A`);
      const r = sh('git commit -qm spelling');
      return r.status === 0 ? 'allowed' : verdictOf(`${r.stdout}${r.stderr}`);
    },
  },
  {
    name: 'check --commits',
    ask: async (_s, _path, command) => {
      sh(`${command} && git add -A && git commit -qm spelling --no-verify`, { HERMESD_SKIP: '1' });
      const r = await t.cli(['check', '--commits', `${base}..HEAD`, '--json'], { cwd: repo });
      const rules = (r.json().violations as Array<{ rule: string }>).map((v) => v.rule);
      return r.code === 0 ? 'allowed' : verdictOf(rules.join(' '));
    },
  },
  {
    name: "the server's pre-receive hook",
    ask: async (_s, _path, command) => {
      sh(`${command} && git add -A && git commit -qm spelling --no-verify`, { HERMESD_SKIP: '1' });
      const r = sh(`git push -q --no-verify '${server}' HEAD:refs/heads/spelling`);
      if (r.status === 0) {
        spawnSync('git', ['update-ref', '-d', 'refs/heads/spelling'], { cwd: server, env: t.env });
        return 'allowed';
      }
      return verdictOf(r.stderr);
    },
  },
];

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': CONFIG,
    'README.md': '# project\n',
    'gen/a.ts': 'export const a = 1;\n',
    'gen/sub/b.ts': 'b\n',
    'générés/fr.json': '{}\n',
    'src/app.ts': 'app\n',
  });
  const init = await t.cli(['init', '--agents', 'claude,gemini'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
  symlinkSync('gen/sub', join(repo, 's'));
  symlinkSync('gen/a.ts', join(repo, 'link.ts'));
  linkSync(join(repo, 'gen/a.ts'), join(repo, 'src/h.ts'));
  sh('git add -A && git commit -qm "hermesd, links" --no-verify', { HERMESD_SKIP: '1' });
  base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  server = join(repo, '..', 'spelling-server.git');
  mkdirSync(server);
  gitIn(t, server, 'init', '-q', '--bare', '-b', 'main');
  sh(`git push -q '${server}' HEAD:refs/heads/main`, { HERMESD_SKIP: '1' });
  const serverInit = await t.cli(['init', '--server'], { cwd: server });
  expect(serverInit.code, serverInit.stderr).toBe(0);
});

afterAll(async () => {
  await t?.cleanup();
  if (server) rmSync(server, { recursive: true, force: true });
});

describe('a path spelt any way gets one verdict at every entry point', () => {
  it.each(SPELLINGS)('$name: $expect everywhere', async (s) => {
    const path = s.path(repo);
    const command = (s.shell ?? printfInto)(path);
    const verdicts: Record<string, Verdict> = {};
    for (const entry of ENTRY_POINTS) {
      restore();
      const v = await entry.ask(s, path, command);
      if (v !== undefined) verdicts[entry.name] = v;
    }
    restore();
    const disagree = Object.entries(verdicts).filter(([, v]) => v !== s.expect);
    expect(disagree, `${s.name}: ${disagree.map(([e, v]) => `${e} said "${v}"`).join('; ')} — expected "${s.expect}" everywhere`).toEqual([]);
    expect(Object.keys(verdicts).length, `${s.name}: too few entry points could say it`).toBeGreaterThanOrEqual(s.fileTool === false ? 6 : 9);
  });
});
