/**
 * The key of git's configuration (src/git/config-files.ts) holds every file git reads its
 * settings from, the files they include among them: a setting moved in an included file (core.hooksPath,
 * what changes how git diffs) must change the key, or a caller keeps git's old answer. Each
 * layout is written for real and git itself says which files it read (`git config --list
 * --show-origin --includes`): every one of them must be among the key's files. Where the reading
 * cannot be sure (a condition on the branch, a continued line, an escape), there is no key: the
 * callers ask git.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitConfigFilesIncluded, gitConfigKey, includePaths } from '../../src/git/config-files.js';

let base: string;
let home: string;
let repo: string;
let env: NodeJS.ProcessEnv;

/** A repository under a home of its own, git's system config off. */
function setUp(): void {
  base = mkdtempSync(join(tmpdir(), 'hermesd-config-key-'));
  home = join(base, 'home');
  repo = join(base, 'repo');
  mkdirSync(home);
  env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
  const r = spawnSync('git', ['init', '-q', repo], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git init failed: ${r.stderr}`);
}

afterEach(() => rmSync(base, { recursive: true, force: true }));

const dirs = () => ({ gitDir: join(repo, '.git'), commonDir: join(repo, '.git') });

/** Writes a file. */
function write(path: string, text: string): void {
  writeFileSync(path, text);
}

/** Waits past the racy window (a file changed this recently is no key yet: src/git/config-files.ts). */
function settle(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40);
}

/** The files git says it read its settings from. */
function gitReads(): string[] {
  const r = spawnSync('git', ['config', '--list', '--show-origin', '--includes'], { cwd: repo, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git config --list failed: ${r.stderr}`);
  return [...new Set(r.stdout.split('\n').flatMap((l) => /^file:(.+?)\t/.exec(l)?.[1] ?? []))].map((f) => (f.startsWith('/') ? f : join(repo, f)));
}

/** Appends to the repository's own config. */
function local(text: string): void {
  const file = join(repo, '.git', 'config');
  write(file, readFileSync(file, 'utf8') + text);
}

describe('the key of git config follows the files it includes, as git does', () => {
  const layouts: Array<[string, () => void]> = [
    [
      'an include by a path relative to the including file',
      () => {
        write(join(repo, '.git', 'extra.cfg'), '[core]\n\thooksPath = /x\n');
        local('[include]\n\tpath = extra.cfg\n');
      },
    ],
    [
      "an includeIf on the repository's folder, from ~/.gitconfig, to a file in the home folder",
      () => {
        write(join(home, 'work.cfg'), '[user]\n\temail = w@example.com\n');
        write(join(home, '.gitconfig'), `[includeIf "gitdir:${repo}/"]\n\tpath = ~/work.cfg\n`);
      },
    ],
    [
      'an include within an include, relative to the included file',
      () => {
        mkdirSync(join(home, 'cfg'));
        write(join(home, 'cfg', 'inner.cfg'), '[diff]\n\tcontext = 5\n');
        write(join(home, 'cfg', 'outer.cfg'), '[include]\n\tpath = inner.cfg\n');
        write(join(home, '.gitconfig'), '[include]\n\tpath = ~/cfg/outer.cfg\n');
      },
    ],
    [
      'a quoted path with a space and a comment after it, the header and its entry on one line, names in capitals',
      () => {
        write(join(home, 'my config.cfg'), '[core]\n\tautocrlf = false\n');
        local('[Include] PATH = "~/my config.cfg" # the team\'s\n');
      },
    ],
    [
      'an XDG config including a file, a worktree config',
      () => {
        mkdirSync(join(home, '.config', 'git'), { recursive: true });
        write(join(home, '.config', 'git', 'more.cfg'), '[color]\n\tui = never\n');
        write(join(home, '.config', 'git', 'config'), '[include]\n\tpath = more.cfg\n');
        write(join(repo, '.git', 'config.worktree'), '[core]\n\tsparseCheckout = false\n');
      },
    ],
    [
      'an include of a file that is not there yet, and an includeIf that does not hold',
      () => {
        local('[include]\n\tpath = ~/not-yet.cfg\n');
        write(join(home, 'elsewhere.cfg'), '[user]\n\tname = E\n');
        local('[includeIf "gitdir:/somewhere/else/"]\n\tpath = ~/elsewhere.cfg\n');
      },
    ],
  ];

  it.each(layouts)('%s: every file git reads is in the key', (_name, make) => {
    setUp();
    make();
    settle();
    const files = gitConfigFilesIncluded(dirs(), env);
    expect(files, 'the key gave up on a layout it should read').toBeDefined();
    for (const f of gitReads()) expect(files, `git read ${f} and the key does not cover it`).toContain(f);
  });

  it('a config file changed just now gives no key yet, and still every file it includes, there or not', () => {
    setUp();
    local('[include]\n\tpath = ../team.gitconfig\n');
    // Within the racy window whatever the machine's speed: its modification time a minute ahead.
    const config = join(repo, '.git', 'config');
    utimesSync(config, new Date(), new Date(Date.now() + 60_000));
    expect(gitConfigKey(dirs(), env), 'a key was given for a config changed within the racy window').toBeUndefined();
    expect(gitConfigFilesIncluded(dirs(), env), 'the file a config changed just now includes, not there, is not listed').toContain(
      join(repo, 'team.gitconfig'),
    );
  });

  it('an included file changed: the key moves; nothing changed: it stays', () => {
    setUp();
    mkdirSync(join(home, 'cfg'));
    write(join(home, 'cfg', 'inner.cfg'), '[core]\n\thooksPath = /one\n');
    write(join(home, 'cfg', 'outer.cfg'), '[include]\n\tpath = inner.cfg\n');
    local('[include]\n\tpath = ~/cfg/outer.cfg\n');
    settle();
    const first = gitConfigKey(dirs(), env);
    expect(first).toBeDefined();
    expect(gitConfigKey(dirs(), env), 'the key moved with nothing changed').toBe(first);
    write(join(home, 'cfg', 'inner.cfg'), '[core]\n\thooksPath = /two\n');
    settle();
    expect(gitConfigKey(dirs(), env), 'a file included by an included file changed, and the key stayed').not.toBe(first);
    const second = gitConfigKey(dirs(), env);
    write(join(home, 'not-yet.cfg'), '');
    local('[include]\n\tpath = ~/not-yet.cfg\n');
    settle();
    const third = gitConfigKey(dirs(), env);
    write(join(home, 'not-yet.cfg'), '[core]\n\thooksPath = /three\n');
    settle();
    expect(third, 'a new include did not move the key').not.toBe(second);
    expect(gitConfigKey(dirs(), env), 'the newly included file changed, and the key stayed').not.toBe(third);
  });

  it('no key where the reading cannot be sure: the callers ask git', () => {
    const unsure: Array<[string, string]> = [
      ['a condition on the branch checked out', '[includeIf "onbranch:main"]\n\tpath = ~/b.cfg\n'],
      ['a line continued on the next', '[alias]\n\tx = log \\\n[include]\n\tpath = ~/c.cfg\n'],
      ['an escape in the path', '[include]\n\tpath = "~/a\\"b.cfg"\n'],
      ['the old way of naming a subsection', '[include.x]\n\tpath = ~/d.cfg\n'],
      ["another user's home", '[include]\n\tpath = ~root/e.cfg\n'],
      ['an unclosed quote', '[include]\n\tpath = "~/f.cfg\n'],
    ];
    for (const [name, text] of unsure) {
      setUp();
      local(text);
      settle();
      expect(gitConfigKey(dirs(), env), `a key was given for ${name}`).toBeUndefined();
      rmSync(base, { recursive: true, force: true });
    }
    setUp();
    expect(
      gitConfigKey(dirs(), { ...env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'include.path', GIT_CONFIG_VALUE_0: '/g.cfg' }),
      'a key was given for an include in the environment',
    ).toBeUndefined();
  });

  it('reads the paths as git does: order, quotes, comments, sections that include nothing', () => {
    expect(
      includePaths('[include]\n\tpath = a.cfg\n\tpath = "b c.cfg" ; note\n[core]\n\tpath = not-an-include\n[includeIf "gitdir:/x/"]\n\tpath=~/d.cfg\n'),
    ).toEqual(['a.cfg', 'b c.cfg', '~/d.cfg']);
    expect(includePaths('# [include]\n; path = x\n[include "sub"]\n\tpath = y\n[user]\n\tname = n\n')).toEqual([]);
  });
});
