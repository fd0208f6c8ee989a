/**
 * The MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned, installed into the test
 * cache of test/helpers/npm-cache.ts: its engines ask for Node 22, so it stays out of `npm ci`)
 * against `hermesd mcp`, started from an `.mcp.json`-shaped config whose entry is what
 * mcpLaunch() returns (this machine's node and CLI; the committed registrations of
 * `hermesd init --agents` run the same server through `.hermes/mcp`). Another client
 * nobody here wrote lists and calls the tools and reads the resources.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { INSTALL_TIMEOUT_MS, npmCached } from '../helpers/npm-cache.js';
import { builtLaunch } from '../helpers/mcp.js';
import { skillMd } from '../helpers/skills.js';

const INSPECTOR_PIN = { pkg: '@modelcontextprotocol/inspector', version: '1.0.3' };
let INSPECTOR = '';

type Run = { code: number; stdout: string; stderr: string; json: () => any };

describe('the MCP Inspector CLI against hermesd mcp', () => {
  let t: TestEnv;
  let repo: string;
  let config: string;

  beforeAll(async () => {
    INSPECTOR = join(await npmCached(INSPECTOR_PIN), 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
    t = makeEnv();
    repo = t.repo({
      'CLAUDE.md': '# Claude rules\nRun the linter before committing.\n',
      '.hermes/skills/lint/SKILL.md': skillMd('lint', 'Lint the repository.'),
    });
    const { mcpLaunch } = await builtLaunch();
    const launch = mcpLaunch({ repo, env: t.env });
    expect(launch.env).toEqual({ HERMES_HOME: t.home, HERMESD_SOCKET_DIR: t.socketDir });
    config = join(t.home, '..', 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { hermesd: { command: launch.command, args: launch.args, env: launch.env } } }, null, 2));
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(async () => {
    await t.cleanup();
  });

  const inspect = (...args: string[]): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [INSPECTOR, '--cli', '--config', config, '--server', 'hermesd', ...args], { cwd: repo, env: t.env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) });
      });
    });

  it('lists the tools and calls them, a refusal included', async () => {
    const list = await inspect('--method', 'tools/list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json().tools.map((x: { name: string }) => x.name)).toEqual([
      'memory',
      'session_search',
      'skills_list',
      'skill_view',
      'skill_manage',
      'remember',
      'check',
      'context',
    ]);

    const add = await inspect(
      '--method',
      'tools/call',
      '--tool-name',
      'memory',
      '--tool-arg',
      'action=add',
      '--tool-arg',
      'target=memory',
      '--tool-arg',
      'content=Lint with eslint --max-warnings 0',
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.json().isError ?? false).toBe(false);
    expect(JSON.parse(add.json().content[0].text)).toMatchObject({ success: true });

    const refused = await inspect('--method', 'tools/call', '--tool-name', 'skill_manage', '--tool-arg', 'action=delete', '--tool-arg', 'name=lint');
    expect(refused.code).toBe(0);
    expect(refused.json()).toMatchObject({ isError: true });
    expect(refused.json().content[0].text).toMatch(/"lint" is a project skill .* read-only/);
  });

  it('lists and reads the resources', async () => {
    const list = await inspect('--method', 'resources/list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json().resources.map((r: { uri: string }) => r.uri)).toEqual(
      expect.arrayContaining([
        'hermesd://authority',
        'hermesd://authority/CLAUDE.md',
        'hermesd://memory',
        'hermesd://skills',
        'hermesd://skills/lint/SKILL.md',
      ]),
    );
    const memory = await inspect('--method', 'resources/read', '--uri', 'hermesd://memory');
    expect(memory.json().contents[0].text).toContain('Lint with eslint --max-warnings 0');
    const skill = await inspect('--method', 'resources/read', '--uri', 'hermesd://skills/lint/SKILL.md');
    expect(skill.json().contents[0].text).toBe(skillMd('lint', 'Lint the repository.'));
  });
});
