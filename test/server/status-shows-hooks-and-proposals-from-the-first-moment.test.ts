/**
 * `hermesd status` always prints its hooks and proposals lines: a daemon answers status from its
 * first moment, before the services that report those have started (they start once the first
 * questions are answered, up to 2 s later), and status at "up 1 s" printed neither. Status now
 * waits for them (GET /v1/status says `services: loading` meanwhile), and past its bound says
 * "checking…". Real daemon, real CLI; the window is held open by a hook question in flight from
 * the daemon's first moment, as a hook that started the daemon has one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

const HOOKS_LINE = /^hooks {4}(not installed \(hermesd init installs them\)|active \(\.git\/hooks\))$/m;
const PROPOSALS_LINE = /^proposals none pending; reviews: 0 done$/m;

describe('status right after the daemon starts', () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(() => {
    t = makeEnv();
    repo = t.repo();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('start, then status at once, ten times: the hooks and proposals lines every time', async () => {
    for (let i = 0; i < 10; i++) {
      const start = await t.cli(['start'], { cwd: repo });
      expect(start.code, start.stderr).toBe(0);
      const s = await t.cli(['status'], { cwd: repo });
      expect(s.stdout, `status ${i + 1} right after start lacks its hooks line:\n${s.stdout}${s.stderr}`).toMatch(HOOKS_LINE);
      expect(s.stdout, `status ${i + 1} right after start lacks its proposals line:\n${s.stdout}${s.stderr}`).toMatch(PROPOSALS_LINE);
      expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    }
  }, 120_000);

  /** Starts the daemon with a hook question in flight from its first moment (its body not sent yet); the question's socket. */
  async function startWithQuestionInFlight(): Promise<{ held: Socket; socket: string }> {
    const starting = t.cli(['start'], { cwd: repo });
    let socket: string | undefined;
    const end = Date.now() + 20_000;
    while (!socket && Date.now() < end) {
      const name = existsSync(t.socketDir) ? readdirSync(t.socketDir).find((n) => n.endsWith('.sock') && !n.endsWith('.agent.sock')) : undefined;
      if (name) socket = join(t.socketDir, name);
      else await new Promise((r) => setTimeout(r, 2));
    }
    if (!socket) throw new Error('the daemon made no socket within 20 s of hermesd start');
    // The path may be there before the new daemon listens on it (a stopped daemon's, or bind before
    // listen): connect as soon as it accepts, which is still the daemon's first moment.
    let held: Socket | undefined;
    while (!held) {
      const attempt = connect(socket);
      const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => attempt.once('connect', () => resolve(undefined)).once('error', resolve));
      if (!error) held = attempt;
      else if ((error.code === 'ECONNREFUSED' || error.code === 'ENOENT') && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
      else throw new Error(`the daemon's socket ${socket} did not accept a connection within 20 s of hermesd start: ${error.message}`);
    }
    held.write('POST /v1/ask HTTP/1.1\r\nHost: hermesd\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
    const started = await starting;
    expect(started.code, started.stderr).toBe(0);
    return { held, socket };
  }

  it('with the services still loading: status waits for them and prints both lines', async () => {
    // The window is the daemon's first moment: caught within a few tries on any machine.
    for (let attempt = 1; ; attempt++) {
      const { held, socket } = await startWithQuestionInFlight();
      try {
        const raw = await new DaemonClient(socket).call<Record<string, unknown>>('GET', '/v1/status');
        if (raw.services !== 'loading') {
          if (attempt < 5) continue;
          throw new Error(`the services had started before the question was in flight, ${attempt} times: ${JSON.stringify(raw)}`);
        }
        // What status used to print from: no hooks, no proposals.
        expect(raw.hooks).toBeUndefined();
        expect(raw.proposals).toBeUndefined();
        const s = await t.cli(['status'], { cwd: repo });
        expect(s.code, s.stderr).toBe(0);
        expect(s.stdout, `status while the services load lacks its hooks line:\n${s.stdout}`).toMatch(HOOKS_LINE);
        expect(s.stdout, `status while the services load lacks its proposals line:\n${s.stdout}`).toMatch(PROPOSALS_LINE);
        expect(s.stdout).not.toContain('checking…');
        const json = await t.cli(['status', '--json'], { cwd: repo });
        expect(json.json()).toMatchObject({ services: 'ready', hooks: { installed: false }, proposals: { pending: 0 } });
        return;
      } finally {
        held.destroy();
        await t.cli(['stop'], { cwd: repo });
      }
    }
  }, 120_000);
});
