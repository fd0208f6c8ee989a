/**
 * The git policy asks whether an invocation runs with another core.hooksPath than the
 * repository's own (an included file, GIT_CONFIG_GLOBAL, `-c include.path=…`). Only an
 * invocation with config of its own can: one without any is answered without running git,
 * which two git runs per agent `git commit` / `git add` cost (~7 ms a tool call). A git that
 * records each run shows which asks ran it; the answers are the real git's.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProbe } from '../../src/guard/git-probe.js';
import { findRealGit } from '../../src/git/real-git.js';
import { cleanGitEnv } from '../../src/git/env.js';
import { judgeTool } from '../../src/guard/tool-judge.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

describe('the git probe of core.hooksPath', () => {
  let t: TestEnv;
  let repo: string;
  let recordingGit: string;
  let log: string;
  const runs = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0);

  beforeEach(() => {
    t = makeEnv();
    repo = t.repo({ 'hooks.cfg': '[core]\n\thooksPath = /dev/null\n' });
    log = join(dirname(repo), 'git-runs');
    recordingGit = join(dirname(repo), 'recording-git');
    writeFileSync(recordingGit, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${findRealGit(t.env)}' "$@"\n`);
    chmodSync(recordingGit, 0o755);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('runs no git for an invocation without config of its own', () => {
    expect(makeProbe(recordingGit, [], repo, t.env).hooksPathOverridden()).toBe(false);
    expect(makeProbe(recordingGit, ['-C', repo], repo, t.env).hooksPathOverridden()).toBe(false);
    expect(runs()).toBe(0);
  });

  it('asks git when the invocation brings config: -c include.path, --config-env, GIT_CONFIG_GLOBAL', () => {
    const cfg = join(repo, 'hooks.cfg');
    expect(makeProbe(recordingGit, ['-c', `include.path=${cfg}`], repo, t.env).hooksPathOverridden()).toBe(true);
    expect(runs()).toBe(2);
    expect(makeProbe(recordingGit, ['--config-env=include.path=HD_INCLUDE'], repo, { ...t.env, HD_INCLUDE: cfg }).hooksPathOverridden()).toBe(true);
    expect(makeProbe(recordingGit, [], repo, { ...t.env, GIT_CONFIG_GLOBAL: cfg }).hooksPathOverridden()).toBe(true);
    // Config of its own that leaves core.hooksPath alone: asked, and not overridden.
    writeFileSync(join(repo, 'other.cfg'), '[pull]\n\trebase = true\n');
    expect(makeProbe(recordingGit, [], repo, { ...t.env, GIT_CONFIG_GLOBAL: join(repo, 'other.cfg') }).hooksPathOverridden()).toBe(false);
    expect(runs()).toBe(8);
  });

  it("an agent's `git commit` judged by the daemon runs no git: the judge's own environment (its stored view of the repository, GIT_CONFIG_COUNT…) is not the invocation's config", () => {
    const gitEnv = cleanGitEnv(t.env);
    expect(gitEnv.GIT_CONFIG_COUNT).toBeDefined();
    const jc = { root: repo, config: { rules: [] }, gitBin: recordingGit, gitEnv, home: dirname(repo) };
    expect(judgeTool(jc, { kind: 'shell', command: 'git add -A && git commit -m x', cwd: repo }, repo)).toBeUndefined();
    expect(runs()).toBe(0);
    // Config the command itself brings is still asked about.
    const cfg = join(repo, 'hooks.cfg');
    expect(judgeTool(jc, { kind: 'shell', command: `GIT_CONFIG_GLOBAL=${cfg} git commit -m x`, cwd: repo }, repo)?.message).toMatch(/hooks/i);
    expect(runs()).toBe(2);
  });
});
