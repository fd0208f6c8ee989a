import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, loadConfigWithOrigins } from '../../src/config/load.js';
import { MEMORY_CHAR_LIMIT, REPO_MEMORY_CHAR_LIMIT, SKILL_ARCHIVE_AFTER_DAYS } from '../../src/config/schema.js';
import { REPO_ROOT } from '../helpers/env.js';

let base: string;
let home: string;
let root: string;

function writeUser(text: string) {
  writeFileSync(join(home, 'config.yaml'), text);
}
function writeRepo(text: string) {
  mkdirSync(join(root, '.hermes'), { recursive: true });
  writeFileSync(join(root, '.hermes', 'config.yaml'), text);
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-cfg-')));
  home = join(base, 'home');
  root = join(base, 'repo');
  mkdirSync(home);
  mkdirSync(root);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('config precedence', () => {
  it('gives the documented defaults with no files and no environment', () => {
    const c = loadConfig({ root, home, env: {} });
    expect(c.rules).toEqual([]);
    expect(c.checks).toEqual([]);
    expect(c.hooks).toEqual({ 'pre-commit': { rules: true, checks: [], fix: 'propose', maxFixAttempts: 2 }, timeoutMs: 10_000, onUnavailable: 'allow' });
    expect(c.model).toMatchObject({ maxTurns: 20, stream: true });
    expect(c.model.baseUrl).toBeUndefined();
    expect(c.memory).toEqual({ memoryCharLimit: MEMORY_CHAR_LIMIT, userCharLimit: 1375, repoCharLimit: REPO_MEMORY_CHAR_LIMIT });
    expect(c.context.maxFileChars).toBe(20_000);
    expect(c.guard.gitPolicy.hookConfig).toBe('refuse');
    expect(c.skills).toEqual({ archiveAfterDays: SKILL_ARCHIVE_AFTER_DAYS });
    expect(c.review).toMatchObject({ enabled: true, minToolCalls: 2 });
    expect(c.placement).toEqual({ classifier: 'auto', timeoutMs: 30_000 });
  });

  it('repository wins over user key by key; environment wins over both', () => {
    writeUser('model:\n  baseUrl: http://user.example/v1\n  name: user-model\n  maxTurns: 5\nmemory:\n  userCharLimit: 999\n');
    writeRepo('model:\n  name: repo-model\n  baseUrl: http://repo.example/v1\n');
    const fromFiles = loadConfig({ root, home, env: {} });
    expect(fromFiles.model).toMatchObject({ baseUrl: 'http://repo.example/v1', name: 'repo-model', maxTurns: 5 });
    expect(fromFiles.memory).toEqual({ memoryCharLimit: MEMORY_CHAR_LIMIT, userCharLimit: 999, repoCharLimit: REPO_MEMORY_CHAR_LIMIT });

    const env = { OPENAI_BASE_URL: 'http://env.example/v1', OPENAI_API_KEY: 'sk-env', HERMESD_MODEL: 'env-model' };
    const loaded = loadConfigWithOrigins({ root, home, env });
    expect(loaded.config.model).toMatchObject({ baseUrl: 'http://env.example/v1', apiKey: 'sk-env', name: 'env-model', maxTurns: 5 });
    expect(loaded.origins).toMatchObject({
      'model.baseUrl': 'env:OPENAI_BASE_URL',
      'model.apiKey': 'env:OPENAI_API_KEY',
      'model.name': 'env:HERMESD_MODEL',
      'model.maxTurns': 'user',
      'memory.userCharLimit': 'user',
      'memory.memoryCharLimit': 'default',
    });
    expect(loaded.files).toEqual([
      { scope: 'user', file: join(home, 'config.yaml'), exists: true },
      { scope: 'repository', file: join(root, '.hermes', 'config.yaml'), exists: true },
    ]);
  });

  it('without a root only the user file is read', () => {
    writeUser('model:\n  name: user-model\n');
    writeRepo('model:\n  name: repo-model\n');
    expect(loadConfig({ home, env: {} }).model.name).toBe('user-model');
  });

  it('merges rules and checks by id: user first, a repository rule of the same id replaces the user one', () => {
    writeUser(
      [
        'rules:',
        '  - {id: no-secrets, message: user version, forbid: "SECRET"}',
        '  - {id: user-only, message: mine, protect: ["vendor/**"]}',
        'checks:',
        '  - {id: lint, run: "npm run lint"}',
      ].join('\n'),
    );
    writeRepo(
      [
        'rules:',
        '  - {id: no-secrets, message: repo version, forbid: "TOKEN"}',
        '  - {id: repo-only, message: theirs, protect: ["gen/**"]}',
        'checks:',
        '  - {id: tests, run: "npm test", fix: true}',
        'hooks:',
        '  pre-commit:',
        '    checks: [lint, tests]',
      ].join('\n'),
    );
    const loaded = loadConfigWithOrigins({ root, home, env: {} });
    expect(loaded.config.rules.map((r) => [r.id, r.message])).toEqual([
      ['user-only', 'mine'],
      ['no-secrets', 'repo version'],
      ['repo-only', 'theirs'],
    ]);
    expect(loaded.config.rules[1]!.forbid).toBe('TOKEN');
    expect(loaded.config.checks.map((c) => c.id)).toEqual(['lint', 'tests']);
    expect(loaded.config.checks[0]!.fix).toBe(false);
    expect(loaded.config.hooks['pre-commit'].checks).toEqual(['lint', 'tests']);
    expect(loaded.origins).toMatchObject({
      'rules.user-only': 'user',
      'rules.no-secrets': 'repository',
      'checks.lint': 'user',
      'hooks.pre-commit.checks': 'repository',
    });
  });

  it('a repository list that is not merged by id (e.g. secretPaths) replaces the user list', () => {
    writeUser('guard:\n  secretPaths: [".env"]\n');
    writeRepo('guard:\n  secretPaths: ["keys/**"]\n');
    expect(loadConfig({ root, home, env: {} }).guard.secretPaths).toEqual(['keys/**']);
  });

  it('an empty key (left after commenting out its block) means unset, and empty env vars are ignored', () => {
    writeRepo('checks:\nmodel:\n  name:\n');
    writeUser('model:\n  name: from-user\n');
    const c = loadConfig({ root, home, env: { HERMESD_MODEL: '' } });
    expect(c.checks).toEqual([]);
    expect(c.model.name).toBe('from-user');
  });

  it('the template hermesd init copies is a valid config with the secrets rule on', () => {
    writeRepo(readFileSync(join(REPO_ROOT, 'templates', 'config.yaml'), 'utf8'));
    const c = loadConfig({ root, home, env: {} });
    expect(c.rules.map((r) => r.id)).toEqual(['no-secrets']);
    expect(c.rules[0]!.secrets).toBe(true);
    expect(c.hooks['pre-commit'].fix).toBe('propose');
  });
});
