import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { postCommitAudit } from '../../src/guard/audit.js';
import type { GitDirs } from '../../src/git/refs.js';
import { recordPrecommitPass } from '../../src/rules/precommit-marker.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-audit-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, env, encoding: 'utf8' }).trim();
const config = configSchema().parse({
  rules: [
    { id: 'generated-files', message: 'Do not edit generated files.', protect: ['src/generated/**'] },
    { id: 'no-aws-keys', message: 'Never commit credentials.', forbid: 'AKIA[0-9A-Z]{16}' },
  ],
});

let n = 0;
function repo(): string {
  const root = join(base, `r${n++}`);
  mkdirSync(join(root, 'src', 'generated'), { recursive: true });
  git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, 'src', 'generated', 'a.ts'), 'a\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'initial', '--no-verify');
  return root;
}

/**
 * The audit as git answers it, and as the daemon runs it (HEAD, its commit and the new commits
 * read from git's files): the two must agree.
 */
async function postCommitAuditBothWays(root: string, cfg: typeof config, opts: { since?: string[] } = {}) {
  const byGit = await postCommitAudit(root, cfg, opts);
  const dirs: GitDirs = { gitDir: join(root, '.git'), commonDir: join(root, '.git') };
  const byFiles = await postCommitAudit(root, cfg, { ...opts, gitDir: dirs.gitDir, dirs });
  expect(byFiles).toEqual(byGit);
  return byFiles;
}

describe('post-commit audit of commits the pre-commit hook did not judge', () => {
  it('a --no-verify commit that breaks rules is reported loudly with the undo command', async () => {
    const root = repo();
    writeFileSync(join(root, 'src', 'generated', 'a.ts'), 'edited\n');
    writeFileSync(join(root, 'creds.txt'), 'key = AKIA' + 'Q3EGRV7YXH2MZK4P\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'sneaky', '--no-verify');
    const audit = await postCommitAuditBothWays(root, config);
    expect(audit.hookRan).toBe(false);
    expect(audit.violations.map((v) => `${v.rule} ${v.file}:${v.line}`).sort()).toEqual(['generated-files src/generated/a.ts:0', 'no-aws-keys creds.txt:1']);
    expect(audit.undo).toBe('git reset --soft HEAD~1');
    expect(audit.notice).toContain('SKIPPED the pre-commit hook');
    expect(audit.notice).toContain('git reset --soft HEAD~1');
  });

  it('a commit whose tree the pre-commit hook passed is not re-checked', async () => {
    const root = repo();
    writeFileSync(join(root, 'src', 'generated', 'a.ts'), 'edited\n');
    git(root, 'add', '-A');
    recordPrecommitPass(join(root, '.git'), git(root, 'write-tree'));
    git(root, 'commit', '-qm', 'judged');
    const audit = await postCommitAuditBothWays(root, config);
    expect(audit.hookRan).toBe(true);
    expect(audit.violations).toEqual([]);
    expect(audit.notice).toBe('');
  });

  it('a clean skipped commit says so quietly; a bad root commit is undone with update-ref', async () => {
    const root = repo();
    writeFileSync(join(root, 'ok.txt'), 'fine\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'clean', '--no-verify');
    const clean = await postCommitAuditBothWays(root, config);
    expect(clean.violations).toEqual([]);
    expect(clean.notice).toContain('no violations');

    const fresh = join(base, `root${n++}`);
    mkdirSync(join(fresh, 'src', 'generated'), { recursive: true });
    git(fresh, 'init', '-q', '-b', 'main');
    writeFileSync(join(fresh, 'src', 'generated', 'b.ts'), 'b\n');
    git(fresh, 'add', '-A');
    git(fresh, 'commit', '-qm', 'root', '--no-verify');
    const rootAudit = await postCommitAuditBothWays(fresh, config);
    expect(rootAudit.violations.map((v) => v.file)).toEqual(['src/generated/b.ts']);
    expect(rootAudit.undo).toBe('git update-ref -d HEAD');
  });

  it('new commits since the last look: one on top of it, and one under a commit made without git commit', async () => {
    const root = repo();
    const before = git(root, 'rev-parse', 'HEAD');
    writeFileSync(join(root, 'creds.txt'), 'key = AKIA' + 'Q3EGRV7YXH2MZK4P\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'leak', '--no-verify');
    const onTop = await postCommitAuditBothWays(root, config, { since: [before] });
    expect(onTop.violations.map((v) => v.rule)).toEqual(['no-aws-keys']);
    expect(onTop.earlier).toBeUndefined();
    // A commit made by commit-tree and update-ref (no hook ran), then an ordinary one on top.
    const leak = git(root, 'rev-parse', 'HEAD');
    writeFileSync(join(root, 'src', 'generated', 'a.ts'), 'edited under the radar\n');
    git(root, 'add', '-A');
    const hidden = git(root, 'commit-tree', git(root, 'write-tree'), '-p', leak, '-m', 'hidden');
    git(root, 'update-ref', 'refs/heads/main', hidden);
    writeFileSync(join(root, 'ok.txt'), 'fine\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'on top', '--no-verify');
    const under = await postCommitAuditBothWays(root, config, { since: [leak] });
    expect(under.earlier?.map((e) => e.commit)).toEqual([hidden]);
  });
});
