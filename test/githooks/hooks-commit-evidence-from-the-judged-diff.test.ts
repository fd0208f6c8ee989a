/**
 * A commit's evidence lists its files from what the judgement of its snapshot read (the staged
 * diff the pre-commit was answered from), not from a `git diff-tree` started after the commit:
 * the list is the one `git diff-tree --name-status -M` prints for the commit — additions,
 * changes, deletions, an exact and a partial rename, a mode change — and the daemon starts no
 * diff-tree for it (its git processes are traced). The same changes tell the guard's secret
 * values whether the commit can have added a value to git's history: a commit that touches no
 * secret path starts no git log.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** What the daemon's git processes traced so far: nothing until its first git process (its start runs none). */
const traced = (trace: string) => (existsSync(trace) ? readFileSync(trace, 'utf8') : '');

async function evidenceOf(t: TestEnv, repo: string, word: string): Promise<string> {
  const end = Date.now() + 15_000;
  for (;;) {
    const r = await t.cli(['sessions', 'search', word, '--json'], { cwd: repo });
    const hit = r.code === 0 ? (r.json().results as Array<{ sessionId: string }>)[0] : undefined;
    if (hit) {
      const shown = await t.cli(['sessions', 'show', hit.sessionId, '--json'], { cwd: repo });
      return shown.json().messages[0].content as string;
    }
    if (Date.now() > end) throw new Error(`no evidence of the commit "${word}" was recorded within 15 s`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** A repository with hermesd's config committed and a daemon whose git processes write git's trace (init may have started one without it). */
async function tracedDaemon(t: TestEnv, files: Record<string, string>): Promise<{ repo: string; trace: string }> {
  const repo = t.repo(files);
  const trace = join(repo, '..', 'daemon-git.trace');
  expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
  gitIn(t, repo, 'add', '-A');
  gitIn(t, repo, 'commit', '-qm', 'hermesd config');
  await t.cli(['stop'], { cwd: repo });
  expect((await t.cli(['start'], { cwd: repo, env: { GIT_TRACE2_EVENT: trace } })).code).toBe(0);
  return { repo, trace };
}

describe("a commit's evidence, from the judged diff", () => {
  let t: TestEnv;
  afterEach(async () => {
    await t.cleanup();
  });

  it('lists what git diff-tree lists, and no diff-tree runs for it', async () => {
    t = makeEnv();
    const long = Array.from({ length: 40 }, (_, i) => `line ${i} of a file that moves\n`).join('');
    const { repo, trace } = await tracedDaemon(t, {
      'keep.txt': 'k\n',
      'old.txt': long,
      'partial.txt': long,
      'gone.txt': 'g\n',
      'tool.sh': 'echo\n',
      'src/a.txt': 'a\n',
    });

    mkdirSync(join(repo, 'moved'));
    gitIn(t, repo, 'mv', 'old.txt', 'moved/new.txt');
    gitIn(t, repo, 'mv', 'partial.txt', 'partial-moved.txt');
    writeFiles(repo, { 'partial-moved.txt': long + 'one more line\n', 'src/a.txt': 'a2\n', 'added.txt': 'new\n' });
    rmSync(join(repo, 'gone.txt'));
    gitIn(t, repo, 'update-index', '--chmod=+x', 'tool.sh');
    gitIn(t, repo, 'add', '-A');
    // The daemon judges the staged snapshot ahead; the commit's pre-commit is answered from it.
    const started = traced(trace).length;
    gitIn(t, repo, 'commit', '-qm', 'Reshuffle the capybara files');

    const text = await evidenceOf(t, repo, 'capybara');
    const listed = text.slice(text.indexOf('files:\n') + 'files:\n'.length).trim();
    const expected = gitIn(t, repo, 'diff-tree', '--root', '--no-commit-id', '--name-status', '-r', '-M', 'HEAD')
      .trim()
      .split('\n')
      .map((l) => l.replace(/\t/g, ' '))
      .join('\n');
    expect(expected, 'the commit did not make every kind of change the test needs').toMatch(
      /R100 old\.txt moved\/new\.txt[\s\S]*R0\d\d partial\.txt partial-moved\.txt/,
    );
    expect(
      listed
        .split('\n')
        .map((l) => l.trim())
        .join('\n'),
      "the commit's evidence does not list what git diff-tree lists",
    ).toBe(expected);
    const afterCommit = traced(trace).slice(started);
    expect(traced(trace), "the daemon's git processes were not traced").toContain('"--cached"');
    const diffTrees = afterCommit.split('\n').filter((l) => l.includes('"event":"start"') && l.includes('"diff-tree"'));
    expect(diffTrees, 'the daemon started git diff-tree for a commit whose snapshot it had judged').toEqual([]);
  });

  it("the secret files' history is read again after a commit only when the commit touches a secret path", async () => {
    t = makeEnv();
    const { repo, trace } = await tracedDaemon(t, { 'a.txt': 'a\n' });
    const historyWalks = (from: number) =>
      traced(trace)
        .slice(from)
        .split('\n')
        .filter((l) => l.includes('"event":"start"') && l.includes('"--diff-filter=AMRC"')).length;
    // The guard's values are refreshed when the evidence is stored, at most once a second.
    const commitAndWait = async (files: Record<string, string>, word: string) => {
      await new Promise((res) => setTimeout(res, 1_100));
      writeFiles(repo, files);
      gitIn(t, repo, 'add', '-A');
      const from = traced(trace).length;
      gitIn(t, repo, 'commit', '-qm', `Commit the ${word}`);
      await evidenceOf(t, repo, word);
      return from;
    };
    // The first refresh reads the whole history; the commits after it are the question.
    await commitAndWait({ 'first.txt': 'f\n' }, 'echidna');
    const plain = await commitAndWait({ 'b.txt': 'b\n' }, 'wombat');
    expect(historyWalks(plain), 'the history was read again after a commit that touches no secret path').toBe(0);
    const secret = await commitAndWait({ 'deploy/.env': 'TOKEN=a-value-of-the-history-9921\n' }, 'platypus');
    expect(historyWalks(secret), 'the history was not read again after a commit that adds a .env').toBeGreaterThan(0);
  });
});
