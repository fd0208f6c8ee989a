/**
 * Every client waits for `resources/list` before its first model request, so `hermesd mcp`
 * answers it without a round trip to the daemon: with the list this repository's last session
 * was given (kept in the daemon's private runtime folder), then asks the daemon off the
 * client's path and sends `notifications/resources/list_changed` when the list moved. The first
 * session ever asks the daemon. Driven through the official MCP SDK client.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/paths/index.js';
import { makeEnv } from '../helpers/env.js';
import { connectMcp } from '../helpers/mcp.js';

describe("resources/list without the daemon on the client's path", () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('the next session is answered from the kept list with no daemon running, and told when the list moved', async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    const paths = resolvePaths(repo, t.env);
    const kept = join(paths.runtimeDir, 'mcp-resources.json');
    // The first session: no kept list, the daemon answers (and the list is kept).
    const first = await connectMcp(t, repo, { name: 'first' });
    const live = (await first.client.listResources()).resources.map((r) => r.uri).sort();
    await first.close();
    expect(live, 'the first list (from the daemon) has no authority resource').toContain('hermesd://authority/AGENTS.md');
    for (let i = 0; i < 50 && !existsSync(kept); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(kept), 'the list was not kept in the runtime folder').toBe(true);

    // No daemon runs now: the list comes from what was kept, before any daemon is reachable.
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    expect(existsSync(paths.socket), 'the daemon did not stop').toBe(false);
    const second = await connectMcp(t, repo, { name: 'second' });
    const changed: string[] = [];
    second.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed.push('list_changed'));
    const listed = (await second.client.listResources()).resources.map((r) => r.uri).sort();
    const socketAtAnswer = existsSync(paths.socket);
    expect(socketAtAnswer, 'a daemon was listening before the list was answered: the list waited for it').toBe(false);
    expect(listed, 'the kept list is not what the daemon listed').toEqual(live);
    await second.close();

    // The list moves (a skill appears under the repository): the kept list is stale, the session is told.
    writeFileSync(join(repo, 'CLAUDE.md'), '# Claude\n');
    const staleKept = readFileSync(kept, 'utf8');
    const stale = JSON.parse(staleKept) as { list: { resources: Array<{ uri: string }> } };
    stale.list.resources = stale.list.resources.filter((r) => r.uri !== 'hermesd://authority/AGENTS.md');
    writeFileSync(kept, JSON.stringify(stale), { mode: 0o600 });
    const third = await connectMcp(t, repo, { name: 'third' });
    const told: string[] = [];
    third.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void told.push('list_changed'));
    const fromKept = (await third.client.listResources()).resources.map((r) => r.uri);
    expect(fromKept, 'the third session was not answered from the kept list').not.toContain('hermesd://authority/AGENTS.md');
    for (let i = 0; i < 100 && told.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(told, 'the session answered from a stale list was not told the list changed').toEqual(['list_changed']);
    const relisted = (await third.client.listResources()).resources.map((r) => r.uri);
    expect(relisted, "after list_changed the list is the daemon's").toContain('hermesd://authority/AGENTS.md');
    await third.close();
  }, 120_000);

  it('a kept list in a folder others can write is not trusted', async () => {
    const repo = t.repo({ 'AGENTS.md': '# Rules\nUse pnpm.\n' });
    const paths = resolvePaths(repo, t.env);
    const s1 = await connectMcp(t, repo, { name: 'first' });
    await s1.client.listResources();
    await s1.close();
    const kept = join(paths.runtimeDir, 'mcp-resources.json');
    for (let i = 0; i < 50 && !existsSync(kept); i++) await new Promise((r) => setTimeout(r, 100));
    const forged = JSON.parse(readFileSync(kept, 'utf8')) as { list: { resources: Array<{ uri: string; name: string }> } };
    forged.list.resources.push({ uri: 'hermesd://forged', name: 'forged' });
    writeFileSync(kept, JSON.stringify(forged));
    const { chmodSync } = await import('node:fs');
    chmodSync(paths.runtimeDir, 0o777);
    try {
      const s2 = await connectMcp(t, repo, { name: 'second' });
      const uris = (await s2.client.listResources()).resources.map((r) => r.uri);
      await s2.close();
      expect(uris, 'a list kept in a folder others can write was served').not.toContain('hermesd://forged');
    } finally {
      chmodSync(paths.runtimeDir, 0o700);
    }
  }, 120_000);
});
