/**
 * Several processes share one $HERMES_HOME: real child processes (and real daemons) write
 * the same memory store at once, and none of their entries may be lost. The children run
 * the built store (dist/, built by `npm test`), as the daemon does.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { parseEntries, roundTrips } from '../../src/memory/entries.js';
import { makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';

const STORE_JS = join(REPO_ROOT, 'dist', 'src', 'memory', 'store.js');

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('memory: concurrent writers sharing one HERMES_HOME', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('two processes adding 12 entries each at the same moment lose none', async () => {
    expect(existsSync(STORE_JS), 'run `npx tsc -p .` (npm test does) so child processes can load the store').toBe(true);
    const base = mkdtempSync(join(tmpdir(), 'hd-memc-'));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, 'memories');
    const script = join(base, 'writer.mjs');
    writeFileSync(
      script,
      `import { MemoryStore } from ${JSON.stringify(pathToFileURL(STORE_JS).href)};
const [dir, name, n, startAt] = process.argv.slice(2);
const store = new MemoryStore(dir);
while (Date.now() < Number(startAt)) {}
const results = [];
for (let i = 0; i < Number(n); i++) {
  try {
    store.add('memory', name + ' learned fact number ' + i);
    results.push(true);
  } catch (err) {
    results.push(err.message);
  }
}
process.stdout.write(JSON.stringify(results));
`,
    );
    // Both start spinning, then begin writing at the same instant.
    const startAt = String(Date.now() + 700);
    const [a, b] = await Promise.all([run(script, [dir, 'writer-a', '12', startAt]), run(script, [dir, 'writer-b', '12', startAt])]);
    for (const r of [a, b]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(Array(12).fill(true));
    }
    const raw = readFileSync(join(dir, 'MEMORY.md'), 'utf8');
    expect(roundTrips(raw)).toBe(true);
    const entries = parseEntries(raw);
    expect(entries).toHaveLength(24);
    for (const name of ['writer-a', 'writer-b']) {
      const mine = entries.filter((e) => e.startsWith(name));
      // Each writer's entries are all there, in the order it wrote them.
      expect(mine).toEqual(Array.from({ length: 12 }, (_, i) => `${name} learned fact number ${i}`));
    }
    expect(existsSync(join(dir, 'MEMORY.md.lock'))).toBe(false);
  });

  it('two daemons of two repositories, written through the API at once, lose none', async () => {
    const t: TestEnv = makeEnv();
    cleanups.push(() => t.cleanup());
    const repos = [t.repo(), t.repo()];
    const sockets: string[] = [];
    for (const repo of repos) {
      const r = await t.cli(['start', '--json'], { cwd: repo });
      expect(r.code, r.stderr).toBe(0);
      sockets.push(r.json().socket);
    }
    expect(sockets[0]).not.toBe(sockets[1]);
    const clients = sockets.map((s) => new DaemonClient(s));
    const results = await Promise.all(
      clients.flatMap((c, d) =>
        Array.from({ length: 12 }, (_, i) =>
          c.call<{ success: boolean }>('POST', '/v1/memory', { action: 'add', target: 'user', content: `daemon ${d} noted preference ${i}` }),
        ),
      ),
    );
    expect(results.every((r) => r.success)).toBe(true);
    const listed = await clients[1]!.call<{ entries: string[]; usage: { chars: number; limit: number } }>('GET', '/v1/memory?target=user');
    expect(listed.entries).toHaveLength(24);
    for (let d = 0; d < 2; d++) for (let i = 0; i < 12; i++) expect(listed.entries).toContain(`daemon ${d} noted preference ${i}`);
    expect(parseEntries(readFileSync(join(t.home, 'memories', 'USER.md'), 'utf8'))).toEqual(listed.entries);
  });
});
