/**
 * Seed §2.1 across agents: a memory written by another agent through `hermesd mcp` is in the
 * frozen snapshot of hermesd's own next session — the system prompt the (scripted) model
 * receives from `hermesd run` carries the MEMORY.md and USER.md blocks with those entries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';
import { connectMcp, json } from '../helpers/mcp.js';

describe('a memory write through MCP', () => {
  let t: TestEnv;
  let model: FakeModel;
  beforeEach(async () => {
    t = makeEnv();
    model = await startFakeModel();
  });
  afterEach(async () => {
    await t.cleanup();
    await model.close();
  });

  it('shows in the memory block of the system prompt of hermesd’s next session', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    // The MCP server starts the daemon, so it passes the model endpoint on to it.
    const mcp = await connectMcp(t, repo, { name: 'claude-code', env });
    try {
      json(await mcp.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'memory', content: 'The integration tests need Docker running' } }));
      json(await mcp.client.callTool({ name: 'memory', arguments: { action: 'add', target: 'user', content: 'The user reviews diffs before every commit' } }));
    } finally {
      await mcp.close();
    }

    model.push({ content: 'Done.' });
    const r = await t.cli(['run', 'run the integration tests', '--json'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    expect(model.requests).toHaveLength(1);
    const system = model.requests[0]!.messages[0]!;
    expect(system.role).toBe('system');
    const prompt = String(system.content);
    expect(prompt).toMatch(/MEMORY \[\d+% — \d+\/2,200 chars\]\n═+\nThe integration tests need Docker running/);
    expect(prompt).toMatch(/USER \[\d+% — \d+\/1,375 chars\]\n═+\nThe user reviews diffs before every commit/);
  });
});
