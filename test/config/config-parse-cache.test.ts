/**
 * The daemon's parse cache of its config files (src/config/parse-cache.ts): a cold daemon whose
 * files are as last parsed judges from the cache (without loading the YAML parser); a file edited
 * while no daemon ran, a cache of another version and a torn cache are parsed again and judged by
 * their new text; no secret of the environment lands in it, and it lives under HERMES_HOME, private.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';
import { claudeWrite, expectRefused, guardedConfig } from '../helpers/transport.js';

let t: TestEnv;
let repo: string;

beforeEach(async () => {
  t = makeEnv();
  repo = t.repo({ '.hermes/config.yaml': guardedConfig(), 'gen/api.ts': 'x\n', 'src/a.ts': 'a\n', '.claude/settings.json': '{}\n' });
  expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
});
afterEach(async () => t.cleanup());

/** The parse cache of this repository's daemon (one project folder under HERMES_HOME). */
function cacheFile(): string {
  const projects = join(t.home, 'projects');
  const [dir] = readdirSync(projects).filter((d) => existsSync(join(projects, d, 'config-parsed.json')));
  expect(dir, 'a parse cache under HERMES_HOME/projects').toBeTruthy();
  return join(projects, dir!, 'config-parsed.json');
}

/** The `config loaded` lines of the daemon log, as objects. */
function loads(): Array<{ files: string[]; fromParseCache?: string[]; validatedBefore?: boolean }> {
  return readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(' config loaded '))
    .map((l) => JSON.parse(l.slice(l.indexOf('{'))));
}

async function stop(): Promise<void> {
  expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
}

describe("the daemon's parse cache of its config files", () => {
  it('a cold daemon judges an unchanged file from the cache, and an edited one from its new text', async () => {
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    expect(loads().at(-1)!.fromParseCache).toBeUndefined();
    await stop();

    // The test environment sets OPENAI_BASE_URL and OPENAI_API_KEY, which override config keys:
    // the file's parse comes from the cache, its validation is done again (the cache holds no environment).
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    expect(loads().at(-1)).toMatchObject({ fromParseCache: [join(repo, '.hermes/config.yaml')] });
    expect(loads().at(-1)!.validatedBefore).toBeUndefined();
    await stop();

    // Without them, the validation too comes from the cache (recorded by the start before).
    const plain = { OPENAI_BASE_URL: '', OPENAI_API_KEY: '' };
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts', { env: plain }), 'repository rule "generated"');
    await stop();
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts', { env: plain }), 'repository rule "generated"');
    expect(loads().at(-1)).toMatchObject({ fromParseCache: [join(repo, '.hermes/config.yaml')], validatedBefore: true });
    await stop();

    // Edited while no daemon runs: src/ is protected too.
    expect((await claudeWrite(t, repo, 'src/a.ts')).stdout).not.toContain('deny');
    await stop();
    writeFiles(repo, { '.hermes/config.yaml': guardedConfig('  - id: sources\n    message: Sources are frozen.\n    protect: ["src/**"]\n') });
    expectRefused(await claudeWrite(t, repo, 'src/a.ts', { env: plain }), 'repository rule "sources"');
    expect(loads().at(-1)!.fromParseCache).toBeUndefined();
    expect(loads().at(-1)!.validatedBefore).toBeUndefined();
    await stop();
    // The old text's validation is gone from the cache; the new one's is there.
    const stored = JSON.parse(readFileSync(cacheFile(), 'utf8'));
    expect(Object.keys(stored.valid)).toHaveLength(1);
    expect(Object.keys(stored.valid)[0]).toContain('sources');
  });

  it('a cache of another version, or torn, is parsed past; the cache is private and holds no secret of the environment', async () => {
    writeFiles(t.home, { 'config.yaml': 'model:\n  name: user-model\n' });
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
    await stop();
    const file = cacheFile();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The test environment sets OPENAI_API_KEY: the effective config holds it, the cache must not.
    expect(t.env.OPENAI_API_KEY).toBeTruthy();
    expect(readFileSync(file, 'utf8')).not.toContain(t.env.OPENAI_API_KEY);
    expect(readFileSync(file, 'utf8')).toContain('user-model');

    // The same texts recorded by another version, with rules that would allow the write.
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    const forged = {
      version: 'another',
      files: Object.fromEntries(Object.entries(stored.files as Record<string, { text: string }>).map(([k, v]) => [k, { text: v.text, raw: {} }])),
    };
    writeFileSync(file, JSON.stringify(forged));
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    expect(loads().at(-1)!.fromParseCache).toBeUndefined();
    await stop();

    writeFileSync(file, '{"version":');
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    expect(loads().at(-1)!.fromParseCache).toBeUndefined();
    await stop();

    // Rewritten by the last daemon: whole again, and still without the key after an edit made while one ran.
    expect(JSON.parse(readFileSync(file, 'utf8')).files).toHaveProperty([join(repo, '.hermes/config.yaml')]);
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
    writeFiles(repo, { '.hermes/config.yaml': guardedConfig() + '# edited\n' });
    const edited = await t.cli(['status', '--json'], { cwd: repo });
    expect(edited.json().config.ok).toBe(true);
    await stop();
    expect(readFileSync(file, 'utf8')).toContain('# edited');
    expect(readFileSync(file, 'utf8')).not.toContain(t.env.OPENAI_API_KEY);
  });

  it('a cache that cannot be written is said once in the log, and every load judges from the files', async () => {
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'generated');
    await stop();
    // A directory where the cache file goes: its rename over it fails, as a full disk or a read-only folder would make it.
    const file = cacheFile();
    rmSync(file);
    mkdirSync(file);
    const log = () => readFileSync(join(repo, '.git/hermesd/daemon.log'), 'utf8');
    const before = log().split('config parse cache not written').length;
    expectRefused(await claudeWrite(t, repo, 'gen/api.ts'), 'repository rule "generated"');
    // Edited while the daemon runs: parsed again, judged by the new text, the cache still not written (and not said twice).
    writeFiles(repo, { '.hermes/config.yaml': guardedConfig('  - id: sources\n    message: Sources are frozen.\n    protect: ["src/**"]\n') });
    expectRefused(await claudeWrite(t, repo, 'src/a.ts'), 'repository rule "sources"');
    expect(log().split('config parse cache not written').length - before).toBe(1);
    expect(loads().at(-1)!.fromParseCache).toBeUndefined();
    await stop();
    expect(statSync(file).isDirectory()).toBe(true);
  });
});
