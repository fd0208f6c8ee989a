/**
 * The installed hooks catch a commit that skipped pre-commit: `git commit --no-verify`
 * prints the violation loudly with the undo command and records it in SessionDB; a commit
 * the pre-commit hook judged says nothing. Real `hermesd init`, real git, real daemon.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionDB } from '../../src/sessions/db.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files; change the schema and run npm run gen.
    protect: ["src/generated/**"]
`;

describe('post-commit audit through the installed hooks', () => {
  let t: TestEnv;
  afterEach(async () => {
    await t.cleanup();
  });

  it('--no-verify is caught and recorded; a judged commit is quiet', async () => {
    t = makeEnv();
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': CONFIG, 'src/generated/api.ts': 'export const v = 1;\n' });
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    const git = (...a: string[]) => spawnSync('git', a, { cwd: repo, env: t.env, encoding: 'utf8', timeout: 60_000 });

    writeFileSync(join(repo, 'README.md'), '# demo\nmore\n');
    git('add', 'README.md');
    const ok = git('commit', '-m', 'judged');
    expect(ok.status, ok.stderr + ok.stdout).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain('SKIPPED');
    // The record of the judgement is in the daemon's memory, not in a file an agent could write.
    expect(existsSync(join(repo, '.git', 'hermesd', 'precommit-ok'))).toBe(false);

    writeFileSync(join(repo, 'src/generated/api.ts'), 'export const v = 2;\n');
    git('add', '-A');
    const sneaky = git('commit', '--no-verify', '-m', 'sneaky');
    expect(sneaky.status).toBe(0);
    const said = sneaky.stdout + sneaky.stderr;
    expect(said).toContain('SKIPPED the pre-commit hook');
    expect(said).toContain('src/generated/api.ts');
    expect(said).toContain('[generated-files]');
    expect(said).toContain('git reset --soft HEAD~1');

    const found = await t.cli(['sessions', 'search', 'skipped pre-commit hook', '--json'], { cwd: repo });
    expect(found.code, found.stderr).toBe(0);
    expect(found.json().results.length).toBeGreaterThan(0);
    const db = new SessionDB(join(t.home, 'state.db'));
    try {
      const s = db.getSession(found.json().results[0].sessionId)!;
      expect(s.source).toBe('hook');
    } finally {
      db.close();
    }
  }, 120_000);
});
