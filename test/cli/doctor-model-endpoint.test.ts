import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel } from '../helpers/fake-model.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

type Check = { name: string; status: string; detail: string; fix?: string };

describe('doctor checks the model endpoint', () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(() => {
    t = makeEnv();
    repo = t.repo();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  const modelLine = async (env: NodeJS.ProcessEnv): Promise<Check> => {
    const r = await t.cli(['doctor', '--json'], { cwd: repo, env });
    return (r.json().checks as Check[]).find((c) => c.name === 'model')!;
  };

  it('ok when the endpoint answers and lists the model; warn when the model is not listed', async () => {
    const model = await startFakeModel([]);
    try {
      expect(await modelLine({ OPENAI_BASE_URL: model.url, HERMESD_MODEL: 'fake-model' })).toMatchObject({ status: 'ok' });
      const other = await modelLine({ OPENAI_BASE_URL: model.url, HERMESD_MODEL: 'no-such-model' });
      expect(other.status).toBe('warn');
      expect(other.fix).toContain('fake-model');
    } finally {
      await model.close();
    }
  });

  it('fail with the fix when the key is refused; warn, quickly, when nothing answers', async () => {
    const refusing = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad key"}}');
    });
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1`;
      const refused = await modelLine({ OPENAI_BASE_URL: url });
      expect(refused.status).toBe('fail');
      expect(refused.fix).toContain('OPENAI_API_KEY');
      const r = await t.cli(['doctor'], { cwd: repo, env: { OPENAI_BASE_URL: url } });
      expect(r.code).toBe(1);
    } finally {
      refusing.close();
    }
    const started = Date.now();
    const down = await modelLine({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(down.status).toBe('warn');
    expect(down.detail).toContain('unreachable');
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
