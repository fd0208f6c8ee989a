/**
 * The curator: a user skill unused for `skills.archiveAfterDays` is proposed for archiving
 * (never archived without the user's accept), the accept moves it into the skills
 * repository's `.archive/` as one commit — out of the index, not deleted — and
 * `hermesd skills revert` brings it back as it was. A skill viewed recently is left alone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { git, makeEnv, type TestEnv } from '../helpers/env.js';
import { skillMd } from '../helpers/skills.js';

type Summary = { id: string; kind: string; summary: string; source: string };

describe('archiving unused skills', () => {
  let t: TestEnv;
  let repo: string;
  let client: DaemonClient;
  const cli = (...args: string[]) => t.cli(args, { cwd: repo });

  beforeAll(async () => {
    t = makeEnv();
    // About 4.3 s without a view or a change makes a skill unused here (the default is 90 days).
    writeFileSync(join(t.home, 'config.yaml'), 'skills:\n  archiveAfterDays: 0.00005\nplacement:\n  classifier: rules\n');
    repo = t.repo();
    expect((await cli('start')).code).toBe(0);
    client = new DaemonClient((await cli('status', '--json')).json().socket);
    for (const name of ['old-deploy', 'daily-triage']) {
      await client.call('POST', '/v1/skills/manage', {
        action: 'create',
        name,
        category: 'ops',
        content: skillMd(name, `Use when doing ${name}.`),
        session_id: 'test',
      });
    }
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('proposes archiving the skill nobody used, leaves the viewed one, and changes nothing before the accept', async () => {
    await new Promise((r) => setTimeout(r, 4_500));
    // A view counts as use.
    expect((await cli('skills', 'view', 'daily-triage')).code).toBe(0);
    await client.call('POST', '/v1/review', { session_id: 'no-such-session' });
    let list: Summary[] = [];
    const end = Date.now() + 20_000;
    while (list.length === 0 && Date.now() < end) {
      list = (await client.call<{ proposals: Summary[] }>('GET', '/v1/proposals')).proposals;
      if (list.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(list).toEqual([expect.objectContaining({ kind: 'skill-archive', source: 'curator', summary: expect.stringContaining('old-deploy') })]);
    expect(
      (await cli('skills', 'list', '--json'))
        .json()
        .skills.map((s: { name: string }) => s.name)
        .sort(),
    ).toEqual(['daily-triage', 'old-deploy']);
  });

  it('accepting archives in one commit, out of the index but kept; skills revert brings it back', async () => {
    const skillsRepo = join(t.home, 'skills');
    const commitsBefore = Number(git(skillsRepo, 'rev-list', '--count', 'HEAD').trim());
    const original = readFileSync(join(skillsRepo, 'ops', 'old-deploy', 'SKILL.md'), 'utf8');
    const [p] = (await client.call<{ proposals: Summary[] }>('GET', '/v1/proposals')).proposals;
    const accepted = await cli('proposals', 'accept', p!.id);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('hermesd skills revert old-deploy');

    expect(Number(git(skillsRepo, 'rev-list', '--count', 'HEAD').trim())).toBe(commitsBefore + 1);
    expect((await cli('skills', 'list', '--json')).json().skills.map((s: { name: string }) => s.name)).toEqual(['daily-triage']);
    expect(existsSync(join(skillsRepo, 'ops', 'old-deploy'))).toBe(false);
    // Not deleted: in the archive folder and in the repository's history.
    expect(readFileSync(join(skillsRepo, '.archive', 'ops', 'old-deploy', 'SKILL.md'), 'utf8')).toBe(original);
    expect(git(skillsRepo, 'show', 'HEAD:.archive/ops/old-deploy/SKILL.md')).toBe(original);

    const history = (await cli('skills', 'history', 'old-deploy', '--json')).json().commits;
    expect(history[0].message).toMatch(/^archive old-deploy \(unused for \d+ days\)/);
    const revert = await cli('skills', 'revert', 'old-deploy', `${history[0].rev}~1`);
    expect(revert.code, revert.stderr).toBe(0);
    expect(
      (await cli('skills', 'list', '--json'))
        .json()
        .skills.map((s: { name: string }) => s.name)
        .sort(),
    ).toEqual(['daily-triage', 'old-deploy']);
    expect(readFileSync(join(skillsRepo, 'ops', 'old-deploy', 'SKILL.md'), 'utf8')).toBe(original);
    expect(existsSync(join(skillsRepo, '.archive', 'ops', 'old-deploy'))).toBe(false);
    expect(git(skillsRepo, 'status', '--porcelain')).toBe('');
  });
});
