/**
 * `hermesd doctor` reaches the network only when a model endpoint is configured, and then only
 * that endpoint: with none, it said "reachable"/"unreachable" of the OpenAI API after a DNS
 * lookup nobody asked for. Every Node process of the run — the CLI, and the daemon it asks —
 * loads a preload (NODE_OPTIONS, here in the test only) that records each DNS lookup and each
 * TCP or TLS connection and refuses those not to the endpoint allowed; Unix sockets (the
 * daemon's) pass. git and the hook client are not Node: doctor runs `git version` and
 * `client -V` there, neither of which touches the network.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

type Check = { name: string; status: string; detail: string };
type Use = { pid: number; entry: string; kind: 'loaded' | 'dns.lookup' | 'net.connect' | 'tls.connect'; to?: string };

/** Records (and refuses, unless allowed) every use of the network by the process it is loaded into. */
const PRELOAD = `
const fs = require('node:fs'), net = require('node:net'), tls = require('node:tls'), dns = require('node:dns');
const log = process.env.NET_WATCH_LOG;
const allowed = (process.env.NET_WATCH_ALLOW || '').split(',').filter(Boolean);
const note = (kind, to) => fs.appendFileSync(log, JSON.stringify({ pid: process.pid, entry: process.argv[1] || '', kind, to }) + '\\n');
note('loaded');
const refusal = (what) => Object.assign(new Error('network use refused by the test: ' + what), { code: 'ECONNREFUSED' });
const target = (args) => {
  const [a, b] = args;
  if (a && typeof a === 'object') return a.path ? undefined : { host: a.host || 'localhost', port: a.port };
  if (typeof a === 'string' && isNaN(Number(a))) return undefined;
  return { host: typeof b === 'string' ? b : 'localhost', port: a };
};
for (const [mod, kind] of [[net, 'net.connect'], [tls, 'tls.connect']]) {
  const original = mod.connect;
  const watched = function (...args) {
    const t = target(args);
    if (!t) return original.apply(this, args);
    const to = t.host + ':' + t.port;
    note(kind, to);
    if (!allowed.includes(to)) throw refusal(kind + ' ' + to);
    return original.apply(this, args);
  };
  mod.connect = watched;
  if (mod === net) mod.createConnection = watched;
}
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  note('dns.lookup', host);
  if (allowed.some((a) => a.startsWith(host + ':'))) return lookup.call(this, host, ...rest);
  const cb = rest[rest.length - 1];
  process.nextTick(() => cb(refusal('dns.lookup ' + host)));
  return {};
};
`;

let t: TestEnv;
let repo: string;
let preload: string;
let runs = 0;

beforeAll(() => {
  t = makeEnv();
  repo = t.repo();
  preload = join(t.home, '..', 'net-watch.cjs');
  writeFileSync(preload, PRELOAD);
});
afterAll(async () => {
  await t.cleanup();
});

/** An environment whose Node processes are watched, writing to a log of their own; `allow`: the one endpoint they may reach. */
function watched(extra: NodeJS.ProcessEnv, allow: string[] = []): { env: NodeJS.ProcessEnv; uses: () => Use[] } {
  const log = join(t.home, '..', `net-${++runs}.jsonl`);
  const env = {
    // No model in the environment (the test environment's own is a dead local one).
    OPENAI_BASE_URL: undefined,
    OPENAI_API_KEY: undefined,
    NODE_OPTIONS: `--require ${preload}`,
    NET_WATCH_LOG: log,
    NET_WATCH_ALLOW: allow.join(','),
    ...extra,
  };
  return {
    env,
    uses: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Use)
        : [],
  };
}

const network = (uses: Use[]) => uses.filter((u) => u.kind !== 'loaded');
const loadedIn = (uses: Use[], entry: RegExp) => uses.some((u) => u.kind === 'loaded' && entry.test(u.entry));

async function doctor(env: NodeJS.ProcessEnv): Promise<{ code: number; model: Check; out: string }> {
  const r = await t.cli(['doctor', '--json'], { cwd: repo, env });
  const checks = r.json().checks as Check[];
  return { code: r.code, model: checks.find((c) => c.name === 'model')!, out: JSON.stringify(checks, null, 1) };
}

describe('doctor and the model endpoint', () => {
  it('no model configured, no daemon: nothing reaches the network, and the model line says none was contacted', async () => {
    const w = watched({});
    const d = await doctor(w.env);
    expect(loadedIn(w.uses(), /cli\/main\.js$/), 'the watch was not loaded into the CLI: this test would see nothing').toBe(true);
    expect(network(w.uses()), `doctor used the network with no model configured:\n${d.out}`).toEqual([]);
    expect(d.model.status).toBe('ok');
    expect(d.model.detail).toContain('no endpoint configured, none contacted');
  });

  it('no model configured, a daemon running: neither doctor nor the daemon it asks reaches the network', async () => {
    const w = watched({});
    expect((await t.cli(['start'], { cwd: repo, env: w.env })).code).toBe(0);
    try {
      const d = await doctor(w.env);
      expect(loadedIn(w.uses(), /daemon\/main\.js$/), 'the watch was not loaded into the daemon').toBe(true);
      expect(network(w.uses()), `doctor or its daemon used the network with no model configured:\n${d.out}`).toEqual([]);
      expect(d.model.detail).toContain('no endpoint configured, none contacted');
      expect(d.model.detail).toContain('as the daemon');
    } finally {
      await t.cli(['stop'], { cwd: repo });
    }
  });

  describe('a model configured', () => {
    let model: FakeModel;
    let endpoint: string;
    beforeAll(async () => {
      model = await startFakeModel([]);
      endpoint = `127.0.0.1:${model.port}`;
    });
    afterAll(async () => {
      await model.close();
    });

    it('in the environment: doctor contacts that endpoint and nothing else', async () => {
      const w = watched({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'k', HERMESD_MODEL: 'fake-model' }, [endpoint]);
      const d = await doctor(w.env);
      expect(d.model, d.out).toMatchObject({ status: 'ok' });
      const used = network(w.uses());
      expect(used.length, 'doctor did not contact the configured endpoint').toBeGreaterThan(0);
      expect(
        used.filter((u) => u.to !== endpoint),
        `doctor reached beyond ${endpoint}`,
      ).toEqual([]);
    });

    it('in $HERMES_HOME/config.yaml, asked through a running daemon: the daemon contacts that endpoint and nothing else', async () => {
      const home = join(t.home, '..', 'home-with-model');
      mkdirSync(home);
      writeFileSync(join(home, 'config.yaml'), `model:\n  baseUrl: ${model.url}\n  name: fake-model\n`);
      const w = watched({ HERMES_HOME: home }, [endpoint]);
      expect((await t.cli(['start'], { cwd: repo, env: w.env })).code).toBe(0);
      try {
        const d = await doctor(w.env);
        expect(d.model, d.out).toMatchObject({ status: 'ok' });
        expect(d.model.detail).toContain('as the daemon');
        const used = network(w.uses());
        expect(
          used.filter((u) => /daemon\/main\.js$/.test(u.entry)).length,
          `the daemon did not contact the configured endpoint: ${JSON.stringify(used)}`,
        ).toBeGreaterThan(0);
        expect(
          used.filter((u) => u.to !== endpoint),
          `doctor or its daemon reached beyond ${endpoint}`,
        ).toEqual([]);
      } finally {
        await t.cli(['stop'], { cwd: repo, env: { HERMES_HOME: home } });
      }
    });
  });
});
