/**
 * src/git/refs.ts and objects.ts read HEAD, refs and loose commits without starting git. Every answer is
 * compared with git's own in real repositories: loose and packed refs, symbolic and nested
 * refs, annotated tags, a detached and an unborn HEAD, a linked work tree, messages git
 * splits in its own way; and where it cannot be sure (a packed object, another encoding, a
 * broken ref) it must say so (undefined), never answer differently.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommitObject } from '../../src/git/objects.js';
import { headCommitOf, readHead, refTips, type GitDirs } from '../../src/git/refs.js';
import { writeFiles } from '../helpers/env.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-gitfiles-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const ID = ['-c', 'user.name=T', '-c', 'user.email=t@e', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false'];
const git = (cwd: string, ...args: string[]) => execFileSync('git', [...ID, ...args], { cwd, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const gitIn = (cwd: string, input: string, ...args: string[]) => execFileSync('git', [...ID, ...args], { cwd, input, encoding: 'utf8' }).trim();

let n = 0;
function repo(): { root: string; dirs: GitDirs } {
  const root = join(base, `r${n++}`);
  execFileSync('git', ['init', '-q', '-b', 'main', root]);
  return { root, dirs: { gitDir: join(root, '.git'), commonDir: join(root, '.git') } };
}

function commit(root: string, file: string, message: string): string {
  writeFiles(root, { [file]: `${file} ${n++}\n` });
  git(root, 'add', file);
  git(root, 'commit', '-q', '-m', message);
  return git(root, 'rev-parse', 'HEAD').trim();
}

/** git's answers, the way the daemon asked for them. */
function gitHead(root: string): { commit: string | null; branch: string | null } {
  const q = (...args: string[]) => {
    try {
      return git(root, ...args).trim() || null;
    } catch {
      return null;
    }
  };
  return { commit: q('rev-parse', '-q', '--verify', 'HEAD'), branch: q('symbolic-ref', '-q', 'HEAD') };
}
const gitTips = (root: string, ...patterns: string[]) =>
  [
    ...new Set(
      git(root, 'for-each-ref', '--format=%(objectname)', ...patterns)
        .split('\n')
        .filter(Boolean),
    ),
  ].sort();
const sorted = (a: string[] | undefined) => (a ? [...a].sort() : a);
const GUARD = ['refs/heads/', 'refs/tags/', 'refs/remotes/'];

function gitCommit(root: string, id: string) {
  const [tree = '', parents = '', subject = '', body = ''] = git(root, 'log', '-1', '--format=%T%x00%P%x00%s%x00%b', id).split('\0');
  return { tree, parents: parents.split(' ').filter(Boolean), subject, body: body.trim() };
}

describe('reading git files as git does', () => {
  it('HEAD: on a branch, unborn, detached, and on a packed branch', () => {
    const { root, dirs } = repo();
    expect(readHead(dirs)).toEqual({ commit: null, branch: 'refs/heads/main' });
    expect(gitHead(root)).toEqual(readHead(dirs));
    expect(headCommitOf(dirs.gitDir, dirs.commonDir)).toBe('unborn refs/heads/main');
    commit(root, 'a.txt', 'one');
    expect(headCommitOf(dirs.gitDir, dirs.commonDir)).toBe(gitHead(root).commit);
    commit(root, 'b.txt', 'two');
    expect(readHead(dirs)).toEqual(gitHead(root));
    git(root, 'checkout', '-q', '--detach', 'HEAD~1');
    expect(readHead(dirs)).toEqual(gitHead(root));
    expect(readHead(dirs)?.branch).toBeNull();
    git(root, 'checkout', '-q', '-b', 'feat/deep/x');
    git(root, 'pack-refs', '--all');
    expect(readHead(dirs)).toEqual(gitHead(root));
    expect(readHead(dirs)?.branch).toBe('refs/heads/feat/deep/x');
  });

  it('ref tips: loose, packed and both, nested names, annotated tags, symbolic remote refs, a dangling symref', () => {
    const { root, dirs } = repo();
    const c1 = commit(root, 'a.txt', 'one');
    commit(root, 'b.txt', 'two');
    git(root, 'branch', 'feat/a/b', c1);
    git(root, 'tag', 'light', c1);
    git(root, 'tag', '-a', '-m', 'annotated', 'v1');
    git(root, 'update-ref', 'refs/remotes/origin/main', c1);
    git(root, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main');
    git(root, 'update-ref', 'refs/notes/commits', c1);
    const check = () => {
      expect(sorted(refTips(dirs))).toEqual(gitTips(root));
      expect(sorted(refTips(dirs, GUARD))).toEqual(gitTips(root, 'refs/heads', 'refs/tags', 'refs/remotes'));
    };
    check();
    // The annotated tag is listed as the tag object, as for-each-ref lists it.
    expect(refTips(dirs)).toContain(git(root, 'rev-parse', 'v1').trim());
    git(root, 'pack-refs', '--all');
    check();
    // A packed ref moved again is loose and newer: the loose one counts.
    commit(root, 'c.txt', 'three');
    git(root, 'update-ref', 'refs/heads/feat/a/b', 'HEAD');
    check();
    // A symbolic ref to a ref that does not exist: git lists nothing for it.
    git(root, 'symbolic-ref', 'refs/remotes/upstream/HEAD', 'refs/remotes/upstream/gone');
    check();
    // A ref being written is not a ref yet (its commit is on no ref).
    // No input: commit-tree with -m reads none, and writing to a process that exits first is EPIPE.
    const unreferenced = gitIn(root, '', 'commit-tree', 'HEAD^{tree}', '-m', 'on no ref');
    writeFileSync(join(dirs.commonDir, 'refs', 'heads', 'next.lock'), `${unreferenced}\n`);
    check();
    expect(refTips(dirs)).not.toContain(unreferenced);
    // A broken ref file: not a guess, git's to answer.
    writeFileSync(join(dirs.commonDir, 'refs', 'heads', 'broken'), 'not an id\n');
    expect(refTips(dirs)).toBeUndefined();
  });

  it('a linked work tree: its own HEAD; every ref only from the main work tree', () => {
    const { root, dirs } = repo();
    commit(root, 'a.txt', 'one');
    const wt = join(base, `wt${n++}`);
    git(root, 'worktree', 'add', '-q', '-b', 'side', wt);
    commit(wt, 'w.txt', 'in the work tree');
    const wdirs: GitDirs = { gitDir: realpathSync(git(wt, 'rev-parse', '--absolute-git-dir').trim()), commonDir: dirs.commonDir };
    expect(readHead(wdirs)).toEqual(gitHead(wt));
    expect(readHead(wdirs)?.branch).toBe('refs/heads/side');
    expect(readHead(dirs)).toEqual(gitHead(root));
    expect(sorted(refTips(wdirs, GUARD))).toEqual(gitTips(wt, 'refs/heads', 'refs/tags', 'refs/remotes'));
    expect(refTips(wdirs)).toBeUndefined();
  });

  it('commits: root, ordinary, merge; subject and body split as git splits them', () => {
    const { root, dirs } = repo();
    const first = commit(root, 'a.txt', 'root commit');
    git(root, 'checkout', '-q', '-b', 'side');
    commit(root, 's.txt', 'side work');
    git(root, 'checkout', '-q', 'main');
    commit(root, 'm.txt', 'main work');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge side', 'side');
    const merge = git(root, 'rev-parse', 'HEAD').trim();
    writeFiles(root, { 'x.txt': 'x' });
    git(root, 'add', 'x.txt');
    // Leading blank lines, a subject over two lines with trailing blanks, indented body lines, CRLF.
    gitIn(root, '\n\n  Subject line one  \nand two\t\n\n\n   body indented\r\nsecond body line\n\n', 'commit', '-q', '--cleanup=verbatim', '-F', '-');
    const odd = git(root, 'rev-parse', 'HEAD').trim();
    for (const id of [first, merge, odd]) {
      const mine = readCommitObject(dirs, id);
      expect(mine).toBeDefined();
      expect({ ...mine!, body: mine!.body.trim() }).toEqual(gitCommit(root, id));
    }
    expect(readCommitObject(dirs, merge)?.parents).toHaveLength(2);
    expect(readCommitObject(dirs, first)?.parents).toEqual([]);
  });

  it('says it cannot tell for a packed commit, another encoding, or something that is not a commit', () => {
    const { root, dirs } = repo();
    const c = commit(root, 'a.txt', 'one');
    const tree = git(root, 'rev-parse', 'HEAD^{tree}').trim();
    // A commit whose message git re-encodes on the way out.
    const latin = gitIn(
      root,
      `tree ${tree}\nparent ${c}\nauthor T <t@e> 0 +0000\ncommitter T <t@e> 0 +0000\nencoding ISO-8859-1\n\ncaf\xe9\n`,
      'hash-object',
      '-t',
      'commit',
      '-w',
      '--stdin',
    );
    expect(readCommitObject(dirs, latin)).toBeUndefined();
    // A signed-looking header over several lines is skipped like any other header.
    const signed = gitIn(
      root,
      `tree ${tree}\nparent ${c}\nauthor T <t@e> 0 +0000\ncommitter T <t@e> 0 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned subject\n\nsigned body\n`,
      'hash-object',
      '-t',
      'commit',
      '-w',
      '--stdin',
    );
    expect(readCommitObject(dirs, signed)).toEqual({ ...gitCommit(root, signed), body: 'signed body\n' });
    expect(readCommitObject(dirs, tree)).toBeUndefined();
    expect(readCommitObject(dirs, 'HEAD')).toBeUndefined();
    git(root, 'gc', '-q', '--prune=now');
    expect(readCommitObject(dirs, c)).toBeUndefined();
  });

  it('ref tips while `git pack-refs` runs: loose refs are read before packed-refs, as git reads them, so none is dropped', async () => {
    const { root, dirs } = repo();
    // 300 branches, each on a commit of its own (one fast-import).
    const BRANCHES = 1000;
    let script = '';
    for (let i = 0; i < BRANCHES; i++) script += `commit refs/heads/b${i}\ncommitter T <t@e> ${1_700_000_000 + i} +0000\ndata ${`c${i}`.length}\nc${i}\n\n`;
    gitIn(root, script, 'fast-import', '--quiet');
    const ids = gitTips(root, 'refs/heads/');
    expect(ids).toHaveLength(BRANCHES);
    // Another process packs every ref and writes them loose again, over and over (what `git commit`'s auto-maintenance and ref updates do).
    const updates = git(root, 'for-each-ref', '--format=update %(refname) %(objectname)', 'refs/heads/');
    writeFileSync(join(root, '.git', 'updates'), updates);
    const churn = spawn('sh', ['-c', 'while :; do git pack-refs --all; git update-ref --stdin < .git/updates; done'], { cwd: root, stdio: 'ignore' });
    let reads = 0;
    const short: number[] = [];
    try {
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        const tips = refTips(dirs, ['refs/heads/']);
        if (tips) {
          reads++;
          if (tips.length !== BRANCHES) short.push(tips.length);
        }
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      churn.kill('SIGKILL');
    }
    expect(reads).toBeGreaterThan(20);
    expect(short, `${short.length} of ${reads} reads dropped refs`).toEqual([]);
  }, 20_000);
});
