/**
 * Every bypass an agent tries through `terminal` fails: protected files come back byte for
 * byte, and git's index and HEAD are unchanged whatever indirection the command uses.
 * Real repositories, a real bare remote, the real compiled git shim (run `npx tsc -p .` first).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardConfig } from '../../src/guard/guard-config.js';
import { findRealGit } from '../../src/git/real-git.js';
import { runGuarded } from '../../src/guard/terminal-guard.js';

const REAL_GIT = findRealGit();
const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-guard-')));
const gitEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_') && !k.startsWith('HERMESD_'))),
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: base,
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync(REAL_GIT, args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/**
 * A stand-in for the hermesd pre-commit hook, with no daemon behind it: it notes the judged
 * tree in a file of the test's, which `judgedByDouble` reads (the real record is in the
 * daemon's memory; test/githooks/hooks-lint-staged-formatter.test.ts proves that one through an agent).
 */
const PRECOMMIT_HOOK = `#!/bin/sh
# hermesd pre-commit (test double of the installed hook: notes the judged tree)
echo "$(git write-tree) $(node -e 'process.stdout.write(String(Date.now()))')" >> "$(git rev-parse --git-dir)/test-double-judged"
`;

function judgedByDouble(gitDir: string): (tree: string, sinceMs: number) => boolean {
  return (tree, sinceMs) => {
    let text = '';
    try {
      text = readFileSync(join(gitDir, 'test-double-judged'), 'utf8');
    } catch {
      return false;
    }
    return text.split('\n').some((l) => {
      const [t, at] = l.split(' ');
      return t === tree && Number(at) >= sinceMs - 1000;
    });
  };
}

const CONFIG: GuardConfig = {
  rules: [{ id: 'generated-files', message: 'Do not edit generated files; run npm run gen.', protect: ['src/generated/**', 'schema.lock'] }],
};

let counter = 0;
type Repo = { root: string; gitDir: string; remote: string };

function makeRepo(): Repo {
  const root = join(base, `r${counter++}`);
  const remote = `${root}-remote.git`;
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(root, '.gitignore'), '.env\nbuild/\n');
  writeFileSync(join(root, '.env'), 'DB_PASSWORD=hunter22\nOPENAI_API_KEY=sk-proj-Xy7Qm2Lp9Rt4Vn8Kd3Hs6Jf1Gb5Wc0Ze\n');
  mkdirSync(join(root, 'src', 'generated'), { recursive: true });
  writeFileSync(join(root, 'src', 'generated', 'api.ts'), 'export const generated = 1;\n');
  writeFileSync(join(root, 'schema.lock'), 'lock v1\n');
  writeFileSync(join(root, 'README.md'), '# repo\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'initial');
  execFileSync(REAL_GIT, ['init', '-q', '--bare', remote], { env: gitEnv });
  git(root, 'remote', 'add', 'origin', remote);
  git(root, 'push', '-q', '-u', 'origin', 'main');
  writeFileSync(join(root, '.git', 'hooks', 'pre-commit'), PRECOMMIT_HOOK);
  chmodSync(join(root, '.git', 'hooks', 'pre-commit'), 0o755);
  // Something staged, so that a commit attempt has content.
  writeFileSync(join(root, 'README.md'), '# repo\nchanged\n');
  git(root, 'add', 'README.md');
  return { root, gitDir: join(root, '.git'), remote };
}

type State = { head: string; index: Buffer; files: Record<string, Buffer>; remoteMain: string; hooksPath: string };

function state(r: Repo): State {
  const files: Record<string, Buffer> = {};
  for (const f of ['src/generated/api.ts', 'schema.lock', 'README.md', '.env']) files[f] = readFileSync(join(r.root, f));
  let hooksPath = '';
  try {
    hooksPath = git(r.root, 'config', '--get', 'core.hooksPath');
  } catch {
    hooksPath = '';
  }
  return {
    head: git(r.root, 'rev-parse', 'HEAD'),
    index: readFileSync(join(r.gitDir, 'index')),
    files,
    remoteMain: git(r.remote, 'rev-parse', 'main'),
    hooksPath,
  };
}

function run(r: Repo, command: string, config: GuardConfig = CONFIG) {
  return runGuarded(command, {
    root: r.root,
    gitDir: r.gitDir,
    commonDir: r.gitDir,
    config,
    realGit: REAL_GIT,
    env: gitEnv,
    timeoutMs: 20_000,
    judged: judgedByDouble(r.gitDir),
  });
}

beforeAll(() => {
  if (!existsSync(join(__dirname, '..', '..', 'dist', 'src', 'guard', 'git-shim.js'))) throw new Error('build first: npx tsc -p .');
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('git hook bypasses fail, with index and HEAD unchanged', () => {
  const bypasses: Array<[string, string, string]> = [
    ['--no-verify', 'git commit --no-verify -m sneaky', 'noVerify'],
    ['abbreviated --no-ver', 'git commit --no-veri -m sneaky', 'noVerify'],
    ['-n in a cluster', 'git commit -anm sneaky', 'noVerify'],
    ['variable indirection', 'g=git; $g commit --no-verify -m sneaky', 'noVerify'],
    ['sh -c', "sh -c 'git commit -n -m sneaky'", 'noVerify'],
    ['eval and xargs', 'echo commit --no-verify -m sneaky | xargs git', 'noVerify'],
    ['-c core.hooksPath', 'git -c core.hooksPath=/dev/null commit -m sneaky', 'hookConfig'],
    ['GIT_CONFIG_COUNT env', 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m sneaky', 'hookConfig'],
    ['HERMESD_SKIP', 'HERMESD_SKIP=1 git commit -m sneaky', 'noVerify'],
    ['-c alias', "git -c alias.ci='commit --no-verify' ci -m sneaky", 'noVerify'],
    ['shell alias', "git -c alias.ci='!git commit -n' ci -m sneaky", 'noVerify'],
    ['config alias write', "git config alias.ci 'commit -n'", 'hookConfig'],
    ['config hooksPath write', 'git config core.hooksPath /dev/null', 'hookConfig'],
    ['config --unset hooksPath', 'git config --unset core.hooksPath', 'hookConfig'],
  ];
  it.each(bypasses)('%s', async (_name, command, policy) => {
    const r = makeRepo();
    const before = state(r);
    const res = await run(r, command);
    expect(res.exitCode).not.toBe(0);
    expect(res.stderr).toContain('hermesd guard: refused');
    expect(res.guard.refusals.map((x) => x.policy)).toContain(policy);
    expect(res.guard.notice).toContain(`policy ${policy}`);
    expect(state(r)).toEqual(before);
  });

  it('an absolute-path git commit --no-verify is rolled back after the fact', async () => {
    const r = makeRepo();
    const before = state(r);
    const res = await run(r, `${REAL_GIT} commit --no-verify -qm sneaky`);
    expect(res.guard.git.map((g) => g.policy)).toEqual(['noVerify']);
    expect(res.guard.git[0]!.undone).toBe(true);
    expect(state(r)).toEqual(before);
  });

  it('env PATH=/usr/bin git commit -n and HERMESD_SKIP through the absolute path are rolled back too', async () => {
    const r = makeRepo();
    const before = state(r);
    await run(r, `PATH=/usr/bin:/bin git commit -n -qm a; HERMESD_SKIP=1 ${REAL_GIT} commit -qm b --allow-empty --no-verify`);
    expect(state(r)).toEqual(before);
  });

  it('an absolute-path core.hooksPath change and an edited hook script are put back', async () => {
    const r = makeRepo();
    const before = state(r);
    const hook = readFileSync(join(r.gitDir, 'hooks', 'pre-commit'));
    const res = await run(r, `${REAL_GIT} config core.hooksPath /dev/null; echo 'exit 0' > .git/hooks/pre-commit`);
    expect(res.guard.git.map((g) => g.policy).sort()).toEqual(['hookConfig', 'hookConfig']);
    expect(readFileSync(join(r.gitDir, 'hooks', 'pre-commit'))).toEqual(hook);
    expect(state(r)).toEqual(before);
  });

  it("a file git's config includes that was not there, created by the command, is removed before git runs again", async () => {
    const r = makeRepo();
    appendFileSync(join(r.gitDir, 'config'), '[include]\n\tpath = ../team.gitconfig\n');
    // The config edited just before the command, as a fast machine runs this: within the racy
    // window of git's config key (its modification time a minute ahead makes it so on any machine).
    utimesSync(join(r.gitDir, 'config'), new Date(), new Date(Date.now() + 60_000));
    const res = await run(r, `printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' > team.gitconfig`);
    expect(existsSync(join(r.root, 'team.gitconfig')), 'the file the config includes, planted by the command, stayed').toBe(false);
    expect(res.guard.git.map((g) => g.message).join('\n'), 'the notice does not say what was removed').toContain(
      'which git reads as configuration or runs as hooks',
    );
    git(r.root, 'status', '--short');
    expect(existsSync(join(r.root, 'PWNED')), 'git ran the program the planted include named').toBe(false);
  });

  it("a file git's config includes, changed by a command that runs outside any sandbox, is put back; a core.hooksPath folder it creates is removed", async () => {
    const r = makeRepo();
    writeFileSync(join(r.root, 'team.gitconfig'), '[user]\n\tname = Team\n');
    appendFileSync(join(r.gitDir, 'config'), '[include]\n\tpath = ../team.gitconfig\n');
    const res = await run(r, `t=team.gitconfig; printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' >> $t`);
    expect(readFileSync(join(r.root, 'team.gitconfig'), 'utf8'), 'the included config file the command changed was not put back').toBe(
      '[user]\n\tname = Team\n',
    );
    expect(res.guard.git.map((g) => g.message).join('\n'), 'the notice does not say what was put back').toContain('It has been restored');
    git(r.root, 'status', '--short');
    expect(existsSync(join(r.root, 'PWNED')), 'git ran the program the changed include named').toBe(false);

    git(r.root, 'config', 'core.hooksPath', 'scripts/hooks');
    await run(r, `d=scripts/hooks; mkdir -p $d && printf '#!/bin/sh\\ntouch PWNED\\n' > $d/pre-commit && chmod +x $d/pre-commit`);
    expect(existsSync(join(r.root, 'scripts/hooks')), 'the core.hooksPath folder the command created stayed').toBe(false);
  });

  it('a plain commit passes: the hook ran and vouched for the tree', async () => {
    const r = makeRepo();
    const head = git(r.root, 'rev-parse', 'HEAD');
    const res = await run(r, 'git commit -qm honest && git status --short');
    expect(res.exitCode).toBe(0);
    expect(res.guard.notice).toBeUndefined();
    expect(git(r.root, 'rev-parse', 'HEAD^')).toBe(head);
  });

  it("git in another repository (a test suite's temp repo) is not judged", async () => {
    const r = makeRepo();
    const res = await run(
      r,
      'mkdir -p build/other && cd build/other && git init -q && git -c user.name=T -c user.email=t@e commit -q --allow-empty -n -m free && git log --format=%s',
    );
    expect(res.exitCode).toBe(0);
    expect(res.stdout.trim()).toBe('free');
    expect(res.guard.notice).toBeUndefined();
  });

  it('a policy set to allow lets the command through', async () => {
    const r = makeRepo();
    const res = await run(r, 'git commit -n -qm allowed', { ...CONFIG, guard: { gitPolicy: { noVerify: 'allow' } } });
    expect(res.exitCode).toBe(0);
    expect(res.guard.notice).toBeUndefined();
    expect(git(r.root, 'log', '-1', '--format=%s')).toBe('allowed');
  });
});

describe('force push, ignored files and pushed history', () => {
  function diverged(): Repo {
    const r = makeRepo();
    git(r.root, 'commit', '-qm', 'pushed one', '--no-verify');
    git(r.root, 'push', '-q', 'origin', 'main');
    git(r.root, 'reset', '-q', '--hard', 'HEAD~1');
    writeFileSync(join(r.root, 'other.txt'), 'x\n');
    git(r.root, 'add', 'other.txt');
    git(r.root, 'commit', '-qm', 'local one', '--no-verify');
    return r;
  }
  const pushes: Array<[string, string]> = [
    ['--force', 'git push --force origin main'],
    ['-f', 'git push -qf origin main'],
    ['--force-with-lease', 'git push --force-with-lease origin main'],
    ['+refspec', 'git push origin +main'],
    ['+refspec via config', 'git -c remote.origin.push=+refs/heads/main:refs/heads/main push origin'],
  ];
  it.each(pushes)('push %s to a local bare remote is refused', async (_name, command) => {
    const r = diverged();
    const before = state(r);
    const res = await run(r, command);
    expect(res.exitCode).not.toBe(0);
    expect(res.guard.refusals.map((x) => x.policy)).toEqual(['forcePush']);
    expect(state(r)).toEqual(before);
  });

  it('a force push through the absolute path is reported', async () => {
    const r = diverged();
    const res = await run(r, `${REAL_GIT} push -q --force origin main`);
    expect(res.guard.git.map((g) => g.policy)).toEqual(['forcePush']);
    expect(res.guard.notice).toContain('force-pushed');
  });

  it('git add -f of an ignored .env is refused; an absolute-path one is unstaged again', async () => {
    const r = makeRepo();
    const before = state(r);
    const res = await run(r, 'git add -f .env');
    expect(res.guard.refusals.map((x) => x.policy)).toEqual(['addIgnored']);
    expect(res.stderr).toContain('.env');
    expect(state(r)).toEqual(before);
    const res2 = await run(r, `${REAL_GIT} add -f .env`);
    expect(res2.guard.git.map((g) => g.policy)).toEqual(['addIgnored']);
    expect(git(r.root, 'ls-files', '.env')).toBe('');
  });

  it('git add -f of a tracked file is fine', async () => {
    const r = makeRepo();
    const res = await run(r, 'echo more >> README.md && git add -f README.md');
    expect(res.exitCode).toBe(0);
    expect(res.guard.notice).toBeUndefined();
  });

  const rewrites: Array<[string, string]> = [
    ['commit --amend of a pushed HEAD', 'git commit --amend -qm rewritten'],
    ['reset --hard past pushed commits', 'git reset -q --hard HEAD~1'],
    ['rebase -i --root', 'GIT_SEQUENCE_EDITOR=true git rebase -q -i --root'],
  ];
  it.each(rewrites)('%s is refused', async (_name, command) => {
    const r = makeRepo();
    git(r.root, 'commit', '-qm', 'second');
    git(r.root, 'push', '-q', 'origin', 'main');
    const before = state(r);
    const res = await run(r, command);
    expect(res.guard.refusals.map((x) => x.policy)).toEqual(['rewritePushed']);
    expect(state(r)).toEqual(before);
  });

  it('an absolute-path reset of pushed commits is put back; unpushed ones may be reset', async () => {
    const r = makeRepo();
    git(r.root, 'commit', '-qm', 'second');
    git(r.root, 'push', '-q', 'origin', 'main');
    const before = state(r);
    const res = await run(r, `${REAL_GIT} reset -q --soft HEAD~1`);
    expect(res.guard.git.map((g) => g.policy)).toEqual(['rewritePushed']);
    expect(state(r)).toEqual(before);
    git(r.root, 'commit', '-qm', 'third', '--allow-empty');
    const ok = await run(r, 'git reset -q --soft HEAD~1');
    expect(ok.exitCode).toBe(0);
    expect(ok.guard.notice).toBeUndefined();
  });
});

describe('protected files hold under terminal', () => {
  const edits: Array<[string, string, string, 'modified' | 'deleted' | 'created']> = [
    ['sed -i', "sed -i 's/1/2/' src/generated/api.ts", 'src/generated/api.ts', 'modified'],
    ['redirect', 'echo hacked > schema.lock', 'schema.lock', 'modified'],
    ['rm', 'rm src/generated/api.ts', 'src/generated/api.ts', 'deleted'],
    ['new file', 'echo x > src/generated/new.ts', 'src/generated/new.ts', 'created'],
    ['script', "node -e \"require('fs').appendFileSync('schema.lock','x')\"", 'schema.lock', 'modified'],
    ['git checkout of an old version', 'git checkout -q HEAD~1 -- schema.lock', 'schema.lock', 'modified'],
    ['git rm', 'git rm -q src/generated/api.ts', 'src/generated/api.ts', 'deleted'],
    ['chmod', 'chmod +x schema.lock', 'schema.lock', 'modified'],
  ];
  it.each(edits)('%s is undone and reported with the rule', async (_name, command, file, change) => {
    const r = makeRepo();
    // History where schema.lock had another version, so `git checkout HEAD~1 -- schema.lock` changes it.
    writeFileSync(join(r.root, 'schema.lock'), 'lock v2\n');
    git(r.root, 'commit', '-qam', 'lock v2', '--no-verify');
    writeFileSync(join(r.root, 'README.md'), '# repo\nchanged again\n');
    git(r.root, 'add', 'README.md');
    const before = state(r);
    const res = await run(r, command);
    expect(res.guard.protected).toContainEqual({ file, rule: 'generated-files', message: CONFIG.rules![0]!.message, change });
    expect(res.guard.notice).toContain('generated-files');
    expect(state(r)).toEqual(before);
    expect(git(r.root, 'status', '--porcelain', '--', 'src', 'schema.lock')).toBe('');
    expect(existsSync(join(r.root, 'src/generated/new.ts'))).toBe(false);
  });

  it('a generator that reproduces the change keeps it; a hand edit of the same file does not', async () => {
    const r = makeRepo();
    const gen: GuardConfig = {
      rules: [{ id: 'generated-files', message: 'run the generator', protect: ['src/generated/**'], generator: 'cp schema.txt src/generated/api.ts' }],
    };
    writeFileSync(join(r.root, 'schema.txt'), 'export const generated = 1;\n');
    const ok = await run(r, "echo 'export const generated = 2;' > schema.txt && cp schema.txt src/generated/api.ts && git add src/generated/api.ts", gen);
    expect(ok.guard.protected).toEqual([]);
    expect(readFileSync(join(r.root, 'src/generated/api.ts'), 'utf8')).toBe('export const generated = 2;\n');
    const bad = await run(r, "echo 'export const generated = 3;' > src/generated/api.ts && git add src/generated/api.ts", gen);
    expect(bad.guard.protected.map((c) => c.change).sort()).toEqual(['modified', 'staged']);
    expect(readFileSync(join(r.root, 'src/generated/api.ts'), 'utf8')).toBe('export const generated = 2;\n');
  });

  it('files outside the rules are left as the command made them', async () => {
    const r = makeRepo();
    const res = await run(r, 'echo note >> README.md && echo new > notes.txt');
    expect(res.guard.protected).toEqual([]);
    expect(readFileSync(join(r.root, 'README.md'), 'utf8')).toContain('note');
    expect(readFileSync(join(r.root, 'notes.txt'), 'utf8')).toBe('new\n');
  });
});

describe('secrets in terminal output', () => {
  it('cat .env shows no secret value, guessable or not', async () => {
    const r = makeRepo();
    const res = await run(r, 'cat .env; env | grep -c PATH >/dev/null');
    expect(res.stdout).not.toContain('hunter22');
    expect(res.stdout).not.toContain('sk-proj-Xy7Qm2Lp9Rt4Vn8Kd3Hs6Jf1Gb5Wc0Ze');
    expect(res.stdout).toContain('DB_PASSWORD=[REDACTED');
    expect(res.redactions.length).toBeGreaterThanOrEqual(2);
  });
});
