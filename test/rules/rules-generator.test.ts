import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { checkStaged, checkWorktree } from '../../src/rules/engine.js';
import { verifyGenerator } from '../../src/rules/generator.js';
import { git, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

// The generator upper-cases schema.txt into gen/out.txt; it needs nothing but sh and tr.
const GEN_SH = 'mkdir -p gen && tr a-z A-Z < schema.txt > gen/out.txt\n';
const config = configSchema().parse({
  rules: [{ id: 'generated-files', message: 'Do not edit generated files; run sh gen.sh.', protect: ['gen/**'], generator: 'sh gen.sh' }],
});
const rule = config.rules[0]!;

describe('generator verification', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });
  const repoWithGenerator = () => t.repo({ 'gen.sh': GEN_SH, 'schema.txt': 'hello\n', 'gen/out.txt': 'HELLO\n' });
  const regenerate = (repo: string) => execFileSync('sh', ['gen.sh'], { cwd: repo });

  it('excuses a protected change that regenerating the staged sources reproduces', async () => {
    const repo = repoWithGenerator();
    writeFiles(repo, { 'schema.txt': 'hello world\n' });
    regenerate(repo);
    git(repo, 'add', '-A');
    expect(readFileSync(join(repo, 'gen/out.txt'), 'utf8')).toBe('HELLO WORLD\n');
    const v = await verifyGenerator(repo, rule, ['gen/out.txt']);
    expect(v).toMatchObject({ ok: true, mismatches: [] });
    expect((await checkStaged(repo, config)).violations).toEqual([]);

    // The snapshot, not the work tree, is what is regenerated: unstaged edits change nothing.
    writeFiles(repo, { 'schema.txt': 'something else entirely\n' });
    expect((await checkStaged(repo, config)).violations).toEqual([]);
    expect(readFileSync(join(repo, 'gen/out.txt'), 'utf8')).toBe('HELLO WORLD\n');
  });

  it('refuses a hand edit of a generated file, saying the regenerated file differs', async () => {
    const repo = repoWithGenerator();
    writeFiles(repo, { 'gen/out.txt': 'HELLO (edited by hand)\n' });
    git(repo, 'add', '-A');
    const v = await verifyGenerator(repo, rule, ['gen/out.txt']);
    expect(v.ok).toBe(false);
    expect(v.mismatches).toEqual([{ path: 'gen/out.txt', reason: 'differs' }]);
    const r = await checkStaged(repo, config);
    expect(r.violations).toEqual([
      {
        rule: 'generated-files',
        file: 'gen/out.txt',
        line: 0,
        message: 'Do not edit generated files; run sh gen.sh. (generator `sh gen.sh`: regenerated file differs)',
      },
    ]);
    // The user's files are untouched by the verification.
    expect(readFileSync(join(repo, 'gen/out.txt'), 'utf8')).toBe('HELLO (edited by hand)\n');
  });

  it('a staged generated file the generator does not produce, and one it produces but is not staged, are both mismatches', async () => {
    const repo = t.repo({ 'gen.sh': GEN_SH + 'echo extra > gen/extra.txt\n', 'schema.txt': 'a\n', 'gen/out.txt': 'A\n', 'gen/extra.txt': 'extra\n' });
    git(repo, 'rm', '-q', 'gen/extra.txt');
    writeFiles(repo, { 'gen/stale.txt': 'left over\n' });
    git(repo, 'add', '-A');
    const v = await verifyGenerator(repo, rule, ['gen/extra.txt', 'gen/stale.txt']);
    expect(v.mismatches).toEqual([
      { path: 'gen/extra.txt', reason: 'produced by the generator but not staged' },
      { path: 'gen/stale.txt', reason: 'not produced by the generator' },
    ]);
  });

  it('only the generated files regenerating does not reproduce are violations', async () => {
    const repo = t.repo({ 'gen.sh': GEN_SH + 'cp schema.txt gen/copy.txt\n', 'schema.txt': 'a\n', 'gen/out.txt': 'A\n', 'gen/copy.txt': 'a\n' });
    writeFiles(repo, { 'schema.txt': 'b\n' });
    regenerate(repo);
    writeFiles(repo, { 'gen/copy.txt': 'b, touched up by hand\n' });
    git(repo, 'add', '-A');
    const r = await checkStaged(repo, config);
    expect(r.violations.map((v) => [v.file, v.message])).toEqual([
      ['gen/copy.txt', 'Do not edit generated files; run sh gen.sh. (generator `sh gen.sh`: regenerated file differs)'],
    ]);
  });

  it('a failing generator keeps the violation and says why', async () => {
    const failing = configSchema().parse({ rules: [{ ...rule, generator: 'echo schema is broken >&2; exit 3' }] });
    const repo = repoWithGenerator();
    writeFiles(repo, { 'gen/out.txt': 'X\n' });
    git(repo, 'add', '-A');
    const r = await checkStaged(repo, failing);
    expect(r.violations).toHaveLength(1);
    expect(r.violations[0]!.message).toContain('failed: exited with 3');
    expect(r.warnings.join('\n')).toContain('schema is broken');
  });

  it('a generator that runs too long is stopped', async () => {
    const slow = configSchema().parse({ rules: [{ ...rule, generator: 'sleep 20' }] }).rules[0]!;
    const repo = repoWithGenerator();
    const started = Date.now();
    const v = await verifyGenerator(repo, slow, [], { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(v).toMatchObject({ ok: false, error: 'failed: timed out after 300 ms' });
  });

  it('the work tree check regenerates from the work tree', async () => {
    const repo = repoWithGenerator();
    writeFiles(repo, { 'schema.txt': 'changed\n' });
    regenerate(repo);
    // Nothing staged: the index still has the old pair, the work tree the new one.
    expect((await checkWorktree(repo, config)).violations).toEqual([]);
    writeFiles(repo, { 'gen/out.txt': 'WRONG\n' });
    expect((await checkWorktree(repo, config)).violations.map((v) => v.file)).toEqual(['gen/out.txt']);
    const off = await checkWorktree(repo, config, { runGenerators: false });
    expect(off.violations[0]!.message).toBe('Do not edit generated files; run sh gen.sh.');
  });
});
