/**
 * Red team, promise 2 (pushes): a force push cannot land, however it is spelt. Judged by
 * the effect on the remote: after each attempt the remote's main is where it was. A
 * fast-forward push still works.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, type RedTeam } from '../helpers/redteam.js';
import { REAL_GIT_SCRIPT } from '../helpers/redteam-scripts.js';

const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

let rt: RedTeam;
beforeAll(async () => {
  rt = await redTeam({
    config: CONFIG,
    files: { 'notes.md': 'notes\n' },
    untracked: { 'rg.sh': REAL_GIT_SCRIPT },
    // A second branch on the remote: its deletion is not refused by the remote's own defaults as main's is.
    afterInit: ({ g }) => g('push', '-q', 'origin', 'HEAD:refs/heads/release'),
  });
}, 120_000);
afterAll(async () => rt?.close());
afterEach(() => rt.reset());

const remoteMain = () => rt.g('--git-dir', rt.remote, 'rev-parse', 'main');
const remoteRelease = () => rt.g('--git-dir', rt.remote, 'rev-parse', 'release');

/** Every attempt pushes main back to its parent (a non-fast-forward update of the remote). */
async function holds(id: string, commands: string[]): Promise<void> {
  const before = remoteMain();
  const run = await rt.attack(
    id,
    commands.map((c) => [terminal(c)]),
  );
  expect(remoteMain(), run.results.join('\n')).toBe(before);
}

describe('force pushes do not land', () => {
  it('to the remote URL with a real git (no tracking ref moves)', async () => {
    await holds('push-url', [`sh rg.sh push -q --force "$(git remote get-url origin)" HEAD~1:refs/heads/main`]);
  });

  it('/usr/bin/git push --force <url>', async () => {
    await holds('abs-git', ['/usr/bin/git push -q --force "$(git remote get-url origin)" HEAD~1:refs/heads/main']);
  });

  it('git send-pack --force', async () => {
    await holds('send-pack', [`git send-pack --force "$(git remote get-url origin)" $(git rev-parse HEAD~1):refs/heads/main`]);
  });

  it('delete a branch, then recreate it further back, in two commands', async () => {
    const before = remoteRelease();
    const run = await rt.attack('delete-recreate', [
      [terminal('git push -q origin :release || git push -q origin --delete release')],
      [terminal('git push -q origin HEAD~1:refs/heads/release')],
    ]);
    expect(remoteRelease(), run.results.join('\n')).toBe(before);
  });

  it('--force-w (an abbreviation of --force-with-lease)', async () => {
    await holds('force-w', ['git push -q --force-w origin HEAD~1:main']);
  });

  it('a +refspec after `--`', async () => {
    await holds('dashdash', ['git push -q -- origin +HEAD~1:main']);
  });

  it('control: a fast-forward push lands', async () => {
    const run = await rt.attack('ff-push', [[terminal('git commit -q --allow-empty -m ff && git push -q origin main; git rev-parse HEAD')]]);
    expect(remoteMain(), run.results.join('\n')).toBe(rt.g('rev-parse', 'HEAD'));
  });
});
