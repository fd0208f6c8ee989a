/**
 * FROZEN COPY, for comparison only: src/skills/git.ts as it was before (commit
 * 8735f55), running git through the raw runner (src/git/run.ts) instead of simple-git.
 * `npm run bench -- skills` times the same git steps of a skill change through both. Not used
 * by hermesd itself.
 */
/**
 * The git repository behind `$HERMES_HOME/skills`: created on first change, with its own
 * identity (commits work on machines without a git identity), no signing and no hooks
 * (a global core.hooksPath such as husky's must not run inside it), and an environment
 * stripped of variables that would point git at another repository (a daemon started
 * from a git hook inherits GIT_DIR and GIT_INDEX_FILE).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedGitEnv } from '../../src/git/env.js';
import { gitAsync } from '../../src/git/run.js';

const SKILLS_GIT_USER = { name: 'hermesd', email: 'hermesd@localhost' };

/** Marks the config block this store appends, so it is appended once. */
const CONFIG_MARKER = '# hermesd: identity, no signing, no hooks';

type Commit = { rev: string; message: string; date: string };

export class SkillRepoBefore {
  private ready = false;
  /** Only what git needs to run; everything else (GIT_DIR, EDITOR, PAGER, …) stays out. */
  private readonly env = isolatedGitEnv();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Runs git in the skills repository; rejects with GitFailed when git fails. */
  private async raw(args: string[]): Promise<string> {
    return (await gitAsync(args, { cwd: this.dir, env: this.env })).toString('utf8');
  }

  /** Creates the repository (once) and commits whatever skills were already there. */
  async ensure(): Promise<void> {
    if (this.ready) return;
    const configFile = join(this.dir, '.git', 'config');
    if (!existsSync(configFile)) await this.raw(['init']);
    if (!readFileSync(configFile, 'utf8').includes(CONFIG_MARKER)) {
      // Appended as one block: six `git config` runs would cost six process starts.
      appendFileSync(
        configFile,
        `${CONFIG_MARKER}\n[user]\n\tname = ${SKILLS_GIT_USER.name}\n\temail = ${SKILLS_GIT_USER.email}\n` +
          `[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n[core]\n\thooksPath = /dev/null\n\tautocrlf = false\n`,
      );
    }
    if (!(await this.head())) {
      await this.raw(['add', '-A', '-v', '--', '.']);
      await this.raw(['commit', '--allow-empty', '--no-verify', '-m', 'init: skills repository (existing skills imported)']);
    }
    this.ready = true;
  }

  async head(): Promise<string | undefined> {
    try {
      return (await this.raw(['rev-parse', '--verify', 'HEAD'])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Stages `paths` (folders relative to the repository; additions, edits and deletions) and
   * commits exactly them. Returns the new commit, or undefined when nothing changed.
   */
  async commitPaths(candidates: string[], message: string): Promise<string | undefined> {
    // A pathspec that matches nothing (a never-committed folder, now gone) is an error to git.
    const paths: string[] = [];
    for (const p of candidates) {
      if (existsSync(join(this.dir, p)) || (await this.raw(['ls-files', '--', p])).trim()) paths.push(p);
    }
    if (paths.length === 0) return undefined;
    await this.raw(['add', '-A', '-v', '--', ...paths]);
    const staged = (await this.raw(['diff', '--cached', '--name-only', '--', ...paths])).trim();
    if (!staged) return undefined;
    await this.raw(['commit', '--no-verify', '-m', message, '--', ...paths]);
    return this.head();
  }

  /** Puts the index for `paths` back to HEAD after a failed commit. */
  async unstage(paths: string[]): Promise<void> {
    try {
      await this.raw(['reset', '-q', 'HEAD', '--', ...paths]);
    } catch {
      // nothing staged
    }
  }

  async commitCount(): Promise<number> {
    if (!(await this.head())) return 0;
    return Number((await this.raw(['rev-list', '--count', 'HEAD'])).trim());
  }

  /** Commits that touched any of `paths`, newest first. */
  async log(paths: string[]): Promise<Commit[]> {
    if (!(await this.head())) return [];
    const out = await this.raw(['log', '--format=%H%x1f%s%x1f%aI', '--', ...paths]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [rev, message, date] = line.split('\x1f') as [string, string, string];
        return { rev, message, date };
      });
  }

  /** The full commit id of `rev`, or undefined when it names no commit. */
  async resolve(rev: string): Promise<string | undefined> {
    if (!/^[0-9a-zA-Z._~^\/-]+$/.test(rev) || rev.startsWith('-')) return undefined;
    try {
      return (await this.raw(['rev-parse', '--verify', '-q', `${rev}^{commit}`])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** Paths of the files (with modes) under `prefix/` at `rev`. */
  async filesAt(rev: string, prefix: string): Promise<Array<{ path: string; mode: string; blob: string }>> {
    const out = await this.raw(['ls-tree', '-r', '-z', rev, '--', prefix + '/']);
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
    const out = await this.raw(['ls-tree', '-z', '--name-only', rev, '--', path ? path + '/' : '.']);
    return out.split('\0').filter(Boolean);
  }

  async blob(blob: string): Promise<Buffer> {
    return gitAsync(['show', blob], { cwd: this.dir, env: this.env });
  }
}
