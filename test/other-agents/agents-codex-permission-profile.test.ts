/**
 * Codex's own sandbox takes the protected paths: `hermesd init --agents codex` writes a Codex
 * permission profile (`:workspace` with the guard's files and the paths rules protect
 * read-only) into `.codex/config.toml` and makes it the default there, unless the project's
 * config or the user's already chooses Codex's sandbox. Where Codex runs that profile
 * (`CODEX_PERMISSION_PROFILE`), hermesd's rewrite runs a shell command as written; anywhere
 * else, in bubblewrap as before. The real Codex running the profile is in
 * agents-real-codex-end-to-end.test.ts; here, the files init writes and takes out again, and
 * the rewritten command run by bash as Codex runs it, with the real bubblewrap.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rewritten, runHook, toolHookCommand } from '../helpers/agents.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

const USER_TOML = `# Codex settings for this project
model = "gpt-5.5"   # the team's default

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
`;

const GEN = '  - id: generated-files\n    message: Run the generator.\n    protect: ["gen/**"]\n';
const LOCK = '  - id: lock\n    message: Do not edit the lock file.\n    protect: ["schema.lock"]\n';
const GLOB = '  - id: snapshots\n    message: Snapshots are recorded, not written.\n    protect: ["**/*.snap"]\n';

type Profile = { name: string; extends: string; readOnly: string[] };

describe("Codex's permission profile from hermesd init --agents codex", () => {
  let t: TestEnv;
  let repo: string;
  const toml = () => readFileSync(join(repo, '.codex/config.toml'), 'utf8');
  const profile = (): Profile | undefined => {
    const c = parse(toml()) as any;
    const name = c.default_permissions as string | undefined;
    if (!name?.startsWith('hermesd-')) return undefined;
    const p = c.permissions[name];
    const roots = p.filesystem[':workspace_roots'] as Record<string, string>;
    return { name, extends: p.extends, readOnly: Object.keys(roots).filter((k) => roots[k] === 'read') };
  };
  const init = async (rules: string) => {
    writeFileSync(join(repo, '.hermes/config.yaml'), `rules:\n${rules}`);
    const r = await t.cli(['init', '--agents', 'codex'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    return r;
  };

  beforeEach(() => {
    t = makeEnv();
    repo = t.repo({
      '.hermes/config.yaml': 'rules: []\n',
      'gen/a.ts': 'export const a = 1;\n',
      'src/app.ts': 'export const app = 1;\n',
      '.codex/config.toml': USER_TOML,
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("writes :workspace with the protected paths and hermesd's files read-only as the default, follows the rules at the next init, and gives the file back byte for byte", async () => {
    const first = await init(GEN + LOCK);
    const p = profile()!;
    expect(p.extends).toBe(':workspace');
    // What Codex's :workspace keeps read-only itself (a profile that extends it names them again), the guard's files, the rules' paths:
    // those there (each listed path costs every command Codex runs; one not there costs it more).
    expect(p.readOnly).toEqual(['.codex', '.git', '.hermes', 'gen']);
    expect(first.stdout).toContain(`hermesd's permission profile ${p.name}`);
    // Top-level keys go first (TOML takes none after a table); the user's TOML follows, unchanged, and hermesd's tables after it.
    const text = toml();
    expect(text.startsWith('# >>> hermesd, top-level keys')).toBe(true);
    expect(text).toContain(`\n# <<< hermesd, top-level keys <<<\n\n${USER_TOML}\n# >>> hermesd (added by`);
    expect((parse(text) as any).mcp_servers.docs).toEqual({ command: 'npx', args: ['-y', 'docs-mcp'] });

    // A rule's file there since, and a folder of a hook manager: the next init lists them.
    writeFileSync(join(repo, 'schema.lock'), 'locked\n');
    mkdirSync(join(repo, '.husky'));
    await init(GEN + LOCK);
    expect(profile()!.readOnly).toEqual(['.codex', '.git', '.hermes', '.husky', 'gen', 'schema.lock']);
    // A rule fewer: its path goes, and the profile follows under a new name (the name is its content), once.
    await init(GEN);
    const q = profile()!;
    expect(q.name).not.toBe(p.name);
    expect(q.readOnly).toEqual(['.codex', '.git', '.hermes', '.husky', 'gen']);
    expect(toml().split('default_permissions').length).toBe(2);
    expect(Object.keys((parse(toml()) as any).permissions)).toEqual([q.name]);
    // The same rules again: nothing changes.
    const again = await init(GEN);
    expect(again.stdout).toContain('their configs already had hermesd');

    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);
    expect(toml()).toBe(USER_TOML);

    // A line of the user's inside hermesd's top block (an edit since init): uninstall still finds the block by its markers.
    await init(GEN);
    writeFileSync(join(repo, '.codex/config.toml'), toml().replace('default_permissions =', '# reviewed\ndefault_permissions ='));
    const un = await t.cli(['init', '--uninstall'], { cwd: repo });
    expect(un.code, un.stderr).toBe(0);
    expect(toml()).toBe(USER_TOML);
  });

  it("leaves Codex's sandbox as the project's config or the user's chooses it, and says so", async () => {
    writeFileSync(join(repo, '.codex/config.toml'), `sandbox_mode = "workspace-write"\n${USER_TOML}`);
    const project = await init(GEN);
    expect(profile()).toBeUndefined();
    expect((parse(toml()) as any).permissions).toBeUndefined();
    expect(project.stdout).toContain("your config chooses Codex's sandbox (sandbox_mode in .codex/config.toml)");
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);

    // The older settings' table alone (writable roots of the user's): they do not compose with a profile, so none is made the default.
    writeFileSync(join(repo, '.codex/config.toml'), `${USER_TOML}\n[sandbox_workspace_write]\nwritable_roots = ["/tmp/build"]\n`);
    const older = await init(GEN);
    expect(profile()).toBeUndefined();
    expect(older.stdout).toContain('sandbox_workspace_write in .codex/config.toml');
    expect((await t.cli(['init', '--uninstall'], { cwd: repo })).code).toBe(0);

    writeFileSync(join(repo, '.codex/config.toml'), USER_TOML);
    const home = t.env.CODEX_HOME!;
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.toml'), 'default_permissions = ":read-only"\n');
    const user = await init(GEN);
    expect(profile()).toBeUndefined();
    expect(user.stdout).toContain(`default_permissions in ${join(home, 'config.toml')}`);
    // Its own hooks and MCP server are there all the same.
    expect((parse(toml()) as any).mcp_servers.hermesd).toBeDefined();
  });

  it('runs a shell command as written where Codex runs the profile, and in bubblewrap anywhere else', async () => {
    await init(GEN);
    const p = profile()!;
    const pre = async (command: string, cwd = repo) =>
      rewritten(
        'codex',
        await runHook(t, toolHookCommand(repo, 'codex', 'PreToolUse', 'Bash'), {
          cwd,
          payload: {
            session_id: 's1',
            turn_id: '1',
            transcript_path: null,
            cwd,
            model: 'gpt-5.5',
            permission_mode: 'default',
            hook_event_name: 'PreToolUse',
            tool_name: 'Bash',
            tool_input: { command },
            tool_use_id: 'call_1',
          },
        }),
      );
    // A write hermesd cannot read from the command's text, and a word of bash syntax.
    const command = 'x=(gen src); f=${x[0]}/a.ts; echo changed > $f && echo wrote-${x[1]}';
    const line = (await pre(command))!;
    // As written, with the record of refused writes' environment (guard/refused-preload.ts) and the check for a process left in the background.
    expect(line).toMatch(new RegExp(`= ${p.name} \\]; then trap .* EXIT; LD_PRELOAD=\\S+ HERMESD_REFUSED=\\S+ ASAN_OPTIONS=\\S+ eval `));
    const bash = (profileName?: string) =>
      spawnSync('/bin/bash', ['-c', line], {
        cwd: repo,
        env: { ...t.env, ...(profileName ? { CODEX_PERMISSION_PROFILE: profileName } : {}) },
        encoding: 'utf8',
      });

    // No Codex sandbox here: with the variable set, the command runs as written (Codex's sandbox would hold gen/ read-only).
    const asWritten = bash(p.name);
    expect(asWritten.stdout).toBe('wrote-src\n');
    expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8')).toBe('changed\n');
    writeFileSync(join(repo, 'gen/a.ts'), 'export const a = 1;\n');
    // Another profile, or none: the confine script, and gen/ read-only at the write.
    for (const other of [undefined, ':workspace', `${p.name}x`]) {
      const r = bash(other);
      expect(r.stderr, String(other)).toMatch(/read-only file system/i);
      expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8')).toBe('export const a = 1;\n');
    }

    // The profile taken out of the config by hand (default_permissions gone): read as written, it holds nothing, so bubblewrap again.
    const config = toml();
    writeFileSync(join(repo, '.codex/config.toml'), config.replace(/^default_permissions = .*\n/m, ''));
    expect(await pre('ls')).toMatch(/^\/bin\/sh '[^']+\/hermesd\/confine\//);
    writeFileSync(join(repo, '.codex/config.toml'), config);
    expect(await pre('ls')).toContain('CODEX_PERMISSION_PROFILE');

    // A session started below the root: Codex takes the profile's paths from there (src/gen, src/.git…), so they hold nothing of the root's.
    expect(await pre('ls', join(repo, 'src'))).toMatch(/^\/bin\/sh '[^']+\/hermesd\/confine\//);

    // A path the confinement makes read-only that the profile as written does not list (a protected file there since init):
    // the profile does not hold everything, so no command skips bubblewrap, until init lists it.
    await init(GEN + LOCK);
    expect(await pre('ls')).toContain('CODEX_PERMISSION_PROFILE');
    writeFileSync(join(repo, 'schema.lock'), 'locked\n');
    expect(await pre('ls')).toMatch(/^\/bin\/sh '[^']+\/hermesd\/confine\//);
    await init(GEN + LOCK);
    expect(await pre('ls')).toContain('CODEX_PERMISSION_PROFILE');
    // A protected file the profile cannot name (a glob's match): likewise.
    writeFileSync(join(repo, 'src/app.snap'), 'recorded\n');
    await init(GEN + GLOB);
    const withGlob = (await pre('echo changed > $(echo src/app.snap)'))!;
    expect(withGlob).not.toContain('CODEX_PERMISSION_PROFILE');
    expect(withGlob).toMatch(/^\/bin\/sh '[^']+\/hermesd\/confine\//);
  });
});
