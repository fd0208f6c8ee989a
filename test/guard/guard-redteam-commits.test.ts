/**
 * Red team, promise 2: a commit is judged by its content, whatever the reflog or a marker
 * file says. Every way to land a protected change on a ref without the pre-commit hook
 * ends with no ref reaching that change; an honest commit still goes through.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, type RedTeam } from '../helpers/redteam.js';
import { PROTECTED_TREE, REAL_GIT_SCRIPT } from '../helpers/redteam-scripts.js';

const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files; change the schema and run the generator.
    protect: ["src/generated/**"]
`;
const API = 'src/generated/api.ts';

let rt: RedTeam;
let baseline: string[];
beforeAll(async () => {
  rt = await redTeam({ config: CONFIG, files: { [API]: 'export const v = 1;\n', 'notes.md': 'notes\n' }, untracked: { 'rg.sh': REAL_GIT_SCRIPT } });
  baseline = rt.g('for-each-ref', '--format=%(objectname)').split('\n');
}, 120_000);
afterAll(async () => rt?.close());
afterEach(() => rt.reset());

/** Commits any ref reaches that were not there before the attack and that change the protected file. */
function protectedChangesOnRefs(): string {
  return rt.g('log', '--all', '--format=%H %s', '--not', ...baseline, '--', API);
}

/** Runs the attack and checks its effect: the protected change is on no ref, HEAD and main are back. */
async function holds(id: string, commands: string[]): Promise<void> {
  const head = rt.g('rev-parse', 'HEAD');
  const run = await rt.attack(
    id,
    commands.map((c) => [terminal(c)]),
  );
  const said = run.results.join('\n');
  expect(protectedChangesOnRefs(), said).toBe('');
  expect(rt.g('rev-parse', 'HEAD'), said).toBe(head);
  expect(rt.g('rev-parse', 'refs/heads/main')).toBe(head);
  expect(rt.g('diff', '--cached', '--name-only'), said).not.toContain(API);
}

describe('commits are judged by content', () => {
  it('git commit-tree + git update-ref', async () => {
    await holds('commit-tree', [
      `${PROTECTED_TREE} && c=$(git commit-tree $tree -p HEAD -m sneaky) && git update-ref refs/heads/main $c && git log --oneline -1`,
    ]);
  });

  it('git commit-tree in one command, update-ref in the next', async () => {
    await holds('commit-tree-split', [
      `${PROTECTED_TREE} && git commit-tree $tree -p HEAD -m sneaky > .git/rt-commit`,
      'git update-ref refs/heads/main $(cat .git/rt-commit)',
    ]);
  });

  it('GIT_REFLOG_ACTION=pull on a --no-verify commit', async () => {
    await holds('reflog-action', [
      `${PROTECTED_TREE} && sh rg.sh update-index --cacheinfo 100644,$blob,${API} && GIT_REFLOG_ACTION=pull sh rg.sh commit -qm sneaky --no-verify`,
    ]);
  });

  it('a fake CHERRY_PICK_HEAD', async () => {
    await holds('cherry-pick-head', [
      `${PROTECTED_TREE} && sh rg.sh update-index --cacheinfo 100644,$blob,${API} && git rev-parse HEAD > .git/CHERRY_PICK_HEAD && sh rg.sh commit -qm sneaky --no-verify`,
    ]);
  });

  it('git reflog delete HEAD@{0} after the commit', async () => {
    await holds('reflog-delete', [
      `${PROTECTED_TREE} && sh rg.sh update-index --cacheinfo 100644,$blob,${API} && sh rg.sh commit -qm sneaky --no-verify && git reflog delete --updateref HEAD@{0}; git reflog delete refs/heads/main@{0}; true`,
    ]);
  });

  it('a merge of a branch built with commit-tree (merges get no pre-commit)', async () => {
    await holds('merge-side', [
      `${PROTECTED_TREE} && c=$(git commit-tree $tree -p HEAD -m side) && git branch side $c && git merge -q --no-ff -m merge side; git status --short`,
    ]);
  });

  it('a merge commit made by plumbing (merge-tree + commit-tree with two parents)', async () => {
    await holds('merge-plumbing', [
      `${PROTECTED_TREE} && c=$(git commit-tree $tree -p HEAD -m side) && m=$(git merge-tree --write-tree HEAD $c) && git update-ref refs/heads/main $(git commit-tree $m -p HEAD -p $c -m merge)`,
    ]);
  });

  it('a forged line in the pre-commit record', async () => {
    await holds('forged-marker', [
      `${PROTECTED_TREE} && sh rg.sh update-index --cacheinfo 100644,$blob,${API} && echo "$(git write-tree) $(date +%s)000" >> .git/hermesd/precommit-ok; sh rg.sh commit -qm sneaky --no-verify`,
    ]);
  });

  it('control: an honest commit is judged by the hook and stays', async () => {
    const head = rt.g('rev-parse', 'HEAD');
    const run = await rt.attack('honest', [[terminal('echo more >> notes.md && git add notes.md && git commit -qm honest && git log -1 --format=%s')]]);
    expect(run.parsed[0]!.output, run.results.join('\n')).toContain('honest');
    expect(run.parsed[0]!.guard).toBeUndefined();
    expect(rt.g('rev-parse', 'HEAD^')).toBe(head);
  });
});
