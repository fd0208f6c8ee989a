/**
 * Memory never writes what nobody asked for: a file that does not round-trip through the
 * entry parser within its budget is not rewritten (a backup is kept and the message says how
 * to repair it), and a batch that would empty a store takes an explicit flag, while a single
 * remove of the last entry is done as asked. Cases ported from the reference implementation's
 * memory tool tests (NousResearch/hermes-agent, tests/tools/test_memory_tool.py:
 * TestExternalDriftGuard, TestBatchRefusesToEmptyNonEmptyStore, TestMemoryStoreRemove), then
 * through the real CLI and API.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { MemoryStore, type MemoryTarget } from '../../src/memory/store.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { settled } from '../helpers/settled.js';

const SEP = '\n§\n';

describe('memory store: hand-written text is never rewritten away', () => {
  let base: string;
  let dir: string;
  let store: MemoryStore;
  const path = (target: MemoryTarget = 'memory') => join(dir, target === 'user' ? 'USER.md' : 'MEMORY.md');

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'hd-mem-'));
    dir = join(base, 'memories');
    store = new MemoryStore(dir, { memoryCharLimit: 500, userCharLimit: 300 });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  /** Free-form sections appended by hand without "§" lines: the whole file parses as one over-limit entry. */
  const plantDrift = (target: MemoryTarget = 'memory') => {
    mkdirSync(dir, { recursive: true });
    let block = '\n\n## Vendor Master\n' + 'x'.repeat(800);
    block += '\n\n## Standing Orders\n' + 'y'.repeat(800);
    block += '\n\n## Pin Board\n' + 'z'.repeat(800);
    let existing = '';
    try {
      existing = readFileSync(path(target), 'utf8');
    } catch {
      // no file yet
    }
    writeFileSync(path(target), existing + block);
  };

  it('a replace on a file whose hand-appended text makes one over-limit entry is refused, file untouched, backup kept', () => {
    expect(settled(() => store.add('memory', 'User likes brevity.'))).toMatchObject({ success: true });
    plantDrift();
    const before = readFileSync(path());
    expect(before.length).toBeGreaterThan(2400);
    const r = settled(() => store.replace('memory', 'User likes', 'User prefers concise.'));
    expect(r).toMatchObject({ success: false, reason: 'drift' });
    expect(readFileSync(path()).equals(before)).toBe(true);
    expect(readFileSync(r.backup!).equals(before)).toBe(true);
    expect(statSync(r.backup!).mode & 0o777).toBe(0o600);
    expect(r.error).toContain(r.backup!);
    // The message says why and how to repair it.
    expect(r.error).toMatch(/over the store's whole budget of 500/);
    expect(r.error).toMatch(/a line holding only "§" between two facts/);
    expect(r.error).toMatch(/hermesd memory list/);
  });

  it('a remove and a batch on that file are refused the same way', () => {
    settled(() => store.add('memory', 'User likes brevity.'));
    plantDrift();
    const before = readFileSync(path());
    expect(settled(() => store.remove('memory', 'Vendor'))).toMatchObject({ success: false, reason: 'drift' });
    expect(settled(() => store.apply('memory', [{ action: 'replace', old_text: 'Pin Board', content: 'short' }]))).toMatchObject({
      success: false,
      reason: 'drift',
    });
    expect(readFileSync(path()).equals(before)).toBe(true);
  });

  it('USER.md gets the same guarantee', () => {
    settled(() => store.add('user', 'Some preference.'));
    plantDrift('user');
    const before = readFileSync(path('user'));
    expect(settled(() => store.replace('user', 'Some preference', 'New preference.'))).toMatchObject({ success: false, reason: 'drift' });
    expect(readFileSync(path('user')).equals(before)).toBe(true);
  });

  it('an add to that file cannot grow it past the budget either', () => {
    plantDrift();
    const before = readFileSync(path());
    expect(settled(() => store.add('memory', 'one more fact'))).toMatchObject({ success: false, reason: 'over-budget' });
    expect(readFileSync(path()).equals(before)).toBe(true);
  });

  it('an add appends to a hand-edited file under budget and keeps what was written by hand byte for byte', () => {
    settled(() => store.add('memory', 'Existing entry.'));
    writeFileSync(path(), readFileSync(path(), 'utf8') + '\nextra content no delimiter');
    expect(settled(() => store.add('memory', 'New entry under drift.'))).toMatchObject({ success: true });
    expect(readFileSync(path(), 'utf8')).toBe(`Existing entry.\nextra content no delimiter${SEP}New entry under drift.`);
  });

  it('an add keeps blank lines and indentation the user put around entries', () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path(), 'alpha\n§\n\n  beta, indented by hand\n\n');
    expect(settled(() => store.add('memory', 'gamma'))).toMatchObject({ success: true, entries: ['alpha', 'beta, indented by hand', 'gamma'] });
    expect(readFileSync(path(), 'utf8')).toBe(`alpha\n§\n\n  beta, indented by hand${SEP}gamma`);
  });

  it('a clean §-separated file near the budget is rewritten normally', () => {
    settled(() => store.add('memory', 'Entry one \u2014 normal length.'));
    settled(() => store.add('memory', 'Entry two \u2014 also normal.'));
    expect(settled(() => store.add('memory', 'Entry three.'))).toMatchObject({ success: true });
    expect(settled(() => store.replace('memory', 'Entry two', 'Entry two replaced.'))).toMatchObject({ success: true });
    expect(readFileSync(path(), 'utf8')).toBe(`Entry one \u2014 normal length.${SEP}Entry two replaced.${SEP}Entry three.`);
  });
});

describe('memory store: a batch empties a store only with an explicit flag; a single remove may', () => {
  let base: string;
  let store: MemoryStore;
  const file = (target: MemoryTarget) => join(base, 'memories', target === 'user' ? 'USER.md' : 'MEMORY.md');

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'hd-mem-'));
    store = new MemoryStore(join(base, 'memories'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it.each([
    ['user', 'Name: Alice'],
    ['memory', 'fact A'],
  ] as const)('a batch removing every entry of %s is refused and writes nothing', (target, seed) => {
    settled(() => store.add(target, seed));
    settled(() => store.add(target, 'second entry here'));
    const before = readFileSync(file(target), 'utf8');
    const r = settled(() =>
      store.apply(target, [
        { action: 'remove', old_text: seed },
        { action: 'remove', old_text: 'second entry' },
      ]),
    );
    expect(r).toMatchObject({ success: false, reason: 'would-empty' });
    expect(r.error).toMatch(/No operations were applied/);
    expect(r.error).toMatch(/allow_empty/);
    expect(readFileSync(file(target), 'utf8')).toBe(before);
    expect(
      settled(() =>
        store.apply(
          target,
          [
            { action: 'remove', old_text: seed },
            { action: 'remove', old_text: 'second entry' },
          ],
          { allowEmpty: true },
        ),
      ),
    ).toMatchObject({
      success: true,
      entries: [],
    });
    expect(readFileSync(file(target), 'utf8')).toBe('');
  });

  it('a batch that ends with entries left still succeeds', () => {
    settled(() => store.add('memory', 'fact A'));
    expect(
      settled(() =>
        store.apply('memory', [
          { action: 'remove', old_text: 'fact A' },
          { action: 'add', content: 'replacement entry here' },
        ]),
      ),
    ).toMatchObject({
      success: true,
      entries: ['replacement entry here'],
    });
  });

  it('test_remove_entry: a single remove of the only entry empties the store, as asked', () => {
    settled(() => store.add('memory', 'the only fact'));
    expect(settled(() => store.remove('memory', 'only'))).toMatchObject({ success: true, entries: [] });
    expect(readFileSync(file('memory'), 'utf8')).toBe('');
  });

  it.each([
    ['user', 'Name: Alice'],
    ['memory', 'fact A'],
  ] as const)('test_batch_removing_last_entry_is_refused_and_preserves_disk: a one-operation batch on %s', (target, seed) => {
    settled(() => store.add(target, seed));
    const before = readFileSync(file(target), 'utf8');
    expect(settled(() => store.apply(target, [{ action: 'remove', old_text: seed }]))).toMatchObject({ success: false, reason: 'would-empty' });
    expect(readFileSync(file(target), 'utf8')).toBe(before);
  });

  it('removing one of several entries needs no flag', () => {
    settled(() => store.add('memory', 'one'));
    settled(() => store.add('memory', 'two'));
    expect(settled(() => store.remove('memory', 'one'))).toMatchObject({ success: true, entries: ['two'] });
  });
});

describe('memory through the real CLI and API: a single remove empties, a batch needs allow_empty', () => {
  let t: TestEnv;
  let repo: string;
  const memory = (...args: string[]) => t.cli(['memory', ...args], { cwd: repo });

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('the CLI removes the last entry when asked to, without a flag', async () => {
    expect((await memory('add', 'Project uses pnpm 9')).code).toBe(0);
    const done = await memory('remove', 'pnpm', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(done.json()).toMatchObject({ success: true, entries: [] });
    expect(readFileSync(join(t.home, 'memories', 'MEMORY.md'), 'utf8')).toBe('');
  });

  it('the API removes a last entry on a single remove; a batch emptying the store needs allow_empty', async () => {
    const client = new DaemonClient((await t.cli(['status', '--json'], { cwd: repo })).json().socket);
    await client.call('POST', '/v1/memory', { action: 'add', target: 'user', content: 'Prefers metric units' });
    const refused = await client.raw('POST', '/v1/memory', { target: 'user', operations: [{ action: 'remove', old_text: 'metric' }] });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text).error.details).toMatchObject({ reason: 'would-empty', entries: ['Prefers metric units'] });
    expect(JSON.parse(refused.text).error.message).toMatch(/allow_empty/);
    const ok = await client.call<{ entries: string[] }>('POST', '/v1/memory', {
      target: 'user',
      operations: [{ action: 'remove', old_text: 'metric' }],
      allow_empty: true,
    });
    expect(ok.entries).toEqual([]);
    await client.call('POST', '/v1/memory', { action: 'add', target: 'user', content: 'Prefers tabs' });
    const single = await client.call<{ entries: string[] }>('POST', '/v1/memory', { action: 'remove', target: 'user', old_text: 'tabs' });
    expect(single.entries).toEqual([]);
    const bad = await client.raw('POST', '/v1/memory', { action: 'remove', target: 'user', old_text: 'x', allow_empty: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('a replace on a drifted file exits 1 naming the backup and the repair, leaving the file', async () => {
    const file = join(t.home, 'memories', 'MEMORY.md');
    const drifted = 'User likes brevity.\n\n## Vendor Master\n' + 'v'.repeat(2400);
    writeFileSync(file, drifted);
    const r = await memory('replace', 'User likes', 'User prefers concise.');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/saved to \S+MEMORY\.md\.bak-/);
    expect(r.stderr).toMatch(/over the store's whole budget of 2,200/);
    expect(readFileSync(file, 'utf8')).toBe(drifted);
  });
});
