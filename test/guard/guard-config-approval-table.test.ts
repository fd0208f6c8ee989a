/**
 * What counts as loosening the guard, as a table: each change to the guard-relevant config
 * is either applied at once (stricter) or held with the approved value in force until
 * approved; the approval record follows tightenings by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema, type HermesConfig } from '../../src/config/schema.js';
import { applyApproval, approveConfig, guardSettingsOf, holdLoosenings, loosenings } from '../../src/guard/approval.js';

const cfg = (raw: unknown): HermesConfig => configSchema().parse(raw);
const BASE = {
  rules: [
    { id: 'gen', message: 'generated', protect: ['src/gen/**'] },
    { id: 'keys', message: 'no keys', forbid: 'AKIA[0-9A-Z]{16}' },
  ],
  guard: { secretPaths: ['.env'] },
  hooks: { onUnavailable: 'block' },
};
const base = cfg(BASE);
const SECRET_RULE = { id: 'no-secrets', message: 'm', secrets: true, allow: ['^fixture-'] };
const SECRETS = { ...BASE, rules: [...BASE.rules, SECRET_RULE] };

const cases: Array<[string, unknown, string[]]> = [
  ['a rule removed', { ...BASE, rules: [BASE.rules[1]] }, ['rules.gen']],
  ['protect globs narrowed', { ...BASE, rules: [{ ...BASE.rules[0], protect: ['src/gen/a.ts'] }, BASE.rules[1]] }, ['rules.gen.protect']],
  ['an exclude added', { ...BASE, rules: [{ ...BASE.rules[0], exclude: ['src/gen/x/**'] }, BASE.rules[1]] }, ['rules.gen.exclude']],
  ['a generator added', { ...BASE, rules: [{ ...BASE.rules[0], generator: 'true' }, BASE.rules[1]] }, ['rules.gen.generator']],
  ['forbid changed', { ...BASE, rules: [BASE.rules[0], { ...BASE.rules[1], forbid: 'NOTHING' }] }, ['rules.keys.forbid']],
  ['forbid narrowed to some paths', { ...BASE, rules: [BASE.rules[0], { ...BASE.rules[1], paths: ['src/**'] }] }, ['rules.keys.paths']],
  ['noVerify allowed', { ...BASE, guard: { ...BASE.guard, gitPolicy: { noVerify: 'allow' } } }, ['guard.gitPolicy.noVerify']],
  ['a secret path dropped', { ...BASE, guard: { secretPaths: [] } }, ['guard.secretPaths']],
  ['the sandbox off', { ...BASE, guard: { ...BASE.guard, sandbox: { enabled: false } } }, ['guard.sandbox.enabled']],
  ['network on', { ...BASE, guard: { ...BASE.guard, sandbox: { network: true } } }, ['guard.sandbox.network']],
  ['unsandboxed when missing', { ...BASE, guard: { ...BASE.guard, sandbox: { ifUnavailable: 'unsandboxed' } } }, ['guard.sandbox.ifUnavailable']],
  ['a writable path added', { ...BASE, guard: { ...BASE.guard, sandbox: { writable: ['~/.cache'] } } }, ['guard.sandbox.writable']],
  ['an env name passed in', { ...BASE, guard: { ...BASE.guard, sandbox: { env: ['GITHUB_TOKEN'] } } }, ['guard.sandbox.env']],
  ['pre-commit rules off', { ...BASE, hooks: { ...BASE.hooks, 'pre-commit': { rules: false } } }, ['hooks.pre-commit.rules']],
  ['onUnavailable allow', { ...BASE, hooks: { onUnavailable: 'allow' } }, ['hooks.onUnavailable']],
  // HERMESD_BWRAP in the daemon's environment: no sandbox, or another binary in bubblewrap's place.
  ['no bubblewrap (HERMESD_BWRAP=none)', { ...BASE, guard: { ...BASE.guard, sandbox: { bwrap: 'none' } } }, ['guard.sandbox.bwrap (HERMESD_BWRAP)']],
  ['another bubblewrap', { ...BASE, guard: { ...BASE.guard, sandbox: { bwrap: '/tmp/fake-bwrap' } } }, ['guard.sandbox.bwrap (HERMESD_BWRAP)']],
  // Stricter, or not about the guard: applied at once.
  ['a rule added', { ...BASE, rules: [...BASE.rules, { id: 'lock', message: 'lock', protect: ['x.lock'] }] }, []],
  ['protect globs widened', { ...BASE, rules: [{ ...BASE.rules[0], protect: ['src/gen/**', 'more/**'] }, BASE.rules[1]] }, []],
  ['a message reworded', { ...BASE, rules: [{ ...BASE.rules[0], message: 'reworded' }, BASE.rules[1]] }, []],
  ['a secret path added', { ...BASE, guard: { secretPaths: ['.env', 'deploy/*.json'] } }, []],
  ['model settings', { ...BASE, model: { name: 'other' } }, []],
];

/** The secrets rule kind: turning it off or allowing more is a loosening. */
const secretCases: Array<[string, unknown, string[]]> = [
  ['the secrets rule removed', { ...SECRETS, rules: BASE.rules }, ['rules.no-secrets']],
  ['secrets turned off', { ...SECRETS, rules: [...BASE.rules, { id: 'no-secrets', message: 'm', secrets: false, forbid: 'x' }] }, ['rules.no-secrets.secrets']],
  ['more values allowed as fixtures', { ...SECRETS, rules: [...BASE.rules, { ...SECRET_RULE, allow: ['^fixture-', '^more-'] }] }, ['rules.no-secrets.allow']],
  ['a fixture folder excluded', { ...SECRETS, rules: [...BASE.rules, { ...SECRET_RULE, exclude: ['test/**'] }] }, ['rules.no-secrets.exclude']],
  ['secrets narrowed to some paths', { ...SECRETS, rules: [...BASE.rules, { ...SECRET_RULE, paths: ['src/**'] }] }, ['rules.no-secrets.paths']],
  ['fewer values allowed', { ...SECRETS, rules: [...BASE.rules, { ...SECRET_RULE, allow: undefined }] }, []],
  ['a message reworded', { ...SECRETS, rules: [...BASE.rules, { ...SECRET_RULE, message: 'reworded' }] }, []],
];

describe('loosenings of the secrets rule', () => {
  it.each(secretCases)('%s', (_name, raw, keys) => {
    const approved = guardSettingsOf(cfg(SECRETS));
    const next = cfg(raw);
    expect(loosenings(approved, guardSettingsOf(next)).map((l) => l.key)).toEqual(keys);
    const held = holdLoosenings(next, approved);
    expect(loosenings(approved, guardSettingsOf(held))).toEqual([]);
  });
});

describe('loosenings of the guard config', () => {
  it.each(cases)('%s', (_name, raw, keys) => {
    const next = cfg(raw);
    expect(loosenings(guardSettingsOf(base), guardSettingsOf(next)).map((l) => l.key)).toEqual(keys);
    // Held: the config in force has no loosening left against the approved one.
    const held = holdLoosenings(next, guardSettingsOf(base));
    expect(loosenings(guardSettingsOf(base), guardSettingsOf(held))).toEqual([]);
  });

  const home = mkdtempSync(join(tmpdir(), 'hd-approval-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('the record: first config approved, a tightening recorded, a loosening held until approved', () => {
    const root = '/repo/a';
    expect(applyApproval(home, root, base).pending).toEqual([]);
    const tighter = cfg({ ...BASE, guard: { secretPaths: ['.env', 'deploy/*.json'] } });
    expect(applyApproval(home, root, tighter).pending).toEqual([]);
    // Back to the base: dropping the added secret path is now a loosening.
    const back = applyApproval(home, root, base);
    expect(back.pending.map((l) => l.key)).toEqual(['guard.secretPaths']);
    expect(back.config.guard.secretPaths).toEqual(['.env', 'deploy/*.json']);
    expect(approveConfig(home, root, base).map((l) => l.key)).toEqual(['guard.secretPaths']);
    expect(applyApproval(home, root, base).pending).toEqual([]);
    // Another work tree has its own record.
    expect(applyApproval(home, '/repo/b', cfg({ rules: [] })).pending).toEqual([]);
  });

  it('a bubblewrap the environment names is held even in the first config a daemon sees, until the user approves it', () => {
    const root = '/repo/c';
    const none = cfg({ ...BASE, guard: { ...BASE.guard, sandbox: { bwrap: 'none' } } });
    const first = applyApproval(home, root, none);
    expect(first.pending.map((l) => l.key)).toEqual(['guard.sandbox.bwrap (HERMESD_BWRAP)']);
    expect(first.config.guard.sandbox.bwrap, 'held: bubblewrap on PATH stays in force').toBeUndefined();
    expect(applyApproval(home, root, none).config.guard.sandbox.bwrap).toBeUndefined();
    expect(approveConfig(home, root, none).map((l) => l.key)).toEqual(['guard.sandbox.bwrap (HERMESD_BWRAP)']);
    expect(applyApproval(home, root, none).config.guard.sandbox.bwrap).toBe('none');
  });
});
