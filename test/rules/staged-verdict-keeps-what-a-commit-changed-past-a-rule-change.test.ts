/**
 * What the judgement of a staged snapshot read (the changes against HEAD) is a fact about git's
 * objects, not about the rules: when the rules or the authority change (`forget`: the verdicts
 * are dropped), the changes of the snapshot stay, so a commit whose pre-commit was answered and
 * whose post-commit comes after the change still lists its files without a `git diff-tree`
 * (the daemon's watcher says "authority changed" once it is ready, which can fall between a
 * commit's two hooks). A real repository and index, the class the daemon keeps.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { stagedTreeOf } from '../../src/git/index-file.js';
import { StagedVerdicts } from '../../src/rules/staged-verdict.js';
import { makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

describe('the changes a judgement read outlive a change of the rules', () => {
  let t: TestEnv;
  afterEach(async () => {
    await t.cleanup();
  });

  it("keeps a snapshot's changes on its parent after forget, and only for that tree and parent", async () => {
    t = makeEnv();
    const repo = t.repo({
      '.hermes/config.yaml': 'rules:\n  - id: no-aws-keys\n    message: Never commit credentials.\n    forbid: "AKIA[0-9A-Z]{16}"\n',
      'a.txt': 'a\n',
      'gone.txt': 'g\n',
    });
    const git = (...args: string[]) => {
      const r = spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout.trim();
    };
    writeFiles(repo, { 'a.txt': 'a2\n', 'b.txt': 'b\n' });
    git('rm', '-q', 'gone.txt');
    git('add', '-A');
    const parent = git('rev-parse', 'HEAD');
    const index = join(repo, '.git', 'index');
    const tree = stagedTreeOf(index)!;
    expect(tree, 'the staged tree could not be read without git').toBe(git('write-tree'));

    const verdicts = new StagedVerdicts({ root: repo, gitDir: join(repo, '.git'), commonDir: join(repo, '.git'), env: t.env });
    await verdicts.judgeAhead(loadConfig({ root: repo, home: t.home, env: t.env }));
    const listed = (changes: ReturnType<StagedVerdicts['changesOf']>) => changes?.map((c) => `${c.status} ${c.path}`).sort();
    expect(listed(verdicts.changesOf(tree, parent)), 'the judgement ahead kept no changes for the snapshot').toEqual(['A b.txt', 'D gone.txt', 'M a.txt']);

    // The rules changed (config-changed, authority-changed): the verdicts go, the changes stay.
    verdicts.forget();
    expect(listed(verdicts.changesOf(tree, parent)), "the snapshot's changes were dropped with the verdicts").toEqual(['A b.txt', 'D gone.txt', 'M a.txt']);
    // Another tree, or the same tree on another parent, is not this snapshot.
    expect(verdicts.changesOf(git('rev-parse', 'HEAD^{tree}'), parent), 'changes were given for a tree that was not judged').toBeUndefined();
    expect(verdicts.changesOf(tree, tree), 'changes were given for a parent that was not judged').toBeUndefined();
  });
});
