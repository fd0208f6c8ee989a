/**
 * The MCP resources of `hermesd mcp` through the SDK client: every resource read (the
 * authority files in force, the memory snapshot, the skill index, each skill's SKILL.md and
 * supporting files byte for byte), change notifications when the daemon's watcher sees a
 * change (updated for subscribed URIs, list_changed for new files), two clients on one daemon
 * at once, and a daemon stopped under a running server.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, makeEnv, waitFor, writeFiles, type TestEnv } from '../helpers/env.js';
import { connectMcp, json, type McpSession } from '../helpers/mcp.js';
import { skillMd } from '../helpers/skills.js';

const FAKE_GH = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

function textOf(r: { contents: Array<{ text?: unknown; blob?: unknown }> }): string {
  return String(r.contents[0]?.text ?? '');
}

async function rejectsWith(p: Promise<unknown>, code: number, pattern: RegExp): Promise<void> {
  await expect(p).rejects.toSatisfy((err: unknown) => err instanceof McpError && err.code === code && pattern.test(err.message));
}

describe('hermesd mcp resources and notifications', () => {
  let t: TestEnv;
  let repo: string;
  let a: McpSession;

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({
      'AGENTS.md': '# Rules\nUse pnpm, never npm.\n',
      'packages/web/AGENTS.md': '# Web\nComponents live in src/components.\n',
      '.hermes/skills/release/SKILL.md': skillMd('release', 'Cut a release of this repository.'),
      '.hermes/skills/release/references/checklist.md': '1. bump\n2. tag\n',
      '.hermes/skills/release/references/ci.md': `CI reads the token from GITHUB_TOKEN=${FAKE_GH}\n`,
    });
    writeFiles(repo, { '.hermes/skills/release/assets/logo.png': PNG });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'logo');
    a = await connectMcp(t, repo, { name: 'client-a' });
  });
  afterAll(async () => {
    await a?.close();
    await t.cleanup();
  });

  it('lists and reads every resource through the daemon', async () => {
    json(await a.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'memory', content: 'CI runs on GitHub Actions' } }));
    json(
      await a.client.callTool({
        name: 'skill_manage',
        arguments: { action: 'create', name: 'deploy', content: skillMd('deploy', 'Deploy the app to staging.') },
      }),
    );
    json(
      await a.client.callTool({
        name: 'skill_manage',
        arguments: { action: 'write_file', name: 'deploy', file_path: 'references/hosts.md', file_content: '# Hosts\nstaging.example\n' },
      }),
    );

    const { resources } = await a.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(
      [
        'hermesd://agents',
        'hermesd://authority',
        'hermesd://authority/AGENTS.md',
        'hermesd://memory',
        'hermesd://skills',
        'hermesd://skills/deploy/SKILL.md',
        'hermesd://skills/deploy/references/hosts.md',
        'hermesd://skills/release/SKILL.md',
        'hermesd://skills/release/assets/logo.png',
        'hermesd://skills/release/references/checklist.md',
        'hermesd://skills/release/references/ci.md',
      ].sort(),
    );
    const { resourceTemplates } = await a.client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual(['hermesd://authority/{+path}', 'hermesd://skills/{name}/{+path}']);

    const authority = await a.client.readResource({ uri: 'hermesd://authority' });
    expect(authority.contents[0]).toMatchObject({ uri: 'hermesd://authority', mimeType: 'text/markdown' });
    expect(textOf(authority)).toContain('## AGENTS.md\n\n# Rules\nUse pnpm, never npm.');
    expect(textOf(await a.client.readResource({ uri: 'hermesd://authority/AGENTS.md' }))).toBe('# Rules\nUse pnpm, never npm.');

    const memory = textOf(await a.client.readResource({ uri: 'hermesd://memory' }));
    expect(memory).toMatch(/MEMORY \[\d+% — \d+\/2,200 chars\]/);
    expect(memory).toContain('CI runs on GitHub Actions');

    const index = textOf(await a.client.readResource({ uri: 'hermesd://skills' }));
    expect(index).toContain('deploy');
    expect(index).toContain('Cut a release of this repository.');

    // Files as stored, byte for byte (SKILL.md with its front matter, not the parsed view).
    expect(textOf(await a.client.readResource({ uri: 'hermesd://skills/deploy/SKILL.md' }))).toBe(
      readFileSync(join(t.home, 'skills', 'deploy', 'SKILL.md'), 'utf8'),
    );
    expect(textOf(await a.client.readResource({ uri: 'hermesd://skills/deploy/references/hosts.md' }))).toBe('# Hosts\nstaging.example\n');
    expect(textOf(await a.client.readResource({ uri: 'hermesd://skills/release/references/checklist.md' }))).toBe('1. bump\n2. tag\n');
    // Secret-shaped values are redacted, as in skill_view's result.
    const ci = textOf(await a.client.readResource({ uri: 'hermesd://skills/release/references/ci.md' }));
    expect(ci).toBe('CI reads the token from GITHUB_TOKEN=[REDACTED:github-token]\n');
    const viewed = json(await a.client.callTool({ name: 'skill_view', arguments: { name: 'release', file_path: 'references/ci.md' } }));
    expect(viewed.content).toBe(ci);
    const logo = await a.client.readResource({ uri: 'hermesd://skills/release/assets/logo.png' });
    expect(logo.contents[0]).toMatchObject({ mimeType: 'application/octet-stream', blob: PNG.toString('base64') });

    await rejectsWith(a.client.readResource({ uri: 'hermesd://skills/nope/SKILL.md' }), -32002, /No skill named "nope"/);
    await rejectsWith(a.client.readResource({ uri: 'hermesd://skills/deploy/references/missing.md' }), -32002, /has no file references\/missing\.md/);
    await rejectsWith(a.client.readResource({ uri: 'hermesd://skills/deploy/../../memories/MEMORY.md' }), -32002, /./);
    await rejectsWith(a.client.readResource({ uri: 'hermesd://authority/README.md' }), -32002, /not an authority file in force/);
    await rejectsWith(a.client.readResource({ uri: 'file:///etc/passwd' }), -32602, /not found/);
  });

  it('the authority chain of a subdirectory server: --repo packages/web serves both AGENTS.md files', async () => {
    const sub = await connectMcp(t, join(repo, 'packages/web'), { name: 'client-sub' });
    try {
      const list = (await sub.client.listResources()).resources.map((r) => r.uri).filter((u) => u.startsWith('hermesd://authority/'));
      expect(list).toEqual(['hermesd://authority/AGENTS.md', 'hermesd://authority/packages/web/AGENTS.md']);
      expect(textOf(await sub.client.readResource({ uri: 'hermesd://authority/packages/web/AGENTS.md' }))).toBe('# Web\nComponents live in src/components.');
      expect(json(await sub.client.callTool({ name: 'context', arguments: {} })).authority).toEqual(['../../AGENTS.md', 'AGENTS.md']);
    } finally {
      await sub.close();
    }
  });

  it('notifies subscribers of what the watcher sees change, and only of that; list_changed for new files', async () => {
    await a.client.listResources();
    for (const uri of ['hermesd://memory', 'hermesd://authority', 'hermesd://agents', 'hermesd://skills/deploy/SKILL.md', 'hermesd://skills'])
      await a.client.subscribeResource({ uri });
    a.updated.length = 0;
    const listChangedBefore = a.listChanged;

    // A write by another client of the store (the CLI, through the daemon).
    expect((await t.cli(['memory', 'add', 'Staging deploys need VPN'], { cwd: repo })).code).toBe(0);
    await waitFor(() => a.updated.includes('hermesd://memory'));

    // A hand edit of the authority file.
    writeFileSync(join(repo, 'AGENTS.md'), '# Rules\nUse pnpm 9, never npm.\n');
    await waitFor(() => a.updated.includes('hermesd://authority'));
    expect(textOf(await a.client.readResource({ uri: 'hermesd://authority/AGENTS.md' }))).toBe('# Rules\nUse pnpm 9, never npm.');

    // Another agent's own instruction file (not the authority): what hermesd://agents shows changed
    // (the edit of AGENTS.md above changed no command, so hermesd://agents had no news then).
    const agentsUpdates = () => a.updated.filter((u) => u === 'hermesd://agents').length;
    const before = agentsUpdates();
    writeFileSync(join(repo, 'GEMINI.md'), '# Gemini\nRun the tests with `yarn test`.\n');
    await waitFor(() => agentsUpdates() > before).catch(() => {
      throw new Error("hermesd://agents subscribers were not told that GEMINI.md (an agent's own instruction file) changed");
    });
    expect(
      JSON.parse(textOf(await a.client.readResource({ uri: 'hermesd://agents' }))).agents.find((g: { agent: string }) => g.agent === 'gemini').reads,
    ).toContain('GEMINI.md');

    // A skill patched through MCP: its SKILL.md and the index (the description changed).
    json(
      await a.client.callTool({
        name: 'skill_manage',
        arguments: { action: 'patch', name: 'deploy', old_string: 'Deploy the app to staging.', new_string: 'Deploy the app to staging or production.' },
      }),
    );
    await waitFor(() => a.updated.includes('hermesd://skills/deploy/SKILL.md') && a.updated.includes('hermesd://skills'));
    expect(a.updated.filter((u) => u === 'hermesd://memory')).toHaveLength(1);
    expect(a.listChanged).toBe(listChangedBefore);

    // A new supporting file is a new resource.
    json(
      await a.client.callTool({
        name: 'skill_manage',
        arguments: { action: 'write_file', name: 'deploy', file_path: 'scripts/check.sh', file_content: 'echo ok\n' },
      }),
    );
    await waitFor(() => a.listChanged > listChangedBefore);
    expect((await a.client.listResources()).resources.map((r) => r.uri)).toContain('hermesd://skills/deploy/scripts/check.sh');

    await a.client.unsubscribeResource({ uri: 'hermesd://memory' });
    a.updated.length = 0;
    expect((await t.cli(['memory', 'add', 'Releases are tagged vX.Y.Z'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, 'AGENTS.md'), '# Rules\nUse pnpm 10.\n');
    await waitFor(() => a.updated.includes('hermesd://authority'));
    expect(a.updated).not.toContain('hermesd://memory');
    await rejectsWith(a.client.subscribeResource({ uri: 'https://example.com/x' }), -32602, /serves no resource/);
    expect(a.errors).toEqual([]);
  });

  it('two clients at once: concurrent writes both land, both are notified, one daemon serves both', async () => {
    const b = await connectMcp(t, repo, { name: 'client-b' });
    try {
      await Promise.all([a.client.subscribeResource({ uri: 'hermesd://memory' }), b.client.subscribeResource({ uri: 'hermesd://memory' })]);
      a.updated.length = 0;
      const [ra, rb] = await Promise.all([
        a.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'user', content: 'Prefers small commits' } }),
        b.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'user', content: 'Writes commit messages in English' } }),
      ]);
      expect(ra.isError ?? false).toBe(false);
      expect(rb.isError ?? false).toBe(false);
      const user = readFileSync(join(t.home, 'memories', 'USER.md'), 'utf8');
      expect(user).toContain('Prefers small commits');
      expect(user).toContain('Writes commit messages in English');
      await waitFor(() => a.updated.includes('hermesd://memory') && b.updated.includes('hermesd://memory'));

      const [la, lb] = await Promise.all([
        a.client.callTool({ name: 'skills_list', arguments: {} }),
        b.client.callTool({ name: 'skills_list', arguments: {} }),
      ]);
      expect(json(la)).toEqual(json(lb));
      // The daemon client A started is the one both talk to; B found it.
      const status = (await t.cli(['status', '--json'], { cwd: repo })).json();
      expect(a.stderr()).toContain(`started the daemon of ${repo} (pid ${status.pid})`);
      expect(b.stderr()).not.toContain('started the daemon');
    } finally {
      await b.close();
    }
    // The other client is unaffected by its neighbour leaving.
    expect(json(await a.client.callTool({ name: 'skills_list', arguments: {} })).skills.length).toBeGreaterThan(0);
  });

  it('a daemon stopped under the server is started again by the next call, and notifications resume', async () => {
    const before = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    const list = json(await a.client.callTool({ name: 'skills_list', arguments: {} }));
    expect(list.skills.length).toBeGreaterThan(0);
    const after = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    expect(after).not.toBe(before);
    expect(a.stderr()).toContain(`started the daemon of ${repo} (pid ${after})`);

    await a.client.subscribeResource({ uri: 'hermesd://memory' });
    a.updated.length = 0;
    expect((await t.cli(['memory', 'add', 'Staging is rebuilt nightly'], { cwd: repo })).code).toBe(0);
    await waitFor(() => a.updated.includes('hermesd://memory'));
  });

  it('a client that lists first is answered without the SDK server, as it answers, and hears list_changed before any other call', async () => {
    const c = await connectMcp(t, repo, { name: 'client-c' });
    try {
      const first = await c.client.listResources();
      // The front answered (src/mcp/line.ts): the SDK server says "serving" when it loads.
      expect(c.stderr()).not.toContain('serving');
      expect(first.resources.map((r) => r.uri)).toContain('hermesd://skills/release/references/checklist.md');

      // A file added to a project skill by hand: the line follows the daemon's events from its first call.
      const added = 'hermesd://skills/release/references/rollback.md';
      writeFiles(repo, { '.hermes/skills/release/references/rollback.md': '# Rollback\n' });
      await waitFor(() => c.listChanged > 0);
      expect(c.stderr()).not.toContain('serving');

      // A call loads the SDK server; its list is the front's, with the new file.
      json(await c.client.callTool({ name: 'skills_list', arguments: {} }));
      expect(c.stderr()).toContain('serving');
      const second = await c.client.listResources();
      expect(second.resources.filter((r) => r.uri !== added)).toEqual(first.resources);
      expect(second.resources.find((r) => r.uri === added)).toMatchObject({
        name: 'release/references/rollback.md',
        title: 'Skill release: references/rollback.md',
        description: expect.any(String),
      });
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
