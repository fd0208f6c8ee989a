/**
 * What git reads as its configuration, or runs as its hooks, outside the git directory — the
 * core.hooksPath folder, a file git's config includes, there or not — is no agent's to write:
 * a hook script or an fsmonitor program written there would run at the user's next git command,
 * outside any confinement. One list (src/guard/git-reads.ts) answers for every entry point that
 * writes: hermesd's write_file, Claude Code's Write and Bash hooks, Gemini CLI's write_file hook,
 * each refusing with the rule `git-config`; and hermesd's terminal, where the file is not written
 * (read-only inside the sandbox, or removed after the command where it was not there). Written
 * after a review found Claude Code's Write tool allowed all three.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentServices } from '../../src/agent/standalone.js';
import { runToolCall, TOOLS } from '../../src/agent/tools/index.js';
import { findRealGit } from '../../src/git/real-git.js';
import { gitReadPaths } from '../../src/guard/git-reads.js';
import { denied, geminiExpand, runHook, toolHookCommand, type HookRun } from '../helpers/agents.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

const HOOK = '#!/bin/sh\nexit 0\n';
const TEAM = '[user]\n\tname = Team\n';

/** The paths git reads here (by the repository's config, below), and a control. */
const PATHS: Array<{ name: string; path: string; expect: string }> = [
  { name: 'a hook in the core.hooksPath folder', path: 'scripts/hooks/pre-commit', expect: 'refused by git-config' },
  { name: 'a new hook in that folder', path: 'scripts/hooks/pre-push', expect: 'refused by git-config' },
  { name: 'a file the config includes', path: 'team.gitconfig', expect: 'refused by git-config' },
  { name: 'a file the config includes that is not there', path: 'absent.gitconfig', expect: 'refused by git-config' },
  { name: 'src/app.ts (control)', path: 'src/app.ts', expect: 'allowed' },
];

let t: TestEnv;
let repo: string;

/** The verdict in a refusal's words: the rule it names. */
function verdictOf(refusal: string | undefined, rule?: string): string {
  if (refusal === undefined) return 'allowed';
  const named = rule ?? /hermesd rule: ([\w-]+)/.exec(refusal)?.[1];
  return named ? `refused by ${named}` : `refused without a rule id (${refusal.slice(0, 200)})`;
}

async function hook(agent: 'claude' | 'gemini', tool: string, input: Record<string, unknown>): Promise<HookRun> {
  const event = agent === 'claude' ? 'PreToolUse' : 'BeforeTool';
  const command = toolHookCommand(repo, agent, event, tool);
  return runHook(t, agent === 'gemini' ? geminiExpand(command, repo) : command, {
    cwd: repo,
    env: { CLAUDE_PROJECT_DIR: repo },
    payload: { session_id: 'git-reads', cwd: repo, hook_event_name: event, tool_name: tool, tool_input: input },
  });
}

async function ownTool(name: 'write_file' | 'terminal', args: Record<string, unknown>): Promise<{ content: string; rule?: string }> {
  const services = createAgentServices({ root: repo, home: t.home });
  try {
    const ctx = { root: repo, sessionId: 'git-reads', signal: new AbortController().signal, config: services.config, services };
    const out = await runToolCall(TOOLS, { name, arguments: JSON.stringify(args) }, ctx);
    return { content: out.content, ...(out.refusedBy ? { rule: out.refusedBy.rule } : {}) };
  } finally {
    services.sessions.close();
  }
}

const ENTRY_POINTS: Array<{ name: string; ask: (path: string) => Promise<string> }> = [
  {
    name: "hermesd's write_file",
    ask: async (path) => {
      const r = await ownTool('write_file', { path, content: '[core]\n\tfsmonitor = "touch PWNED"\n' });
      return verdictOf((JSON.parse(r.content) as { error?: string }).error, r.rule);
    },
  },
  { name: "Claude Code's Write hook", ask: async (path) => verdictOf(denied('claude', await hook('claude', 'Write', { file_path: path, content: 'x\n' }))) },
  {
    name: "Gemini CLI's write_file hook",
    ask: async (path) => verdictOf(denied('gemini', await hook('gemini', 'write_file', { file_path: path, content: 'x\n' }))),
  },
  {
    name: "Claude Code's Bash hook",
    ask: async (path) => verdictOf(denied('claude', await hook('claude', 'Bash', { command: `printf 'x\\n' > ${path}` }))),
  },
];

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({ 'README.md': '# project\n', 'src/app.ts': 'app\n', 'scripts/hooks/pre-commit': HOOK, 'team.gitconfig': TEAM });
  const init = await t.cli(['init', '--agents', 'claude,gemini'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
  gitIn(t, repo, 'add', '-A');
  gitIn(t, repo, 'commit', '-qm', 'init');
  gitIn(t, repo, 'config', 'core.hooksPath', 'scripts/hooks');
  gitIn(t, repo, 'config', '--add', 'include.path', '../team.gitconfig');
  gitIn(t, repo, 'config', '--add', 'include.path', '../absent.gitconfig');
  expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await t?.cleanup();
});

describe("what git reads as configuration or runs as hooks is no agent's tool to write", () => {
  for (const entry of ENTRY_POINTS) {
    it(`${entry.name}: each path git reads refused by git-config, the control allowed`, async () => {
      const got: Record<string, string> = {};
      for (const p of PATHS) got[p.name] = await entry.ask(p.path);
      expect(got, `${entry.name} gave another verdict than the others for a path git reads`).toEqual(Object.fromEntries(PATHS.map((p) => [p.name, p.expect])));
      gitIn(t, repo, 'checkout', '-q', '--', 'src/app.ts');
    });
  }

  it("where hermesd's reading of git's config cannot be sure (an onbranch include), the targets not there are still refused and removed: git's own parse names them", async () => {
    gitIn(t, repo, 'config', '--add', 'includeIf.onbranch:main.path', '../branch.gitconfig');
    try {
      const got: Record<string, string> = {};
      for (const entry of ENTRY_POINTS.slice(0, 2))
        for (const path of ['branch.gitconfig', 'absent.gitconfig']) got[`${entry.name} ${path}`] = await entry.ask(path);
      expect(got, 'an include target that is not there was let through where the reader was not sure').toEqual(
        Object.fromEntries(Object.keys(got).map((k) => [k, 'refused by git-config'])),
      );
      await ownTool('terminal', { command: `g=branch.gitconfig; printf '[core]\\n\\tfsmonitor = "touch PWNED"\\n' > $g; cp $g absent.gitconfig` });
      expect(existsSync(join(repo, 'branch.gitconfig')), 'the onbranch include target a command created stayed').toBe(false);
      expect(existsSync(join(repo, 'absent.gitconfig')), 'the include target a command created stayed').toBe(false);
    } finally {
      gitIn(t, repo, 'config', '--unset', 'includeIf.onbranch:main.path');
    }
  });

  it('a core.hooksPath written with ~/ is the folder git expands it to, in the home folder', () => {
    gitIn(t, repo, 'config', 'core.hooksPath', '~/hermesd-test-hooks');
    try {
      const reads = gitReadPaths({ root: repo, gitDir: join(repo, '.git'), commonDir: join(repo, '.git') }, findRealGit());
      expect(reads, 'the hooks folder is not where git expands ~/ to').toContain(join(homedir(), 'hermesd-test-hooks'));
      expect(reads, 'the hooks folder was taken as a folder named ~ in the work tree').not.toContain(join(repo, '~', 'hermesd-test-hooks'));
    } finally {
      gitIn(t, repo, 'config', 'core.hooksPath', 'scripts/hooks');
    }
  });

  it('a git older than --show-scope (before 2.26) gives the same list', () => {
    const oldGit = join(t.home, 'old-git');
    writeFileSync(
      oldGit,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = --show-scope ] && { echo "error: unknown option 'show-scope'" >&2; exit 129; }; done\nexec ${findRealGit()} "$@"\n`,
      { mode: 0o755 },
    );
    const dirs = { root: repo, gitDir: join(repo, '.git'), commonDir: join(repo, '.git') };
    // The config fresh: no key, so neither answer is one kept from the other's git.
    utimesSync(join(repo, '.git', 'config'), new Date(), new Date(Date.now() + 60_000));
    try {
      const now = gitReadPaths(dirs, findRealGit()).sort();
      expect(now, 'the list lacks the hooks folder or an include').toEqual(
        expect.arrayContaining([join(repo, 'scripts/hooks'), join(repo, 'team.gitconfig'), join(repo, 'absent.gitconfig')]),
      );
      expect(gitReadPaths(dirs, oldGit).sort(), 'an older git gave another list').toEqual(now);
    } finally {
      utimesSync(join(repo, '.git', 'config'), new Date(), new Date());
    }
  });

  it("hermesd's terminal: the hook, the included file and the one not there are as they were after a command that writes them", async () => {
    await ownTool('terminal', {
      command: `f=scripts/hooks/pre-commit; printf 'touch PWNED\\n' > $f; g=team.gitconfig; printf '[core]\\n\\tfsmonitor = "touch PWNED"\\n' > $g; h=absent.gitconfig; cp $g $h`,
    });
    expect(readFileSync(join(repo, 'scripts/hooks/pre-commit'), 'utf8'), 'the hook in core.hooksPath was rewritten').toBe(HOOK);
    expect(readFileSync(join(repo, 'team.gitconfig'), 'utf8'), 'the included config file was rewritten').toBe(TEAM);
    expect(existsSync(join(repo, 'absent.gitconfig')), 'the included file that was not there stayed').toBe(false);
    gitIn(t, repo, 'status', '--short');
    expect(existsSync(join(repo, 'PWNED')), 'git ran what the command wrote').toBe(false);
  });
});
