/**
 * Where the record of refused writes cannot load (no build of this package's that loads here, and
 * no compiler), nothing is preloaded, the daemon's log says why once, and status can say it: the
 * confined command still runs, and a refusal is told where its output shows it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PREBUILT_PRELOAD, recordName, RefusedRecord } from '../../src/guard/refused-preload.js';

const dir = mkdtempSync(join(tmpdir(), 'hd-record-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function logger() {
  const warnings: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  return { warnings, log: { info() {}, error() {}, warn: (msg: string, fields?: Record<string, unknown>) => void warnings.push({ msg, fields }) } };
}

describe('the record of refused writes', () => {
  it("loads this package's build, and says nothing", () => {
    const { warnings, log } = logger();
    const record = new RefusedRecord(join(dir, 'ok'), process.env, log);
    expect(existsSync(PREBUILT_PRELOAD), 'npm run build made no dist/client/hermesd-refused.so').toBe(true);
    expect(record.lib(), 'the library was not put in place').toBe(join(dir, 'ok', 'refused.so'));
    expect(record.problem()).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('with no build and no compiler: nothing preloaded, why said once in the log and by problem()', () => {
    const { warnings, log } = logger();
    const record = new RefusedRecord(join(dir, 'none'), { ...process.env, HERMESD_CC: join(dir, 'no-such-cc') }, log, join(dir, 'no-such.so'));
    expect(record.problem(), 'a problem before anything was looked for').toBeUndefined();
    expect(record.lib()).toBeUndefined();
    expect(record.lib()).toBeUndefined();
    expect(record.problem()).toMatch(/no C compiler/);
    expect(warnings.length, 'the log should say it once').toBe(1);
    expect(String(warnings[0]!.fields?.why)).toMatch(/no C compiler/);
    expect(existsSync(join(dir, 'none', 'refused.so')), 'a library that does not load was left in place').toBe(false);
  });

  it("reads a session's record bounded, whole lines of absolute paths without control characters, and empties it", () => {
    const { log } = logger();
    const record = new RefusedRecord(join(dir, 'bounded'), process.env, log);
    const folder = record.folderPath()!;
    try {
      // A command inside the confinement can write its record: junk, a control character, a flood.
      const flood = `${'/repo/gen/flood.ts\n'.repeat(10_000)}`;
      writeFileSync(
        join(folder, recordName('claude\0s1')),
        `/repo/gen/a.ts\nnot a path\n/repo/gen/\u001b[31mred.ts\n/repo/gen/a.ts\n${flood}/repo/gen/after-the-bound.ts\n`,
      );
      expect(record.take('claude\0s1'), 'what a record yields').toEqual(['/repo/gen/a.ts', '/repo/gen/flood.ts']);
      expect(record.take('claude\0s1'), 'a record taken twice').toEqual([]);
      expect(record.take('codex\0s1'), "another session's record").toEqual([]);
    } finally {
      record.close();
    }
    expect(existsSync(folder), 'the records stay after close').toBe(false);
  });
});
