import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { checkStaged, checkWorktree, protectedBy } from '../../src/rules/engine.js';
import { git, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const config = configSchema().parse({
  rules: [
    {
      id: 'generated-files',
      message: 'Do not edit generated files directly; run npm run gen.',
      protect: ['src/generated/**'],
      exclude: ['src/generated/README.md'],
    },
    { id: 'lockfile', message: 'The vendored tree is read-only.', protect: ['vendor/**', 'src/generated/special.ts'] },
    { id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' },
  ],
});
const where = (r: { violations: Array<{ file: string; line: number; rule: string }> }) => r.violations.map((v) => `${v.file}:${v.line}:${v.rule}`);

describe('protectedBy (what the file tools ask)', () => {
  it('answers the first rule whose protect globs match, honouring exclude and normalising the path', () => {
    expect(protectedBy(config, 'src/generated/api.ts')?.id).toBe('generated-files');
    expect(protectedBy(config, './src/generated/deep/x.ts')?.message).toBe('Do not edit generated files directly; run npm run gen.');
    expect(protectedBy(config, 'src\\generated\\win.ts')?.id).toBe('generated-files');
    expect(protectedBy(config, 'src/generated/special.ts')?.id).toBe('generated-files');
    expect(protectedBy(config, 'src/generated/README.md')).toBeUndefined();
    expect(protectedBy(config, 'vendor/.hidden')?.id).toBe('lockfile');
    expect(protectedBy(config, 'src/app.ts')).toBeUndefined();
    expect(protectedBy(configSchema().parse({}), 'src/generated/api.ts')).toBeUndefined();
  });
});

describe('staged snapshot versus work tree', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });
  const base = () =>
    t.repo({ 'src/generated/api.ts': 'export const v = 1;\n', 'src/generated/README.md': 'generated\n', 'src/app.ts': 'app\n', '.gitignore': 'ignored/\n' });

  it('a protected file changed only in the work tree is a work-tree violation, not a staged one', async () => {
    const repo = base();
    writeFiles(repo, { 'src/generated/api.ts': 'export const v = 2;\n', 'src/generated/README.md': 'edited, but excluded\n' });
    expect((await checkStaged(repo, config)).violations).toEqual([]);
    expect(await checkWorktree(repo, config)).toMatchObject({
      violations: [{ rule: 'generated-files', file: 'src/generated/api.ts', line: 0, message: 'Do not edit generated files directly; run npm run gen.' }],
    });
  });

  it('a staged change the work tree has since undone is a staged violation only', async () => {
    const repo = base();
    writeFiles(repo, { 'src/generated/api.ts': 'export const v = 2;\n', 'src/app.ts': `app\nconst key = "${KEY}";\n` });
    git(repo, 'add', '-A');
    // Back to HEAD's content in the work tree; the index still holds the edits.
    writeFiles(repo, { 'src/generated/api.ts': 'export const v = 1;\n', 'src/app.ts': 'app\n' });
    expect(where(await checkStaged(repo, config))).toEqual(['src/app.ts:2:no-aws-keys', 'src/generated/api.ts:0:generated-files']);
    expect((await checkWorktree(repo, config)).violations).toEqual([]);
  });

  it('forbidden content only in the work tree is not a staged violation', async () => {
    const repo = base();
    writeFiles(repo, { 'src/app.ts': `app\n${KEY}\n` });
    expect((await checkStaged(repo, config)).violations).toEqual([]);
    expect(where(await checkWorktree(repo, config))).toEqual(['src/app.ts:2:no-aws-keys']);
  });

  it('the work tree check includes untracked files but not ignored ones', async () => {
    const repo = base();
    writeFiles(repo, { 'notes/new.txt': `one\ntwo ${KEY}\n`, 'ignored/secret.txt': `${KEY}\n`, 'src/generated/fresh.ts': 'new\n' });
    expect((await checkStaged(repo, config)).violations).toEqual([]);
    expect(where(await checkWorktree(repo, config))).toEqual(['notes/new.txt:2:no-aws-keys', 'src/generated/fresh.ts:0:generated-files']);
  });

  it('deleting or renaming a protected file is a violation on either side of the rename', async () => {
    const repo = t.repo({ 'src/generated/api.ts': 'export const v = 1;\n'.repeat(20), 'src/generated/gone.ts': 'x\n', 'vendor/lib.js': 'lib\n'.repeat(20) });
    git(repo, 'rm', '-q', 'src/generated/gone.ts');
    git(repo, 'mv', 'src/generated/api.ts', 'src/api.ts');
    git(repo, 'mv', 'vendor/lib.js', 'lib.js');
    const r = await checkStaged(repo, config);
    expect(where(r)).toEqual(['src/generated/api.ts:0:generated-files', 'src/generated/gone.ts:0:generated-files', 'vendor/lib.js:0:lockfile']);
    expect(where(await checkWorktree(repo, config))).toEqual(where(r));
    // A rename INTO a protected path counts too.
    const into = t.repo({ 'api.ts': 'export const v = 1;\n'.repeat(20) });
    mkdirSync(join(into, 'vendor'));
    git(into, 'mv', 'api.ts', 'vendor/api.ts');
    expect(where(await checkStaged(into, config))).toEqual(['vendor/api.ts:0:lockfile']);
  });

  it('a config without rules makes no git calls and finds nothing', async () => {
    const repo = base();
    writeFiles(repo, { 'src/generated/api.ts': 'changed\n' });
    git(repo, 'add', '-A');
    expect(await checkStaged(repo, configSchema().parse({}))).toEqual({ violations: [], warnings: [], files: 0 });
  });
});
