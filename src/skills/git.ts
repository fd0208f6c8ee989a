/**
 * The git repository behind `$HERMES_HOME/skills`: created on first change, with its own
 * identity (commits work on machines without a git identity), no signing and no hooks
 * (a global core.hooksPath such as husky's must not run inside it), and an environment
 * stripped of variables that would point git at another repository (a daemon started
 * from a git hook inherits GIT_DIR and GIT_INDEX_FILE).
 *
 * It runs git through simple-git (src/git/simple.ts): a skill change is a few git commands
 * after a model's tool call, where a millisecond more is nothing, and simple-git's tasks (init,
 * add, commit, log, revparse, showBuffer) say what each step does. simple-git is loaded on
 * the first git command, so a daemon that never changes a skill never loads it.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimpleGit } from '../git/simple.js';

export const SKILLS_GIT_USER = { name: 'hermesd', email: 'hermesd@localhost' };

/** Marks the config block this store appends, so it is appended once. */
const CONFIG_MARKER = '# hermesd: identity, no signing, no hooks';

export type Commit = { rev: string; message: string; date: string };

export class SkillRepo {
  private ready = false;
  private client: Promise<SimpleGit> | undefined;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** The repository's simple-git, with only what git needs in its environment (GIT_DIR, EDITOR, PAGER, … stay out). */
  private git(): Promise<SimpleGit> {
    this.client ??= import('../git/simple.js').then((m) => m.ownedRepoGit(this.dir));
    return this.client;
  }

  /** Creates the repository (once) and commits whatever skills were already there. */
  async ensure(): Promise<void> {
    if (this.ready) return;
    const git = await this.git();
    const configFile = join(this.dir, '.git', 'config');
    if (!existsSync(configFile)) await git.init();
    if (!readFileSync(configFile, 'utf8').includes(CONFIG_MARKER)) {
      // Appended as one block: six `git config` runs would cost six process starts.
      appendFileSync(
        configFile,
        `${CONFIG_MARKER}\n[user]\n\tname = ${SKILLS_GIT_USER.name}\n\temail = ${SKILLS_GIT_USER.email}\n` +
          `[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n[core]\n\thooksPath = /dev/null\n\tautocrlf = false\n`,
      );
    }
    if (!(await this.head())) {
      await git.add(['-A', '-v', '--', '.']);
      await git.commit('init: skills repository (existing skills imported)', undefined, { '--allow-empty': null, '--no-verify': null });
    }
    this.ready = true;
  }

  async head(): Promise<string | undefined> {
    try {
      return (await (await this.git()).revparse(['--verify', 'HEAD'])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Stages `paths` (folders relative to the repository; additions, edits and deletions) and
   * commits exactly them. Returns the new commit, or undefined when nothing changed.
   */
  async commitPaths(candidates: string[], message: string): Promise<string | undefined> {
    const git = await this.git();
    // A pathspec that matches nothing (a never-committed folder, now gone) is an error to git.
    const paths: string[] = [];
    for (const p of candidates) {
      if (existsSync(join(this.dir, p)) || (await git.raw(['ls-files', '--', p])).trim()) paths.push(p);
    }
    if (paths.length === 0) return undefined;
    // -v: simple-git waits 50 ms more after a command that printed nothing (src/git/simple.ts).
    await git.add(['-A', '-v', '--', ...paths]);
    const staged = (await git.diff(['--cached', '--name-only', '--', ...paths])).trim();
    if (!staged) return undefined;
    await git.commit(message, paths, { '--no-verify': null });
    return this.head();
  }

  /** Puts the index for `paths` back to HEAD after a failed commit. */
  async unstage(paths: string[]): Promise<void> {
    try {
      await (await this.git()).reset(['-q', 'HEAD', '--', ...paths]);
    } catch {
      // nothing staged
    }
  }

  async commitCount(): Promise<number> {
    if (!(await this.head())) return 0;
    return Number((await (await this.git()).raw(['rev-list', '--count', 'HEAD'])).trim());
  }

  /** Commits that touched any of `paths`, newest first. */
  async log(paths: string[]): Promise<Commit[]> {
    if (!(await this.head())) return [];
    // simple-git's default log fields hold what a skill's history shows: %H, %s, %aI.
    const log = await (await this.git()).log(['--', ...paths]);
    return log.all.map((c) => ({ rev: c.hash, message: c.message, date: c.date }));
  }

  /** The full commit id of `rev`, or undefined when it names no commit. */
  async resolve(rev: string): Promise<string | undefined> {
    if (!/^[0-9a-zA-Z._~^\/-]+$/.test(rev) || rev.startsWith('-')) return undefined;
    try {
      return (await (await this.git()).revparse(['--verify', '-q', `${rev}^{commit}`])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** Paths of the files (with modes) under `prefix/` at `rev`. */
  async filesAt(rev: string, prefix: string): Promise<Array<{ path: string; mode: string; blob: string }>> {
    const out = await (await this.git()).raw(['ls-tree', '-r', '-z', rev, '--', prefix + '/']);
    return out
      .split('\0')
      .filter(Boolean)
      .map((entry) => {
        const [meta, path] = entry.split('\t') as [string, string];
        const [mode, , blob] = meta.split(' ') as [string, string, string];
        return { path, mode, blob };
      });
  }

  /** Top-level tree entries at `rev` (to find which folder held a skill). */
  async treeDirs(rev: string, path = ''): Promise<string[]> {
    const out = await (await this.git()).raw(['ls-tree', '-z', '--name-only', rev, '--', path ? path + '/' : '.']);
    return out.split('\0').filter(Boolean);
  }

  /** A file's bytes as a commit holds them (a revert writes them back). */
  async blob(blob: string): Promise<Buffer> {
    return (await this.git()).showBuffer([blob]);
  }
}
