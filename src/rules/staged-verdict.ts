/**
 * The staged verdict kept ready: `checkStaged`'s answer for the staged snapshot the daemon
 * last judged, so a pre-commit (or `hermesd check --staged`) whose index stages exactly that
 * snapshot is answered without a git process. Plain code over a repository's paths; the
 * daemon decides when to judge ahead (after the index changed).
 *
 * The verdict is a function of what `git diff --cached` reads and the rules: the index's
 * entries (mode, object, stage, path: `stagedEntriesOf`), the commit HEAD names, the config
 * object, and what makes git diff differently (git's config files and the files they include,
 * as `gitConfigKey` keys them; attributes files). The key holds all of them, computed the same
 * way when the verdict is stored and when it is asked for, so a verdict is served only for the
 * snapshot it judged. Anything this cannot read (a split index, reftable, a config that key
 * cannot be sure of, generator rules, which run commands) is judged in full.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HermesConfig } from '../config/schema.js';
import { gitConfigKey } from '../git/config-files.js';
import { stagedEntriesOf } from '../git/index-file.js';
import { readCommitObject } from '../git/objects.js';
import { headCommitOf } from '../git/refs.js';
import { fileStamp } from '../storage/file-stamp.js';
import type { Change } from '../git/diff-parse.js';
import { checkStaged, judgeStaged, type CheckOptions, type CheckResult } from './engine.js';

export type StagedWhere = {
  root: string;
  gitDir: string;
  commonDir: string;
  /** The daemon's environment: where git finds the user's config and attributes. */
  env: NodeJS.ProcessEnv;
};

export type StagedStats = {
  /** Answers served from a kept verdict (or the judgement of the same snapshot in flight). */
  hits: number;
  /** Answers judged in full: another snapshot, another config, or a snapshot this cannot key. */
  misses: number;
  /** Judgements made ahead of a commit, after the index changed. */
  ahead: number;
  /** The digest of the snapshot judged last, for status (and a benchmark waiting for it). */
  judged?: string;
};

/**
 * `tree`: the staged snapshot's tree (from the entries, computed with the verdict, off the
 * commit's path); `head`: the commit HEAD named. What the judgement read changed is kept apart
 * (`diffs`): it does not depend on the rules.
 */
type Kept = { key: string; config: HermesConfig; result: CheckResult; tree?: string; head: string };

/** One read of an index: the key a verdict is kept under, and the snapshot's trees (see `StagedEntries`). */
export type Snapshot = { key: string; tree?: string; cacheTree?: string };
type InFlight = { key: string; config: HermesConfig; done: Promise<Kept | undefined> };

/** Verdicts kept at once (each is a few violations at most). */
const KEPT_MAX = 4;

/** Whether a verdict under this config may be kept: generator rules run commands over the work tree, so theirs never is. */
export function keepable(config: HermesConfig): boolean {
  return !config.rules.some((r) => r.generator !== undefined);
}

export class StagedVerdicts {
  /** The last few verdicts, newest first: the default index's, and another index's (`GIT_INDEX_FILE`, `commit <paths>`), do not push each other out. */
  private kept: Kept[] = [];
  private inFlight: InFlight | undefined;
  readonly stats: StagedStats = { hits: 0, misses: 0, ahead: 0 };

  constructor(private readonly where: StagedWhere) {}

  /**
   * The staged snapshot in `indexFile`: its identity as the rule engine would judge it, and its
   * trees (the staged files', the one the cache tree names), all from one read of the file;
   * undefined when it cannot be known without git.
   */
  snapshotOf(indexFile: string): Snapshot | undefined {
    const { root, gitDir, commonDir, env } = this.where;
    const entries = stagedEntriesOf(indexFile);
    if (!entries) return undefined;
    const head = headCommitOf(gitDir, commonDir);
    if (!head) return undefined;
    // What changes how git diffs: its config at every level (with the files it includes), attributes files.
    const config = gitConfigKey({ gitDir, commonDir }, env);
    if (config === undefined) return undefined;
    const home = env.HOME || homedir();
    const xdg = env.XDG_CONFIG_HOME || join(home, '.config');
    const attributes = [join(commonDir, 'info', 'attributes'), join(xdg, 'git', 'attributes'), ...entries.attributes.map((p) => join(root, p))];
    return { key: [entries.digest, head, config, ...attributes.map(fileStamp)].join('|'), tree: entries.tree, cacheTree: entries.cacheTree };
  }

  /**
   * `checkStaged` for the index in `indexFile`: the kept verdict when it judged this very
   * snapshot under this config object, else a full judgement (kept for the next asker).
   * `snapshot`: the read a kept verdict was found by (its trees, for the cache-tree check); none after a full judgement.
   */
  async check(config: HermesConfig, indexFile: string, opts: CheckOptions = {}): Promise<CheckResult & { kept: boolean; snapshot?: Snapshot }> {
    if (!keepable(config)) return { ...(await checkStaged(this.where.root, config, { ...opts, indexFile })), kept: false };
    const snapshot = this.snapshotOf(indexFile);
    const key = snapshot?.key;
    if (key !== undefined) {
      const kept = this.keptFor(key, config);
      if (kept) {
        this.stats.hits++;
        return { ...kept.result, kept: true, snapshot };
      }
      const pending = this.inFlight;
      if (pending && pending.key === key && pending.config === config) {
        const done = await pending.done;
        if (done) {
          this.stats.hits++;
          return { ...done.result, kept: true, snapshot };
        }
      }
    }
    this.stats.misses++;
    const result = await this.judge(config, indexFile, snapshot, opts);
    return { ...result, kept: false };
  }

  /**
   * Judges the default index ahead of the next question (after the index or HEAD moved).
   * Resolves once the verdict is kept, or at once when it already is.
   */
  async judgeAhead(config: HermesConfig): Promise<void> {
    if (!keepable(config)) return;
    const indexFile = join(this.where.gitDir, 'index');
    const snapshot = this.snapshotOf(indexFile);
    if (snapshot === undefined) return;
    const { key } = snapshot;
    if (this.keptFor(key, config)) return;
    if (this.inFlight?.key === key && this.inFlight.config === config) {
      await this.inFlight.done;
      return;
    }
    await this.judge(config, indexFile, snapshot, {}).catch(() => undefined);
    this.stats.ahead++;
  }

  /**
   * What a commit of `tree` on `parent` changed, as the judgement of that very snapshot read it
   * (`git diff --cached` against the same commit): undefined when no kept verdict judged it.
   */
  changesOf(tree: string, parent: string): Change[] | undefined {
    return this.diffs.find((d) => d.tree === tree && d.head === parent)?.changes;
  }

  /**
   * What judgements read, by snapshot tree and parent: a fact about git's objects, not about the
   * rules, so it outlives `forget` (a config or authority change between a commit's pre-commit
   * and its post-commit drops the verdicts, not what the commit changed).
   */
  private diffs: Array<{ tree: string; head: string; changes: Change[] }> = [];

  /** Forgets the kept verdict (the daemon's authority or config moved: ask again). */
  forget(): void {
    this.kept = [];
    this.inFlight = undefined;
    this.look = undefined;
  }

  private keptFor(key: string, config: HermesConfig): Kept | undefined {
    return this.kept.find((k) => k.key === key && k.config === config);
  }

  private look: string | undefined;

  /** Whether the default index or HEAD moved since the last call: a stat and HEAD's files, not the whole index. */
  moved(): boolean {
    const look = `${fileStamp(join(this.where.gitDir, 'index'))}|${headCommitOf(this.where.gitDir, this.where.commonDir)}`;
    if (look === this.look) return false;
    this.look = look;
    return true;
  }

  /** HEAD's commit and its tree, as last read (a commit's tree never changes). */
  private headTree: { commit: string; tree: string | undefined } | undefined;

  /** Whether the snapshot stages exactly the tree of HEAD's commit (read without git where the commit is loose). */
  private stagesHead(snapshot: Snapshot | undefined): boolean {
    if (snapshot?.tree === undefined) return false;
    const head = headCommitOf(this.where.gitDir, this.where.commonDir);
    if (!head) return false;
    if (this.headTree?.commit !== head) this.headTree = { commit: head, tree: readCommitObject(this.where, head)?.tree };
    return this.headTree.tree === snapshot.tree;
  }

  /**
   * A full judgement. Its verdict is kept only when the snapshot had the same key before
   * and after git read it: a snapshot that changed meanwhile is not the one git judged.
   */
  private async judge(config: HermesConfig, indexFile: string, snapshot: Snapshot | undefined, opts: CheckOptions): Promise<CheckResult> {
    const key = snapshot?.key;
    // Right after a commit the index stages HEAD's own tree: nothing is staged, and no git process need say so.
    const judged = this.stagesHead(snapshot)
      ? Promise.resolve({ result: { violations: [], warnings: [], files: 0 } as CheckResult, changes: [] as Change[] })
      : judgeStaged(this.where.root, config, { ...opts, indexFile });
    const run = judged.then((j) => j.result);
    if (key === undefined) return run;
    const done = judged.then(
      ({ result, changes }) => {
        const after = this.snapshotOf(indexFile);
        if (after?.key !== key) return undefined;
        const kept: Kept = { key, config, result, ...(after.tree ? { tree: after.tree } : {}), head: key.split('|')[1]! };
        this.kept = [kept, ...this.kept.filter((k) => k.key !== key)].slice(0, KEPT_MAX);
        if (kept.tree && changes) {
          const diff = { tree: kept.tree, head: kept.head, changes };
          this.diffs = [diff, ...this.diffs.filter((d) => d.tree !== diff.tree || d.head !== diff.head)].slice(0, KEPT_MAX);
        }
        this.stats.judged = key.split('|', 1)[0];
        return kept;
      },
      () => undefined,
    );
    const flight: InFlight = { key, config, done };
    this.inFlight = flight;
    void done.finally(() => {
      if (this.inFlight === flight) this.inFlight = undefined;
    });
    return run;
  }
}
