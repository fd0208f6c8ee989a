/**
 * Every command starts by finding the work tree (src/paths/index.ts `findRepo`), and a git
 * process was most of what that cost. `workTreeWithoutGit` finds it from the files for the
 * common layouts and leaves the rest to git. Each layout here is asked of both: where it
 * answers, the answer is git's (`rev-parse --show-toplevel --absolute-git-dir
 * --git-common-dir`, realpath'd as findRepo does); the common layouts are answered without
 * git; and wherever git's own rules need more than the files say (another owner, a moved or
 * bare work tree, an extension, a variable of git's, the inside of a git dir, a `.git` that is
 * not what it seems), it leaves the question to git.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findGitRepository, findRepo, workTreeWithoutGit } from '../../src/paths/index.js';
import { gitIn, makeEnv } from '../helpers/env.js';

const t = makeEnv();
afterAll(() => t.cleanup());

type Answer = { root: string; gitDir: string; commonDir: string };

/** git's answer from `cwd` with `env`, as findRepo reads it (a relative path is git's folder's: the real one); a string when git finds no work tree. */
function gits(cwd: string, env: NodeJS.ProcessEnv): Answer | string {
  const r = spawnSync('git', ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], { cwd, env, encoding: 'utf8' });
  const [top, gitDir, common] = r.stdout.trimEnd().split('\n');
  if (r.status !== 0 || !top || !gitDir || !common) return `git: ${r.stderr.trim() || r.stdout.trim()}`;
  return { root: realpathSync(top), gitDir: realpathSync(gitDir), commonDir: realpathSync(isAbsolute(common) ? common : resolve(realpathSync(cwd), common)) };
}

/** A repository with one commit and a nested folder. */
function repo(files: Record<string, string> = {}): string {
  return t.repo({ 'a/b/c/file.txt': 'x\n', ...files });
}

const common: Array<{ layout: string; cwd: () => string; env?: () => NodeJS.ProcessEnv }> = [
  { layout: 'the top of a work tree', cwd: () => repo() },
  { layout: 'a folder three levels down', cwd: () => join(repo(), 'a', 'b', 'c') },
  {
    layout: 'a path through a symbolic link',
    cwd: () => {
      const r = repo();
      const link = join(t.home, `link-${Date.now()}-${Math.random()}`);
      symlinkSync(join(r, 'a', 'b'), link);
      return link;
    },
  },
  {
    layout: 'a linked worktree (a .git file, the commondir file)',
    cwd: () => {
      const r = repo();
      const wt = join(t.home, `wt-${Date.now()}-${Math.random()}`);
      gitIn(t, r, 'worktree', 'add', '-q', '-b', `w${Date.now()}`, wt);
      return join(wt, 'a', 'b');
    },
  },
  {
    layout: 'a git dir kept apart (git init --separate-git-dir: a .git file, no commondir)',
    cwd: () => {
      const wt = join(t.home, `apart-${Date.now()}`);
      gitIn(t, t.home, 'init', '-q', '-b', 'main', '--separate-git-dir', `${wt}.git`, wt);
      mkdirSync(join(wt, 'src'));
      return join(wt, 'src');
    },
  },
  {
    layout: 'a repository inside another one’s work tree',
    cwd: () => {
      const outer = repo();
      const inner = join(outer, 'vendor', 'inner');
      mkdirSync(join(inner, 'src'), { recursive: true });
      gitIn(t, inner, 'init', '-q', '-b', 'main');
      return join(inner, 'src');
    },
  },
];

const gitDecides: Array<{ layout: string; cwd: () => string; env?: () => NodeJS.ProcessEnv }> = [
  { layout: 'GIT_DIR set', cwd: () => repo(), env: () => ({ ...t.env, GIT_DIR: join(repo(), '.git') }) },
  { layout: 'GIT_WORK_TREE set', cwd: () => repo(), env: () => ({ ...t.env, GIT_WORK_TREE: t.home }) },
  { layout: 'GIT_CEILING_DIRECTORIES set', cwd: () => join(repo(), 'a'), env: () => ({ ...t.env, GIT_CEILING_DIRECTORIES: t.home }) },
  { layout: 'a git -c setting in the environment', cwd: () => repo(), env: () => ({ ...t.env, GIT_CONFIG_PARAMETERS: "'core.worktree=/'" }) },
  {
    layout: 'core.worktree in the config',
    cwd: () => {
      const r = repo();
      gitIn(t, r, 'config', 'core.worktree', join(r, 'a'));
      return join(r, 'a', 'b');
    },
  },
  {
    layout: 'a submodule (its config names its work tree)',
    cwd: () => {
      const sub = repo();
      const sup = repo();
      gitIn(t, sup, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod');
      return join(sup, 'mod', 'a');
    },
  },
  {
    layout: 'core.bare = true',
    cwd: () => {
      const r = repo();
      gitIn(t, r, 'config', 'core.bare', 'true');
      return join(r, 'a');
    },
  },
  {
    layout: 'an extension (sha256 objects)',
    cwd: () => {
      const r = join(t.home, `sha-${Date.now()}`);
      gitIn(t, t.home, 'init', '-q', '--object-format=sha256', r);
      mkdirSync(join(r, 'src'));
      return join(r, 'src');
    },
  },
  {
    layout: 'an included config file',
    cwd: () => {
      const r = repo();
      writeFileSync(join(r, 'extra.conf'), '[core]\n\tworktree = /\n');
      gitIn(t, r, 'config', 'include.path', join(r, 'extra.conf'));
      return r;
    },
  },
  { layout: 'inside the git dir', cwd: () => join(repo(), '.git', 'refs', 'heads') },
  {
    layout: 'a bare repository',
    cwd: () => {
      const r = join(t.home, `bare-${Date.now()}.git`);
      gitIn(t, t.home, 'init', '-q', '--bare', r);
      return join(r, 'refs');
    },
  },
  {
    layout: 'a .git file that names no git dir',
    cwd: () => {
      const r = join(t.home, `junk-${Date.now()}`);
      mkdirSync(join(r, 'src'), { recursive: true });
      writeFileSync(join(r, '.git'), 'not a pointer\n');
      return join(r, 'src');
    },
  },
  {
    layout: 'a .git that is a symbolic link',
    cwd: () => {
      const r = repo();
      const moved = join(t.home, `moved-${Date.now()}.git`);
      spawnSync('mv', [join(r, '.git'), moved]);
      symlinkSync(moved, join(r, '.git'));
      return join(r, 'a');
    },
  },
  // Ownership can be handed to another user only by root (CI runs as root).
  ...(process.geteuid?.() === 0
    ? [
        {
          layout: 'a work tree of another owner (safe.directory is git’s to judge)',
          cwd: () => {
            const r = repo();
            const own = (p: string): void => {
              chownSync(p, 4242, 4242);
              for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) own(join(p, e.name));
            };
            own(r);
            return join(r, 'a');
          },
        },
      ]
    : []),
];

describe('the work tree, found without git where git finds it', () => {
  it.each(common)('$layout: answered from the files, and the answer is git’s', ({ cwd, env }) => {
    const where = cwd();
    const e = env?.() ?? t.env;
    const expected = gits(where, e);
    expect(typeof expected, `git finds no work tree from ${where}: ${String(expected)}`).toBe('object');
    expect(workTreeWithoutGit(where, e), `from ${where}`).toEqual(expected);
  });

  it.each(gitDecides)('$layout: left to git', ({ cwd, env }) => {
    const where = cwd();
    const e = env?.() ?? t.env;
    expect(workTreeWithoutGit(where, e), `from ${where} (git says ${JSON.stringify(gits(where, e))})`).toBeUndefined();
  });

  it('outside any repository: no answer, as git has none', () => {
    const where = join(t.home, 'nowhere');
    mkdirSync(where, { recursive: true });
    const expected = gits(where, t.env);
    expect(typeof expected, `git finds a work tree above ${where}; this test needs a folder outside any`).toBe('string');
    expect(workTreeWithoutGit(where, t.env)).toBeUndefined();
  });

  it('findRepo and findGitRepository (check --commits, init) answer the common layouts with no git on PATH, as git does', () => {
    const noGit = join(t.home, 'path-without-git');
    mkdirSync(noGit, { recursive: true });
    const saved = process.env;
    try {
      for (const { layout, cwd } of common) {
        const where = cwd();
        const expected = gits(where, t.env) as Answer;
        process.env = { ...t.env, PATH: noGit };
        expect(findRepo(where), layout).toEqual(expected);
        expect(findGitRepository(where), layout).toEqual({ ...expected, bare: false });
        process.env = saved;
      }
    } finally {
      process.env = saved;
    }
  });

  it('findRepo reached through a symbolic link answers as git does, from the files or from git', () => {
    const sub = repo();
    const sup = repo();
    gitIn(t, sup, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod');
    const none = join(t.home, 'ceiling-above-nothing');
    mkdirSync(none);
    const cases: Array<[what: string, target: string, env: NodeJS.ProcessEnv]> = [
      ['a work tree, from the files', join(repo(), 'a'), t.env],
      // git's common dir comes back relative here: relative to the real folder git ran in, not to the link.
      ['a work tree, git asked (a ceiling set, above nothing here)', join(repo(), 'a'), { ...t.env, GIT_CEILING_DIRECTORIES: none }],
      ['a submodule, git asked', join(sup, 'mod', 'a'), t.env],
    ];
    const saved = process.env;
    try {
      cases.forEach(([what, target, env], i) => {
        const link = join(t.home, `via-${i}`);
        symlinkSync(target, link);
        // findRepo runs git in this process's environment: the test's, for this call.
        process.env = { ...env };
        expect(findRepo(link), `${what}, from ${link}`).toEqual(gits(target, env));
      });
    } finally {
      process.env = saved;
    }
  });
});
