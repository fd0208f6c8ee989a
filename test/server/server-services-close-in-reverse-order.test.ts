import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonUnavailable } from '../../src/errors/index.js';
import { resolvePaths } from '../../src/paths/index.js';
import { DaemonContext } from '../../src/server/daemon-context.js';
import { fileLogger } from '../../src/storage/log.js';
import { SERVICE_ORDER, Services } from '../../src/server/services/index.js';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

/** The `order` of the last "services closed" line in a daemon log. */
function closeOrder(logFile: string): string[] {
  const lines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes(' services closed '));
  expect(lines.length).toBeGreaterThan(0);
  return JSON.parse(lines.at(-1)!.slice(lines.at(-1)!.indexOf('{'))).order;
}

describe('the composition root closes services in the reverse of their build order', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('whatever order requests built them in, and builds nothing once closing', async () => {
    const orders: string[][] = [];
    for (const touch of [
      (s: Services) => [s.agents, s.agentSessions, s.hooks, s.tasks, s.sessions, s.skills, s.watcher],
      (s: Services) => [s.watcher, s.skills, s.sessions, s.tasks, s.hooks, s.agentSessions, s.agents],
    ]) {
      const repo = t.repo();
      const logFile = join(repo, '.git', 'services.log');
      const ctx = new DaemonContext(resolvePaths(repo, t.env), t.home, 'test', fileLogger(logFile), t.env);
      const services = new Services(ctx);
      // Only the config and the judging of agents' tool calls are there before the rest of the code loads.
      expect(() => services.sessions).toThrow(/before Services.loaded\(\)/);
      await services.loaded();
      touch(services);
      await services.close();
      orders.push(closeOrder(logFile));
      // A late request must not reopen what shutdown closed.
      expect(() => services.prompt).toThrow(DaemonUnavailable);
    }
    const expected = [...SERVICE_ORDER].reverse().filter((n) => ['agents', 'agentSessions', 'hooks', 'tasks', 'watcher', 'skills', 'sessions'].includes(n));
    expect(orders).toEqual([expected, expected]);
    // The hooks drain before the tasks they start; tasks record their end before SessionDB closes.
    expect(expected.indexOf('hooks')).toBeLessThan(expected.indexOf('tasks'));
    expect(expected.indexOf('tasks')).toBeLessThan(expected.indexOf('sessions'));
    // Other agents' transcripts finish their ingest before SessionDB closes.
    expect(expected.indexOf('agentSessions')).toBeLessThan(expected.indexOf('sessions'));
  });

  it('a real daemon stopped over the API closes what its requests built, in that order', async () => {
    const repo = t.repo();
    const status = (await t.cli(['start', '--json'], { cwd: repo })).json();
    const client = new DaemonClient(status.socket);
    // The task runner first, SessionDB after it: the tasks still close before SessionDB.
    await client.call('GET', '/v1/tasks');
    await client.call('GET', '/v1/sessions');
    const stopped = await t.cli(['stop'], { cwd: repo });
    expect(stopped.code, stopped.stderr).toBe(0);
    const order = closeOrder(join(repo, '.git', 'hermesd', 'daemon.log'));
    expect(order.indexOf('tasks')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('tasks')).toBeLessThan(order.indexOf('sessions'));
    expect(order.indexOf('hooks')).toBeLessThan(order.indexOf('tasks'));
    expect(order).toEqual([...SERVICE_ORDER].reverse().filter((n) => order.includes(n)));
  });
});
