/**
 * SessionDB's redaction takes out the values every version of the repository's secret files
 * held, and reading them is a walk of git's whole history the first time (seconds in a large
 * repository). The daemon reads it without blocking, from the start of its services; the first
 * record waits for it, not the daemon: other questions are answered meanwhile, and the record,
 * once written, has the history's values taken out. The history's read is held here by a `git`
 * ahead of the real one on PATH, until the test lets it go: the order is proven, not timed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, makeEnv, waitFor } from '../helpers/env.js';
import { claudeWrite } from '../helpers/transport.js';

/** A value only the history holds: a `.env` committed once, then removed. */
const OLD_TOKEN = 'hist-' + 'b7c1e9f04a2d6e8c';

describe("the first record after the daemon's start", () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('waits for the history of secret files while the daemon answers, and takes out its values', async () => {
    const repo = t.repo({ 'README.md': '# demo\n', '.env': `API_TOKEN=${OLD_TOKEN}\n` });
    const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8' });
    expect(git('rm', '-q', '.env').status).toBe(0);
    expect(git('commit', '-qm', 'drop the env file').status).toBe(0);

    // A git whose history read (log --name-only --diff-filter=AMRC) waits while `hold` exists; every other call is git's own.
    const bin = join(t.home, 'bin');
    const hold = join(t.home, 'hold');
    const reading = join(t.home, 'reading');
    mkdirSync(bin);
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { env: t.env, encoding: 'utf8' }).stdout.trim();
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh
case " $* " in *" --name-only "*"--diff-filter=AMRC"*)
  : > '${reading}'
  while [ -e '${hold}' ]; do sleep 0.05; done ;;
esac
exec '${realGit}' "$@"
`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    const env = { PATH: `${bin}:${t.env.PATH}` };
    writeFileSync(hold, '');
    try {
      expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo, env })).code).toBe(0);
      const started = await t.cli(['start'], { cwd: repo, env });
      expect(started.code, `hermesd start failed: ${started.stderr}`).toBe(0);
      await waitFor(() => existsSync(reading), 20_000).catch(() => {
        throw new Error("the daemon's services did not start reading the secret files' history (no history read reached git)");
      });

      // A commit through the hooks: its post-commit record is the daemon's first, and names the old value.
      writeFileSync(join(repo, 'README.md'), '# demo\nmore\n');
      const commit = spawnSync('git', ['commit', '-qam', `rotate ${OLD_TOKEN}`], { cwd: repo, env: { ...t.env, ...env }, encoding: 'utf8', timeout: 60_000 });
      expect(commit.status, `the commit failed while the history was being read: ${commit.stderr}`).toBe(0);

      // The daemon answers meanwhile: another agent's Write is judged (allowed), the history still being read.
      const write = await claudeWrite(t, repo, 'notes.md', { env });
      expect(existsSync(hold), 'the test let the history go before asking').toBe(true);
      expect(
        `${write.code} ${write.stdout}${write.stderr}`,
        "a question asked while the history was read was not answered: the daemon's first record held it",
      ).not.toMatch(/could not be judged|"deny"/);
      expect(write.code).toBe(0);
      const before = await t.cli(['sessions', 'list', '--json'], { cwd: repo, env });
      expect(before.code, before.stderr).toBe(0);
      expect(JSON.stringify(before.json()), 'the commit was recorded before the history was read: its redaction could not know the old value').not.toContain(
        'rotate',
      );
    } finally {
      rmSync(hold, { force: true });
    }

    // Once the history is read, the record is written, the old value taken out.
    let sessions = '';
    await waitFor(
      () => {
        const r = spawnSync(process.execPath, [CLI, 'sessions', 'list', '--json'], {
          cwd: repo,
          env: { ...t.env, ...env },
          encoding: 'utf8',
        });
        sessions = r.stdout;
        return r.status === 0 && sessions.includes('rotate');
      },
      30_000,
      100,
    ).catch(() => {
      throw new Error(`the commit's record was never written after the history was read: ${sessions.slice(0, 500)}`);
    });
    expect(sessions, 'the record holds a value of a secret file only the history has').not.toContain(OLD_TOKEN);
    expect(sessions).toContain('[REDACTED');
  }, 120_000);
});
