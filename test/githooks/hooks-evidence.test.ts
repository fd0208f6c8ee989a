import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** git with the test's environment: the hooks it triggers talk to the test daemon. */
async function searchUntilFound(t: TestEnv, repo: string, query: string): Promise<Array<{ sessionId: string; snippet: string }>> {
  const end = Date.now() + 10_000;
  for (;;) {
    const r = await t.cli(['sessions', 'search', query, '--json'], { cwd: repo });
    const results = r.code === 0 ? (r.json().results as Array<{ sessionId: string; snippet: string }>) : [];
    if (results.length || Date.now() > end) return results;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('post-commit, post-merge, post-checkout and post-rewrite record evidence in SessionDB', () => {
  let t: TestEnv;
  let repo: string;
  beforeEach(async () => {
    t = makeEnv();
    repo = t.repo({ 'a.txt': 'a\n' });
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    await t.cli(['start'], { cwd: repo });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('records commits, merges, checkouts and rewrites with their messages and files, searchable', async () => {
    writeFiles(repo, { 'zebra.txt': 'z\n' });
    gitIn(t, repo, 'add', 'zebra.txt');
    gitIn(t, repo, 'commit', '-qm', 'Add the zebrafish feature');
    const commit = await searchUntilFound(t, repo, 'zebrafish');
    expect(commit.length).toBeGreaterThan(0);
    const shown = await t.cli(['sessions', 'show', commit[0]!.sessionId, '--json'], { cwd: repo });
    expect(shown.json().session.source).toBe('hook');
    expect(shown.json().messages[0].content).toContain('zebra.txt');

    gitIn(t, repo, 'checkout', '-q', '-b', 'topic');
    expect((await searchUntilFound(t, repo, 'topic')).length).toBeGreaterThan(0);
    writeFiles(repo, { 'b.txt': 'b\n' });
    gitIn(t, repo, 'add', 'b.txt');
    gitIn(t, repo, 'commit', '-qm', 'Topic work on the aardvark');
    gitIn(t, repo, 'commit', '-q', '--amend', '-m', 'Topic work on the aardvark, amended');
    const rewrite = await searchUntilFound(t, repo, 'amend');
    expect(rewrite.some((r) => r.snippet.includes('rewrote') || r.snippet.includes('amend'))).toBe(true);
    gitIn(t, repo, 'checkout', '-q', 'main');
    gitIn(t, repo, 'merge', '-q', '--no-ff', '-m', 'Merge the okapi branch', 'topic');
    const merge = await searchUntilFound(t, repo, 'okapi');
    expect(merge.length).toBeGreaterThan(0);
  });
});
