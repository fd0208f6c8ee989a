/**
 * A writer killed at any moment — including between writing the temp file and renaming it —
 * never leaves a torn memory file: the file always parses and equals a complete earlier or
 * later state, and the next writer recovers the stale lock and temp file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEntries, roundTrips } from '../../src/memory/entries.js';
import { MemoryStore } from '../../src/memory/store.js';
import { REPO_ROOT } from '../helpers/env.js';
import { settled } from '../helpers/settled.js';

const STORE_JS = join(REPO_ROOT, 'dist', 'src', 'memory', 'store.js');
/** Big entries make each rewrite take long enough that most kills land inside a write. */
const ENTRY_CHARS = 100_000;
const MAX_ENTRIES = 30;
const entry = (n: number) => `entry ${n} ${String(n % 10).repeat(ENTRY_CHARS)}`;

describe('memory: crash between write and rename', () => {
  let base: string;
  let dir: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'hd-memk-'));
    dir = join(base, 'memories');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  /** Every entry on disk is complete and they are a prefix of the sequence the writer produces. */
  function checkState(): number {
    const path = join(dir, 'MEMORY.md');
    if (!existsSync(path)) return 0;
    const raw = readFileSync(path, 'utf8');
    expect(roundTrips(raw)).toBe(true);
    const entries = parseEntries(raw);
    entries.forEach((e, i) => expect(e === entry(i), `entry ${i} is torn or out of place`).toBe(true));
    return entries.length;
  }

  it('a writer SIGKILLed mid-write, again and again, leaves an earlier or later full state', async () => {
    expect(existsSync(STORE_JS), 'run `npx tsc -p .` (npm test does) so child processes can load the store').toBe(true);
    const script = join(base, 'writer.mjs');
    writeFileSync(
      script,
      `import { MemoryStore } from ${JSON.stringify(pathToFileURL(STORE_JS).href)};
const store = new MemoryStore(process.argv[2], { memoryCharLimit: 50_000_000 });
const entry = (n) => 'entry ' + n + ' ' + String(n % 10).repeat(${ENTRY_CHARS});
process.stdout.write('ready\\n');
for (;;) {
  const n = store.entries('memory').length;
  if (n >= ${MAX_ENTRIES}) break;
  store.add('memory', entry(n));
}
`,
    );
    let last = 0;
    let killedMidWrite = 0;
    for (let round = 0; round < 12 && last < MAX_ENTRIES; round++) {
      const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      await new Promise<void>((r) => child.stdout.once('data', () => r()));
      await new Promise((r) => setTimeout(r, 15 + Math.random() * 120));
      child.kill('SIGKILL');
      const code = await exited;
      expect(code === null || code === 0, stderr).toBe(true);
      // Under load the writer may be killed before it created the directory at all.
      if (existsSync(dir) && readdirSync(dir).some((f) => /^MEMORY\.md\.\d+$/.test(f))) killedMidWrite++;
      const now = checkState();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
    // Whatever the writer left (a lock owned by a dead pid, a temp file), the next writer recovers.
    const store = new MemoryStore(dir, { memoryCharLimit: 50_000_000 });
    expect(settled(() => store.add('memory', entry(last)))).toMatchObject({ success: true });
    expect(checkState()).toBe(last + 1);
    expect(readdirSync(dir).sort()).toEqual(['MEMORY.md']);
    // Informational: how many kills landed between creating the temp file and the rename.
    console.log(`memory crash test: ${killedMidWrite} kill(s) left a temp file; ${last + 1} entries survived intact`);
  }, 60_000);

  it('a temp file and lock left by a dead writer are recovered deterministically', () => {
    const store = new MemoryStore(dir);
    settled(() => store.add('memory', 'first fact'));
    settled(() => store.add('memory', 'second fact'));
    // What a writer killed after writing its temp file, before the rename, leaves behind.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(join(dir, 'MEMORY.md.lock'), String(dead), { mode: 0o600 });
    writeFileSync(join(dir, 'MEMORY.md.2718281828'), 'first fact\n§\nsecond fa');
    expect(store.entries('memory')).toEqual(['first fact', 'second fact']);
    expect(settled(() => store.add('memory', 'third fact'))).toMatchObject({ success: true, entries: ['first fact', 'second fact', 'third fact'] });
    expect(readdirSync(dir).sort()).toEqual(['MEMORY.md']);
  });

  it('a live lock holder makes a writer wait, not overwrite', async () => {
    mkdirSync(dir, { recursive: true });
    // Hold the lock from a real other process for a moment.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(join(dir, 'MEMORY.md.lock'))}, String(process.pid), {flag: 'wx', mode: 0o600}); setTimeout(() => { require('fs').unlinkSync(${JSON.stringify(join(dir, 'MEMORY.md.lock'))}); }, 400); setTimeout(() => {}, 500);`,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise((r) => holder.on('exit', r));
    for (let i = 0; i < 100 && !existsSync(join(dir, 'MEMORY.md.lock')); i++) await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    expect(new MemoryStore(dir).add('memory', 'waited for the lock')).toMatchObject({ success: true });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await exited;
  });
});
