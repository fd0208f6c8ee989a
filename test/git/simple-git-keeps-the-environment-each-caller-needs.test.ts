/**
 * simple-git runs git for the skills repository and for `doctor`, and it drops every
 * GIT_* variable it is not told to keep. Each caller must still see what it needs: `doctor`
 * reads core.hooksPath as the user's git does (a GIT_CONFIG_GLOBAL changes the answer), and the
 * skills repository never follows a GIT_DIR or GIT_INDEX_FILE the daemon inherited from a hook.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillStore } from '../../src/skills/store.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { skillMd } from '../helpers/skills.js';

describe('simple-git keeps the environment each caller needs', () => {
  let t: TestEnv;
  let repo: string;

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("doctor reads core.hooksPath and the version as the user's git does, GIT_CONFIG_GLOBAL included", async () => {
    const global = join(t.home, 'global.gitconfig');
    writeFileSync(global, '[core]\n\thooksPath = /opt/company-hooks\n');
    const r = await t.cli(['doctor'], { cwd: repo, env: { GIT_CONFIG_GLOBAL: global } });
    expect(r.stdout).toMatch(/hookspath +core\.hooksPath = \/opt\/company-hooks/);
    expect(r.stdout).toMatch(/ok +git +git version \d+\.\d+/);
    const plain = await t.cli(['doctor', '--json'], { cwd: repo });
    expect(plain.json().checks.find((c: { name: string }) => c.name === 'hookspath').detail).toMatch(/^core\.hooksPath unset/);
  });

  it("a skill change commits in the skills repository, never in the repository a hook's GIT_DIR names", async () => {
    const before = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const index = readFileSync(join(repo, '.git', 'index'));
    const saved = { GIT_DIR: process.env.GIT_DIR, GIT_INDEX_FILE: process.env.GIT_INDEX_FILE, GIT_WORK_TREE: process.env.GIT_WORK_TREE };
    // What a daemon started from a pre-commit hook inherits.
    process.env.GIT_DIR = join(repo, '.git');
    process.env.GIT_INDEX_FILE = join(repo, '.git', 'index');
    process.env.GIT_WORK_TREE = repo;
    try {
      const home = join(t.home, 'skills-home');
      mkdirSync(home, { recursive: true });
      const store = new SkillStore({ home });
      const r = await store.manage({ action: 'create', name: 'deploy', content: skillMd('deploy', 'Deploy the service.') }, { sessionId: 's1' });
      expect(r).toMatchObject({ success: true });
      const history = await store.history('deploy');
      expect(history.commits.length).toBeGreaterThanOrEqual(1);
      expect(history.commits[0]).toMatchObject({ rev: expect.stringMatching(/^[0-9a-f]{40}$/), message: expect.stringContaining('deploy') });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(gitIn(t, repo, 'rev-parse', 'HEAD').trim()).toBe(before);
    expect(readFileSync(join(repo, '.git', 'index')).equals(index)).toBe(true);
  });
});
