/**
 * A refused commit's record in SessionDB is written after git has the answer: the answer waits
 * for no SessionDB write (nor for the redaction the record passes through to be ready). Proven
 * by order, not by timing: another process holds SessionDB's write lock while the commit runs,
 * so no record can be written until the commit has returned; the commit is refused all the
 * same, and its record is there once the lock is let go.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, commitIn, gitIn, makeEnv, waitFor, writeFiles } from '../helpers/env.js';
import { guardedConfig, KEY } from '../helpers/transport.js';

describe("the pre-commit's record", () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('a refused commit is answered while another writer holds SessionDB, and its record lands once the writer lets go', async () => {
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': guardedConfig() });
    expect((await t.cli(['init'], { cwd: repo })).code, 'hermesd init failed').toBe(0);
    // SessionDB made by the daemon (its schema), before another process takes its lock.
    const listed = await t.cli(['sessions', 'list'], { cwd: repo });
    expect(listed.code, `hermesd sessions list failed: ${listed.stderr}`).toBe(0);

    const holder = new Database(join(t.home, 'state.db'));
    let refused: ReturnType<typeof commitIn>;
    try {
      holder.exec('BEGIN IMMEDIATE');
      writeFiles(repo, { 'creds.txt': `aws = "${KEY}"\n` });
      gitIn(t, repo, 'add', 'creds.txt');
      refused = commitIn(t, repo, ['-qm', 'creds']);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    expect(refused.code, `the commit of a key was not refused while SessionDB was held by another writer: ${refused.out}`).toBe(1);
    expect(refused.out, 'the refusal does not name the rule (did the answer wait for SessionDB until the client gave up?)').toContain('no-aws-keys');

    // The record is written after the answer, once SessionDB takes writes again.
    let found = '';
    await waitFor(
      () => {
        const r = spawnSync(process.execPath, [CLI, 'sessions', 'search', 'pre-commit refused', '--json'], { cwd: repo, env: t.env, encoding: 'utf8' });
        found = r.status === 0 ? (JSON.parse(r.stdout).results as Array<{ snippet: string }>).map((h) => h.snippet).join('\n') : r.stderr;
        return found.includes('no-aws-keys');
      },
      20_000,
      200,
    ).catch(() => {
      throw new Error(`the refused commit left no record in SessionDB once the other writer let go: ${found.slice(0, 500)}`);
    });
  }, 120_000);
});
