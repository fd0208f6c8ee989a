/**
 * `hermesd init --agents all` merges into agents' configs as people write them (tabs, CRLF,
 * minified JSON, comments in JSONC and TOML, no final newline, hooks and MCP servers of
 * their own) without changing a byte of theirs; a second init changes nothing; `--uninstall`
 * gives every file back byte for byte and removes what hermesd created. A file edited since
 * init loses only hermesd's entries. The settings that make Gemini CLI and Codex read the
 * repository's authority (context.fileName, project_doc_fallback_filenames) are merged into the
 * user's own lists, follow the authority at the next init, and come out the same way.
 */
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJsonc } from '../../src/other-agents/json-edit.js';
import { hookCommand, removeJsonEntries } from '../../src/other-agents/install.js';
import { sha256 } from '../../src/text/hash.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

const CLAUDE = `{
\t"$schema": "https://json.schemastore.org/claude-code-settings.json",
\t"permissions": {
\t\t"allow": ["Bash(npm run lint)", "Read(~/notes/**)"],
\t\t"deny": ["Read(./secrets/**)"]
\t},
\t"hooks": {
\t\t"PreToolUse": [
\t\t\t{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "\${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh" }] }
\t\t],
\t\t"Stop": [{ "hooks": [{ "type": "command", "command": "say done" }] }]
\t},
\t"env": { "GREETING": "héllo ✓" }
}`;

const MCP = '{"mcpServers":{"github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"]}}}';

const CODEX = `# Codex project settings — reviewed by the platform team
model = "gpt-5.5"
approval_policy = "on-request"   # ask before running commands

[sandbox_workspace_write]
network_access = false
writable_roots = [
  "/tmp/build", # scratch
]

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
env = { DOCS_TOKEN_FILE = "~/.docs-token" }

[profiles.fast]
model = 'gpt-5.5-mini'
notes = """
Used for quick
questions."""`;

const CURSOR = [
  '{',
  '    "version": 1,',
  '    "hooks": {',
  '        "afterFileEdit": [',
  '            { "command": "./format.sh" }',
  '        ]',
  '    }',
  '}',
  '',
].join('\r\n');

const GEMINI = [
  '{',
  '  // Shared Gemini CLI settings',
  '  "general": {',
  '    "preferredEditor": "vim" /* the team editor */',
  '  },',
  '  "mcpServers": {',
  '    "sqlite": { "command": "uvx", "args": ["mcp-server-sqlite", "--db", "dev.db"] }',
  '  }',
  '}',
  '',
].join('\r\n');

const FILES = ['.claude/settings.json', '.mcp.json', '.codex/config.toml', '.cursor/hooks.json', '.gemini/settings.json'];
const CREATED = ['.codex/hooks.json', '.cursor/mcp.json', '.hermes/agent-hook', '.hermes/mcp'];

describe('init --agents and --uninstall on real-looking agent configs', () => {
  let t: TestEnv;
  let repo: string;
  const bytes = () =>
    Object.fromEntries([...FILES, ...CREATED].map((f) => [f, existsSync(join(repo, f)) ? readFileSync(join(repo, f)).toString('base64') : null]));

  beforeEach(() => {
    t = makeEnv();
    repo = t.repo({
      '.hermes/config.yaml': 'rules: []\n',
      '.claude/settings.json': CLAUDE,
      '.mcp.json': MCP,
      '.codex/config.toml': CODEX,
      '.cursor/hooks.json': CURSOR,
      '.gemini/settings.json': GEMINI,
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('merges without touching the user bytes, is idempotent, and uninstall restores every file byte for byte', async () => {
    const before = bytes();
    const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);

    // Every user byte is still there, ahead of hermesd's insertions; the values parse to the user's plus hermesd's.
    const claude = readFileSync(join(repo, '.claude/settings.json'), 'utf8');
    const claudeValue = parseJsonc(claude).value as any;
    expect(claudeValue.permissions).toEqual({ allow: ['Bash(npm run lint)', 'Read(~/notes/**)'], deny: ['Read(./secrets/**)'] });
    expect(claudeValue.env).toEqual({ GREETING: 'héllo ✓' });
    expect(claudeValue.hooks.PreToolUse).toHaveLength(3);
    expect(claudeValue.hooks.PreToolUse[0].hooks[0].command).toBe('${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh');
    expect(claudeValue.hooks.Stop[0].hooks[0].command).toBe('say done');
    // A shell call that exited non-zero fires PostToolUseFailure, registered as PostToolUse is.
    expect(
      claudeValue.hooks.PostToolUseFailure?.map((g: any) => [g.matcher, g.hooks[0].command]),
      'init wrote no Claude Code PostToolUseFailure entry for Bash',
    ).toEqual([['Bash', hookCommand('claude', 'PostToolUseFailure')]]);
    expect(claude).toContain('\t\t"Stop": [{ "hooks": [{ "type": "command", "command": "say done" }] }, {"hooks":');
    const mcp = readFileSync(join(repo, '.mcp.json'), 'utf8');
    expect(mcp.startsWith('{"mcpServers":{"github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"]},"hermesd":')).toBe(true);
    expect(mcp.includes('\n')).toBe(false);
    const codex = readFileSync(join(repo, '.codex/config.toml'), 'utf8');
    expect(codex.startsWith(CODEX + '\n\n# >>> hermesd')).toBe(true);
    const toml = parse(codex) as any;
    expect(toml.profiles.fast.notes).toBe('Used for quick\nquestions.');
    expect(toml.mcp_servers.docs.env).toEqual({ DOCS_TOKEN_FILE: '~/.docs-token' });
    expect(Object.keys(toml.mcp_servers)).toEqual(['docs', 'hermesd']);
    const cursor = readFileSync(join(repo, '.cursor/hooks.json'), 'utf8');
    expect(cursor.split('\r\n').every((l) => !l.includes('\n'))).toBe(true);
    expect(cursor).toContain(
      '            { "command": "./format.sh" },\r\n            {\r\n                "command": "if [ -f .hermes/agent-hook ]; then sh .hermes/agent-hook cursor afterFileEdit; elif [ -f .git/hermesd/agent-hook ]; then hermesd_root=. hermesd_gd=.git sh .git/hermesd/agent-hook cursor afterFileEdit; fi",',
    );
    const gemini = readFileSync(join(repo, '.gemini/settings.json'), 'utf8');
    expect(gemini).toContain('  // Shared Gemini CLI settings\r\n');
    expect(gemini).toContain('"preferredEditor": "vim" /* the team editor */');
    expect(Object.keys((parseJsonc(gemini).value as any).mcpServers)).toEqual(['sqlite', 'hermesd']);
    expect(existsSync(join(repo, '.codex/hooks.json'))).toBe(true);
    expect(existsSync(join(repo, '.cursor/mcp.json'))).toBe(true);

    const afterFirst = bytes();
    const again = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(again.code, again.stderr).toBe(0);
    expect(bytes()).toEqual(afterFirst);

    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(bytes()).toEqual(before);
    expect(gitIn(t, repo, 'status', '--porcelain')).toBe('');
  });

  it("replaces the hook entry an earlier hermesd wrote (one PreToolUse entry for every judged tool) with this version's two, and still gives the file back byte for byte", async () => {
    const before = bytes();
    expect((await t.cli(['init', '--agents', 'claude,cursor'], { cwd: repo })).code).toBe(0);
    // What hermesd wrote before the split: one PreToolUse entry, the Write one's command, for every judged tool. The file and
    // hermesd's record of it are made to say so, as that version left them.
    const path = join(repo, '.claude/settings.json');
    const recordPath = join(repo, '.git/hermesd/agents.json');
    const record = JSON.parse(readFileSync(recordPath, 'utf8'));
    const rec = record.files.find((f: { path: string }) => f.path === '.claude/settings.json');
    const pre = rec.entries.filter((e: { path: string[] }) => e.path[1] === 'PreToolUse');
    expect(pre.map((e: any) => e.value.matcher)).toEqual(['Bash|Read|Grep', 'Write|Edit|MultiEdit|NotebookEdit']);
    const OLD = 'Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep';
    let text = removeJsonEntries(readFileSync(path, 'utf8'), '.claude/settings.json', [{ ...pre[0], created: [] }]).text;
    text = text.replace('"Write|Edit|MultiEdit|NotebookEdit"', JSON.stringify(OLD));
    writeFileSync(path, text);
    pre[1].value.matcher = OLD;
    rec.entries = rec.entries.filter((e: unknown) => e !== pre[0]);
    rec.after = sha256(text);
    // Cursor's beforeShellExecution entry read its payload with cat then (one entry for the event, now with `small`).
    const cursorPath = join(repo, '.cursor/hooks.json');
    const cursorText = readFileSync(cursorPath, 'utf8').replace('cursor beforeShellExecution small', 'cursor beforeShellExecution');
    writeFileSync(cursorPath, cursorText);
    const cursorRec = record.files.find((f: { path: string }) => f.path === '.cursor/hooks.json');
    const shellEntry = cursorRec.entries.find((e: { path: string[] }) => e.path[1] === 'beforeShellExecution');
    shellEntry.value.command = shellEntry.value.command.replace(' small', '');
    cursorRec.after = sha256(cursorText);
    writeFileSync(recordPath, JSON.stringify(record, null, 2));
    const ours = () =>
      ((parseJsonc(readFileSync(path, 'utf8')).value as any).hooks.PreToolUse as any[]).filter((g) => JSON.stringify(g).includes('agent-hook'));
    expect(ours().map((g) => g.matcher)).toEqual([OLD]);

    const again = await t.cli(['init', '--agents', 'claude,cursor'], { cwd: repo });
    expect(again.code, again.stderr).toBe(0);
    const shell = (parseJsonc(readFileSync(cursorPath, 'utf8')).value as any).hooks.beforeShellExecution as Array<{ command: string }>;
    expect(shell.map((h) => h.command)).toEqual([
      'if [ -f .hermes/agent-hook ]; then sh .hermes/agent-hook cursor beforeShellExecution small; elif [ -f .git/hermesd/agent-hook ]; then hermesd_root=. hermesd_gd=.git sh .git/hermesd/agent-hook cursor beforeShellExecution small; fi',
    ]);
    expect(ours().map((g) => [g.matcher, g.hooks[0].command.includes('PreToolUse small;')])).toEqual([
      ['Bash|Read|Grep', true],
      ['Write|Edit|MultiEdit|NotebookEdit', false],
    ]);
    // The user's own PreToolUse entry is still the first.
    expect((parseJsonc(readFileSync(path, 'utf8')).value as any).hooks.PreToolUse[0].hooks[0].command).toBe('${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh');

    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(bytes()).toEqual(before);
  });

  it('refuses a settings file with a key twice (agents read the last, hermesd would add to the first), naming both lines, and writes nothing', async () => {
    const dup = CLAUDE.replace('\t"env": {', '\t"hooks": { "Stop": [] },\n\t"env": {');
    writeFileSync(join(repo, '.claude/settings.json'), dup);
    const before = bytes();
    const init = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
    expect(init.code).toBe(2);
    expect(init.stderr).toContain('.claude/settings.json has the key "hooks" twice (lines 7 and 13)');
    expect(init.stderr).not.toMatch(/\n\s+at /);
    expect(bytes()).toEqual(before);
    // One level down, too.
    writeFileSync(join(repo, '.claude/settings.json'), CLAUDE.replace('"deny": ["Read(./secrets/**)"]', '"deny": [], "deny": ["Read(./secrets/**)"]'));
    const nested = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain('has the key "permissions.deny" twice (line 5)');
  });

  it("writes agents' files atomically (a new file renamed over the old one), keeping their mode", async () => {
    const path = join(repo, '.claude/settings.json');
    chmodSync(path, 0o640);
    const inode = statSync(path).ino;
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect(statSync(path).ino).not.toBe(inode);
    expect(statSync(path).mode & 0o777).toBe(0o640);
    const written = statSync(path).ino;
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(statSync(path).ino).not.toBe(written);
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(readFileSync(path, 'utf8')).toBe(CLAUDE);
  });

  it('takes only its own entries out of a file edited since init, and keeps the edits', async () => {
    expect((await t.cli(['init', '--agents', 'claude,codex,gemini'], { cwd: repo })).code).toBe(0);
    const path = join(repo, '.claude/settings.json');
    // The user adds a permission and a hook of their own after init.
    const edited = readFileSync(path, 'utf8')
      .replace('"deny": ["Read(./secrets/**)"]', '"deny": ["Read(./secrets/**)", "Bash(curl *)"]')
      .replace('"SessionEnd": [', '"SessionEnd": [\n\t\t\t{ "hooks": [{ "type": "command", "command": "./log-end.sh" }] },');
    writeFileSync(path, edited);
    const toml = join(repo, '.codex/config.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8') + '\n[tui]\nnotifications = true\n');
    const gem = join(repo, '.gemini/settings.json');
    writeFileSync(gem, readFileSync(gem, 'utf8').replace('"preferredEditor": "vim"', '"preferredEditor": "nvim"'));

    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout).toContain("hermesd's entries taken out (your edits kept)");
    const claude = parseJsonc(readFileSync(path, 'utf8')).value as any;
    expect(claude.permissions.deny).toEqual(['Read(./secrets/**)', 'Bash(curl *)']);
    expect(claude.hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: './log-end.sh' }] }]);
    expect(Object.keys(claude.hooks)).toEqual(['PreToolUse', 'Stop', 'SessionEnd']);
    expect(JSON.stringify(claude)).not.toContain('agent-hook');
    const codex = readFileSync(toml, 'utf8');
    expect(codex).toBe(CODEX + '\n[tui]\nnotifications = true\n');
    const gemini = readFileSync(gem, 'utf8');
    expect(gemini).toBe(GEMINI.replace('"preferredEditor": "vim"', '"preferredEditor": "nvim"'));
    expect(existsSync(join(repo, '.codex/hooks.json'))).toBe(false);
    expect(existsSync(join(repo, '.hermes/agent-hook'))).toBe(false);
    expect(existsSync(join(repo, '.hermes/mcp'))).toBe(false);
  });

  it('keeps what changed between two inits: uninstall gives back the files as they are now, without hermesd', async () => {
    expect((await t.cli(['init', '--agents', 'claude,codex'], { cwd: repo })).code).toBe(0);
    // The user grants a permission (Claude Code rewrites its settings this way) and a merge drops hermesd's block from config.toml.
    const path = join(repo, '.claude/settings.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"deny": ["Read(./secrets/**)"]', '"deny": ["Read(./secrets/**)", "Bash(curl *)"]'));
    const toml = join(repo, '.codex/config.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(/\n\n# >>> hermesd[\s\S]*# <<< hermesd <<<\n/, '\n[tui]\nnotifications = true\n'));
    // hermesd init again (doctor's fix): the block comes back, nothing of the user's goes.
    expect((await t.cli(['init', '--agents', 'claude,codex'], { cwd: repo })).code).toBe(0);
    expect((parse(readFileSync(toml, 'utf8')) as any).mcp_servers.hermesd).toBeDefined();
    expect(JSON.stringify(parseJsonc(readFileSync(path, 'utf8')).value)).toContain('Bash(curl *)');

    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(CLAUDE.replace('"deny": ["Read(./secrets/**)"]', '"deny": ["Read(./secrets/**)", "Bash(curl *)"]'));
    expect(readFileSync(toml, 'utf8')).toBe(CODEX + '\n[tui]\nnotifications = true\n');
  });

  it('keeps the stub while a config still runs it (an entry the user changed), and a command without its stub lets the call go on', async () => {
    expect((await t.cli(['init', '--agents', 'claude,codex'], { cwd: repo })).code).toBe(0);
    const hooks = join(repo, '.codex/hooks.json');
    // The user raised the timeout of hermesd's PreToolUse entry: no longer hermesd's entry as written.
    writeFileSync(hooks, readFileSync(hooks, 'utf8').replace(/"timeout": 30(\s*\}\s*\]\s*\}\s*\],\s*"PostToolUse")/, '"timeout": 60$1'));
    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout).toContain('.hermes/agent-hook (still run by .codex/hooks.json');
    expect(existsSync(join(repo, '.hermes/agent-hook'))).toBe(true);
    // No config runs the MCP stub any more: it went.
    expect(existsSync(join(repo, '.hermes/mcp'))).toBe(false);
    // Claude's entries are gone; the stub without a runner does nothing.
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(CLAUDE);
    writeFileSync(hooks, '{}\n');
    const again = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(join(repo, '.hermes/agent-hook'))).toBe(false);

    // A Claude command (as a session started before the uninstall still runs it) whose stub and
    // runner are gone: exit 0, the call goes on (sh on a missing file would exit 2, a refusal).
    expect(existsSync(join(repo, '.git/hermesd/agent-hook'))).toBe(false);
    const { runHook } = await import('../helpers/agents.js');
    const r = await runHook(t, hookCommand('claude', 'PreToolUse'), {
      cwd: repo,
      env: { CLAUDE_PROJECT_DIR: repo },
      payload: { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } },
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('puts its Codex hooks in config.toml when that is where the user keeps theirs, and takes them out again', async () => {
    const withHooks =
      CODEX +
      '\n\n[[hooks.PreToolUse]]\nmatcher = "^Bash$"\n\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = \'/usr/bin/python3 "$(git rev-parse --show-toplevel)/.codex/hooks/policy.py"\'\ntimeout = 30\n';
    writeFileSync(join(repo, '.codex/config.toml'), withHooks);
    const init = await t.cli(['init', '--agents', 'codex'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(existsSync(join(repo, '.codex/hooks.json'))).toBe(false);
    const parsed = parse(readFileSync(join(repo, '.codex/config.toml'), 'utf8')) as any;
    expect(parsed.hooks.PreToolUse).toHaveLength(3);
    expect(parsed.hooks.PreToolUse[0].hooks[0].command).toContain('policy.py');
    expect(parsed.hooks.PreToolUse.slice(1)).toEqual([
      { matcher: '^Bash$', hooks: [{ type: 'command', command: hookCommand('codex', 'PreToolUse', true), timeout: 30 }] },
      { matcher: '^apply_patch$', hooks: [{ type: 'command', command: hookCommand('codex', 'PreToolUse'), timeout: 30 }] },
    ]);
    expect(Object.keys(parsed.hooks)).toEqual(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd']);
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(readFileSync(join(repo, '.codex/config.toml'), 'utf8')).toBe(withHooks);
  });

  it("writes the paths rules protect into Claude Code's sandbox (denyWrite), keeps the user's, follows the rules at the next init, and gives the file back byte for byte", async () => {
    const rules = (protects: string) => `rules:\n${protects}`;
    const GEN = '  - id: generated-files\n    message: Run the generator.\n    protect: ["gen/**"]\n';
    const LOCK = '  - id: lock\n    message: Do not edit.\n    protect: ["schema.lock", "docs/**/*.md"]\n';
    const REGEN = '  - id: regen\n    message: Regenerate.\n    protect: ["out/**"]\n    generator: "npm run gen"\n';
    const deny = () => (parseJsonc(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).value as any).sandbox?.filesystem?.denyWrite;

    // A settings file without a sandbox: hermesd creates the containers, and takes them out again.
    writeFileSync(join(repo, '.hermes/config.yaml'), rules(GEN + LOCK + REGEN));
    const before = bytes();
    const init = await t.cli(['init', '--agents', 'claude'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(deny()).toEqual(['./gen', './schema.lock']);
    // A glob the sandbox cannot take, and a generator's files (the agent may run the generator), are left to hermesd's checks, and said so.
    expect(init.stdout).toContain('sandbox.filesystem.denyWrite');
    expect(init.stdout).toContain('docs/**/*.md, out/**');
    // One rule fewer: its path comes out at the next init; none left: the containers go too.
    writeFileSync(join(repo, '.hermes/config.yaml'), rules(LOCK));
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect(deny()).toEqual(['./schema.lock']);
    writeFileSync(join(repo, '.hermes/config.yaml'), 'rules: []\n');
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect(deny()).toBeUndefined();
    expect((parseJsonc(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).value as any).sandbox).toBeUndefined();
    writeFileSync(join(repo, '.hermes/config.yaml'), rules(GEN));
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, '.hermes/config.yaml'), rules(GEN + LOCK + REGEN));
    expect(bytes()).toEqual(before);

    // A user's own sandbox settings: their entries stay, hermesd's go after them and come out alone.
    const mine = CLAUDE.replace('\t"env":', '\t"sandbox": { "enabled": true, "filesystem": { "denyWrite": ["~/.kube", "./gen"] } },\n\t"env":');
    writeFileSync(join(repo, '.claude/settings.json'), mine);
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect(deny()).toEqual(['~/.kube', './gen', './schema.lock']);
    writeFileSync(join(repo, '.hermes/config.yaml'), rules(REGEN));
    expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
    expect(deny()).toEqual(['~/.kube', './gen']);
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(mine);
  });

  it("names the authority in Gemini CLI's context.fileName and Codex's project_doc_fallback_filenames, merged into the user's lists, follows it at the next init, and gives both files back byte for byte", async () => {
    const geminiList = GEMINI.replace('  "mcpServers": {', '  "context": { "fileName": ["AGENTS.md", "CONTEXT.md"] },\r\n  "mcpServers": {');
    const codexList = CODEX.replace(
      'approval_policy = "on-request"',
      'project_doc_fallback_filenames = ["CONTEXT.md"] # team notes\napproval_policy = "on-request"',
    );
    writeFileSync(join(repo, '.gemini/settings.json'), geminiList);
    writeFileSync(join(repo, '.codex/config.toml'), codexList);
    writeFileSync(join(repo, 'HERMES.md'), '# Rules\n\nUse the kestrel toolchain.\n');
    const before = bytes();
    const names = () => ({
      gemini: (parseJsonc(readFileSync(join(repo, '.gemini/settings.json'), 'utf8')).value as any).context?.fileName,
      codex: (parse(readFileSync(join(repo, '.codex/config.toml'), 'utf8')) as any).project_doc_fallback_filenames,
    });
    const init = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    expect(names(), "the authority's name was not added to the user's lists").toEqual({
      gemini: ['AGENTS.md', 'CONTEXT.md', 'HERMES.md'],
      codex: ['CONTEXT.md', 'HERMES.md'],
    });
    expect(init.stdout).toContain('Claude Code: it does not read HERMES.md itself; hermesd gives it as context at session start');
    // The user's comment on their line stays on it.
    expect(readFileSync(join(repo, '.codex/config.toml'), 'utf8')).toContain('# team notes');
    const afterFirst = bytes();
    expect((await t.cli(['init', '--agents', 'all'], { cwd: repo })).code).toBe(0);
    expect(bytes()).toEqual(afterFirst);

    // The authority changes (HERMES.md gone, CLAUDE.md now): the next init names it instead.
    rmSync(join(repo, 'HERMES.md'));
    writeFileSync(join(repo, 'CLAUDE.md'), '# Claude\n');
    expect((await t.cli(['init', '--agents', 'all'], { cwd: repo })).code).toBe(0);
    expect(names(), 'the settings did not follow the authority').toEqual({
      gemini: ['AGENTS.md', 'CONTEXT.md', 'CLAUDE.md'],
      codex: ['CONTEXT.md', 'CLAUDE.md'],
    });

    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(bytes()).toEqual(before);

    // Without lists of the user's: hermesd's own entries (Gemini CLI keeps GEMINI.md), out again byte for byte; edits since are kept.
    writeFileSync(join(repo, '.gemini/settings.json'), GEMINI);
    writeFileSync(join(repo, '.codex/config.toml'), CODEX);
    expect((await t.cli(['init', '--agents', 'all'], { cwd: repo })).code).toBe(0);
    expect(names()).toEqual({ gemini: ['GEMINI.md', 'CLAUDE.md'], codex: ['CLAUDE.md'] });
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(readFileSync(join(repo, '.gemini/settings.json'), 'utf8')).toBe(GEMINI);
    expect(readFileSync(join(repo, '.codex/config.toml'), 'utf8')).toBe(CODEX);
    writeFileSync(join(repo, '.codex/config.toml'), codexList);
    expect((await t.cli(['init', '--agents', 'codex'], { cwd: repo })).code).toBe(0);
    const toml = join(repo, '.codex/config.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8') + '\n[tui]\nnotifications = true\n');
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(readFileSync(toml, 'utf8'), "the user's fallback line did not come back as it was").toBe(codexList + '\n[tui]\nnotifications = true\n');
  });

  it('refuses a config it cannot read, naming the file, and writes nothing', async () => {
    writeFileSync(join(repo, '.cursor/hooks.json'), '{ "version": 1, "hooks": { ');
    const before = bytes();
    const r = await t.cli(['init', '--agents', 'all'], { cwd: repo });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.cursor/hooks.json is not valid JSON');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(bytes()).toEqual(before);
  });

  it('creates an agent folder that was not there when named, and removes it again', async () => {
    const bare = t.repo({ '.hermes/config.yaml': 'rules: []\n' });
    const none = await t.cli(['init', '--agents'], { cwd: bare });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('no agent folder here');
    expect((await t.cli(['init', '--agents', 'codex,cursor'], { cwd: bare })).code).toBe(0);
    expect(existsSync(join(bare, '.codex/config.toml'))).toBe(true);
    expect(existsSync(join(bare, '.cursor/hooks.json'))).toBe(true);
    expect((await t.cli(['init', '--uninstall'], { cwd: bare })).code).toBe(0);
    expect(existsSync(join(bare, '.codex'))).toBe(false);
    expect(existsSync(join(bare, '.cursor'))).toBe(false);
    expect(gitIn(t, bare, 'status', '--porcelain')).toBe('');
  });
});
