import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configOf, configServiceOf } from '../../src/server/services/index.js';
import { DaemonContext } from '../../src/server/daemon-context.js';
import { silentLogger } from '../../src/storage/log.js';
import { resolvePaths } from '../../src/paths/index.js';
import { ConfigError } from '../../src/errors/index.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

describe('configOf(ctx): one cached config per daemon, reloaded on change', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('caches, reloads on config-changed and on a file change, and remembers an invalid file as its error', () => {
    const repo = t.repo();
    const ctx = new DaemonContext(resolvePaths(repo, t.env), t.home, 'test', silentLogger, { HERMESD_MODEL: 'from-env' });
    const first = configOf(ctx);
    expect(configOf(ctx)).toBe(first); // same object while nothing changed
    expect(first.model.name).toBe('from-env');
    expect(ctx.statusExtras.get('config')!()).toEqual({ ok: true });

    mkdirSync(join(repo, '.hermes'));
    const file = join(repo, '.hermes', 'config.yaml');
    writeFileSync(file, 'memory:\n  userCharLimit: 500\n');
    ctx.events.emit('config-changed');
    const second = configOf(ctx);
    expect(second).not.toBe(first);
    expect(second.memory.userCharLimit).toBe(500);

    // Without any event: the stat stamp notices the edit.
    writeFileSync(file, 'memory:\n  userCharLimit: seven\n');
    expect(() => configOf(ctx)).toThrow(ConfigError);
    expect(() => configOf(ctx)).toThrow(`${file}:2:`);
    expect(ctx.statusExtras.get('config')!()).toMatchObject({ ok: false, error: expect.stringContaining('memory.userCharLimit') });

    writeFileSync(file, 'memory:\n  userCharLimit: 700\n');
    expect(configOf(ctx).memory.userCharLimit).toBe(700);
    expect(configServiceOf(ctx).loaded().origins['memory.userCharLimit']).toBe('repository');
  });
});
