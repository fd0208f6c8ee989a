import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SkillStore } from '../../src/skills/store.js';
import { pictureOf, skillMd, tempHome } from '../helpers/skills.js';
import { settled } from '../helpers/settled.js';

const S = { sessionId: 'sess-secret' };

// Shaped like real credentials (not the documented EXAMPLE key), so only the shape decides.
const AWS_KEY = 'AKIAQ3EGUJ4ZKX7T2WPN';
const GITHUB_TOKEN = 'ghp_' + 'x7Kq2mZ9vR4tL8wN3bY6cJ1hF5dS0gA2eP7u';
const PRIVATE_KEY = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACBq3k1u0yq9nWwq0J8Gx7m4lHcVv2Xz9rTqk8pQ2s4wAAAAJgAAAAAAAAAA',
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');

function head(dir: string): string {
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

describe('skill_manage refuses secret-shaped values, like memory does', () => {
  let h: ReturnType<typeof tempHome>;
  let store: SkillStore;
  beforeEach(() => {
    h = tempHome();
    store = new SkillStore({ home: h.home });
  });
  afterEach(() => h.cleanup());

  it('create with an AWS access key: refused naming the kind, no files, no commit', async () => {
    await settled(() => store.manage({ action: 'create', name: 'other', content: skillMd('other') }, S));
    const before = pictureOf(h.skills);
    const commits = await store.commitCount();
    const r = await settled(() =>
      store.manage(
        {
          action: 'create',
          name: 'deploy',
          category: 'ops',
          content: skillMd('deploy', 'Deploy to S3', `Run:\n\n    AWS_ACCESS_KEY_ID=${AWS_KEY} aws s3 sync dist s3://bucket\n`),
        },
        S,
      ),
    );
    expect(r).toMatchObject({ success: false, kind: 'refused' });
    if (r.success) return;
    expect(r.error).toContain('SKILL.md contains a secret-shaped value (aws-access-key)');
    expect(r.error).toContain('skills are shared and versioned in git — reference an environment variable instead');
    expect(r.error).not.toContain(AWS_KEY);
    expect(r.findings).toEqual([expect.objectContaining({ file: 'SKILL.md', id: 'secret:aws-access-key', severity: 'dangerous' })]);
    expect(JSON.stringify(r.findings)).not.toContain(AWS_KEY);
    expect(pictureOf(h.skills)).toEqual(before);
    expect(existsSync(join(h.skills, 'ops'))).toBe(false);
    expect(await store.commitCount()).toBe(commits);
    expect(store.list().map((s) => s.name)).toEqual(['other']);
  });

  it('edit bringing in a GitHub token: refused, SKILL.md unchanged', async () => {
    await settled(() => store.manage({ action: 'create', name: 'release', content: skillMd('release') }, S));
    const before = pictureOf(h.skills);
    const r = await settled(() =>
      store.manage({ action: 'edit', name: 'release', content: skillMd('release', 'Release', `export GH_TOKEN=${GITHUB_TOKEN}\n`) }, S),
    );
    expect(r).toMatchObject({ success: false, kind: 'refused' });
    expect(pictureOf(h.skills)).toEqual(before);
  });

  it('patch introducing a GitHub token: refused, the file byte-identical, HEAD unchanged', async () => {
    await settled(() =>
      store.manage({ action: 'create', name: 'release', content: skillMd('release', 'Cut a release', 'Step 1: push the tag with gh.\n') }, S),
    );
    await settled(() => store.manage({ action: 'write_file', name: 'release', file_path: 'references/gh.md', file_content: 'Authenticate gh first.\n' }, S));
    const before = pictureOf(h.skills);
    const rev = head(h.skills);
    for (const args of [
      { action: 'patch', name: 'release', old_string: 'push the tag with gh.', new_string: `push the tag with GH_TOKEN=${GITHUB_TOKEN} gh.` },
      {
        action: 'patch',
        name: 'release',
        file_path: 'references/gh.md',
        old_string: 'Authenticate gh first.',
        new_string: `gh auth login --with-token <<< ${GITHUB_TOKEN}`,
      },
    ]) {
      const r = await settled(() => store.manage(args, S));
      expect(r, JSON.stringify(r)).toMatchObject({ success: false, kind: 'refused' });
      if (r.success) continue;
      expect(r.error).toMatch(/contains a secret-shaped value \(github-token\)/);
      expect(r.error).toContain(args.file_path ?? 'SKILL.md');
      expect(r.error).not.toContain(GITHUB_TOKEN);
    }
    expect(pictureOf(h.skills)).toEqual(before);
    expect(head(h.skills)).toBe(rev);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: h.skills, encoding: 'utf8' })).toBe('');
  });

  it('write_file with a private key block: refused, no file left behind', async () => {
    await settled(() => store.manage({ action: 'create', name: 'ssh-setup', content: skillMd('ssh-setup') }, S));
    const before = pictureOf(h.skills);
    const commits = await store.commitCount();
    const r = await settled(() =>
      store.manage({ action: 'write_file', name: 'ssh-setup', file_path: 'templates/deploy_key', file_content: PRIVATE_KEY + '\n' }, S),
    );
    expect(r).toMatchObject({ success: false, kind: 'refused' });
    if (r.success) return;
    expect(r.error).toContain('templates/deploy_key contains a secret-shaped value (private-key)');
    expect(pictureOf(h.skills)).toEqual(before);
    expect(existsSync(join(h.skills, 'ssh-setup', 'templates'))).toBe(false);
    expect(await store.commitCount()).toBe(commits);
  });

  it('revert to a commit that held a secret: refused, current files kept', async () => {
    await settled(() => store.manage({ action: 'create', name: 'deploy', content: skillMd('deploy') }, S));
    // A secret that got into history by hand (before this check, or outside the store).
    const md = join(h.skills, 'deploy', 'SKILL.md');
    writeFileSync(md, skillMd('deploy', 'Deploy', `key: ${AWS_KEY}\n`));
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'by hand'], { cwd: h.skills });
    const leaked = head(h.skills);
    expect(
      await settled(() => store.manage({ action: 'patch', name: 'deploy', old_string: `key: ${AWS_KEY}`, new_string: 'key: $AWS_ACCESS_KEY_ID' }, S)),
    ).toMatchObject({ success: true });
    const before = pictureOf(h.skills);
    const rev = head(h.skills);
    const r = await settled(() => store.revert('deploy', leaked, S));
    expect(r).toMatchObject({ success: false, kind: 'refused' });
    expect(pictureOf(h.skills)).toEqual(before);
    expect(head(h.skills)).toBe(rev);
    expect(readFileSync(md, 'utf8')).not.toContain(AWS_KEY);
  });

  it('look-alikes pass: sk-learn, API_KEY=changeme, ${VAR} references, AKIA in prose', async () => {
    const body = [
      'Train the model with sk-learn (scikit-learn) and sk-some-words-here.',
      'Set the key in .env as API_KEY=changeme, then export GITHUB_TOKEN=${GITHUB_TOKEN}.',
      'AWS keys start with AKIA; never paste one here. password: <your-password>',
      'cacheKey = computeCacheKey(input)',
      '',
    ].join('\n');
    const r = await settled(() => store.manage({ action: 'create', name: 'ml-train', content: skillMd('ml-train', 'Train with sk-learn', body) }, S));
    expect(r, JSON.stringify(r)).toMatchObject({ success: true, verdict: 'safe' });
    const w = await settled(() =>
      store.manage(
        {
          action: 'write_file',
          name: 'ml-train',
          file_path: 'templates/env.example',
          file_content: 'API_KEY=changeme\nOPENAI_API_KEY=your-api-key\nAWS_SECRET_ACCESS_KEY=xxxxxxxx\n',
        },
        S,
      ),
    );
    expect(w, JSON.stringify(w)).toMatchObject({ success: true });
    expect(readFileSync(join(h.skills, 'ml-train', 'SKILL.md'), 'utf8')).toContain('API_KEY=changeme');
  });
});
