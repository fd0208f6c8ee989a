/**
 * The daemon's answers to git's hooks: one entry point per hook. While any hook runs,
 * `runningHook()` names it, and the watcher, which asks, acts on nothing it sees (a pre-commit
 * that checks out the staged snapshot rewrites files that are not edits); 'hook-end' on `events`
 * tells it once the hook's answer has gone out. The pre-commit judges the staged snapshot (kept
 * ready: rules/staged-verdict.ts), runs the checks and fix requests (precommit.ts); post-commit
 * audits what no pre-commit judged; every post-* hook leaves its evidence in SessionDB after git
 * has its answer.
 */
import type { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { HermesConfig } from '../config/schema.js';
import { NotFound, UsageError } from '../errors/index.js';
import { stagedTreeOf } from '../git/index-file.js';
import { readCommitObject } from '../git/objects.js';
import { OBJECT_ID } from '../git/refs.js';
import { gitTry } from '../git/run.js';
import type { JudgingConfig } from '../guard/approval.js';
import { auditChangedAfterJudgement, postCommitAudit, type CommitAudit } from '../guard/audit.js';
import { precommitOfAttempt, precommitPassed, recordJudgedCommit, recordPrecommitPass } from '../rules/precommit-marker.js';
import { backupsDir, keptBackupDir, type RepoPaths } from '../paths/index.js';
import type { CommandWrap } from '../process/run.js';
import type { HookRequest } from '../protocol/hooks.js';
import { checkCommittedTree, checkStaged, type CheckResult } from '../rules/engine.js';
import { formatViolations } from '../rules/format.js';
import { StagedVerdicts } from '../rules/staged-verdict.js';
import type { SessionDB } from '../sessions/db.js';
import { fileStamp } from '../storage/file-stamp.js';
import type { Logger } from '../storage/log.js';
import { attemptStart, isAttemptId, processStart } from './attempt.js';
import { BackupGone, pendingBackupsIn, pendingNotice, readWorkState, recoverBackup, type WorkState } from './backup.js';
import {
  placeOf,
  postCheckoutEvidence,
  postCommitEvidence,
  postMergeEvidence,
  postRewriteEvidence,
  readCommit,
  type Evidence,
  type Place,
} from './evidence.js';
import { ANSWERED_HOOKS, type HookName } from './names.js';
import { runPreCommit, type FixRequest, type FixResult, type HookOutcome } from './precommit.js';

/** What the hooks need of the process around them: where the repository is, a log, and where 'hook-end' goes. */
export type GitHooksContext = { root: string; paths: RepoPaths; env: NodeJS.ProcessEnv; log: Logger; events: EventEmitter };

/** What the hooks ask of the rest of the daemon. */
export type GitHooksPorts = {
  /** SessionDB, where the evidence goes: asked for at the first evidence (it opens then), kept after. */
  sessions: () => SessionDB;
  /** How a commit made in hermesd's sandbox has its checks and generators run: in the same sandbox (undefined: no sandbox here). */
  sandboxWrap: (config: HermesConfig) => CommandWrap | undefined;
  /** The ref tips at the previous look, and records the current ones (post-commit judges every commit beyond them). */
  refTipsSinceLastLook: () => string[] | undefined;
  /** A failing check's fix request, run as a task of hermesd's agent. */
  runFix: (request: FixRequest) => Promise<FixResult>;
  /** What a new commit on `parent` changed, where the judgement of its snapshot read it (the guard's secret values need no git log for it). */
  committed?: (commit: string, parent: string, paths: string[]) => void;
  /**
   * Resolves when a record may be written without the daemon stopping for it: SessionDB's
   * redaction knows the secret values git's history holds (read without blocking, where it had
   * not been read for the refs as they are: SecretValues.ready).
   */
  recordable?: () => Promise<void>;
};

export type HookResult = HookOutcome & {
  hook: string;
  sessionId?: string;
  /**
   * The notices in `message` that must reach a terminal (a post-commit audit's, and those an
   * earlier answer could not deliver): given back with `unread` when this answer did not reach its client.
   */
  notices?: string[];
};

export class GitHooks {
  /** Hooks being handled right now, by name (a restore counts as 'restore'); the watcher holds back while any runs. */
  private readonly runningNow = new Map<string, number>();
  /** Hooks in flight, so a shutdown waits for their restore to finish. */
  readonly inflight = new Set<Promise<unknown>>();

  /** Post-commit notices whose client went away before they were printed: the next hook's answer carries them. */
  private readonly undelivered: string[] = [];

  /** The verdict on the staged snapshot, kept ready for the next pre-commit and `hermesd check --staged`. */
  readonly staged: StagedVerdicts;

  /** Where an interrupted hook's backups wait (`<git-dir>/hermesd/backups`). */
  private readonly backupsFolder: string;

  /** SessionDB once the first evidence asked for it. */
  private db: SessionDB | undefined;

  /** `sessions` and `runFix` are resolved on first use: a daemon that only answers post-* hooks starts no agent. */
  constructor(
    private readonly ctx: GitHooksContext,
    private readonly deps: GitHooksPorts,
  ) {
    this.staged = new StagedVerdicts({ root: ctx.root, gitDir: ctx.paths.gitDir, commonDir: ctx.paths.commonDir, env: ctx.env });
    this.backupsFolder = backupsDir(ctx.paths.gitDir);
  }

  /** How many hooks are being handled right now. */
  get running(): number {
    let n = 0;
    for (const count of this.runningNow.values()) n += count;
    return n;
  }

  /** A hook being handled right now, if any (what the watcher says it waits for). */
  runningHook(): string | undefined {
    return this.runningNow.keys().next().value;
  }

  private begin(hook: string): void {
    this.runningNow.set(hook, (this.runningNow.get(hook) ?? 0) + 1);
  }

  /** The hook is done; whoever waits for its end hears of it once its answer has gone out. */
  private end(hook: string): void {
    const n = (this.runningNow.get(hook) ?? 0) - 1;
    if (n > 0) this.runningNow.set(hook, n);
    else this.runningNow.delete(hook);
    setImmediate(() => this.ctx.events.emit('hook-end', { hook }));
  }

  /**
   * Keeps the staged verdict ready: after the index or HEAD moved (the watcher's
   * 'workspace-changed', a hook's end; the index's own write at once, 'index-written'), the
   * default index is judged in the background, one judgement at a time, so the next pre-commit
   * finds its answer. Only where the pre-commit judges rules; a stat and HEAD's files decide
   * whether anything moved. `config`: the config in force (throws while it is invalid: then
   * nothing is judged ahead, and the next hook reports it).
   */
  judgeAhead(config: { get(): HermesConfig }): void {
    const { events, log } = this.ctx;
    let running = false;
    let again = false;
    const run = () => {
      if (running) {
        again = true;
        return;
      }
      let current: HermesConfig;
      try {
        current = config.get();
      } catch {
        return;
      }
      if (!current.hooks['pre-commit'].rules || current.rules.length === 0 || !this.staged.moved()) return;
      running = true;
      void this.staged
        .judgeAhead(current)
        .catch((err: unknown) => log.warn('staged verdict not judged ahead', { error: String(err) }))
        .finally(() => {
          running = false;
          if (again) {
            again = false;
            run();
          }
        });
    };
    events.on('workspace-changed', run);
    // The index just written: judged on the next turn of the loop, ahead of a commit that follows at once.
    let soon: NodeJS.Immediate | undefined;
    events.on('index-written', () => {
      soon ??= setImmediate(() => {
        soon = undefined;
        run();
      });
    });
    const anew = () => {
      this.staged.forget();
      run();
    };
    events.on('config-changed', anew);
    events.on('authority-changed', anew);
  }

  /**
   * A git hook's question as the ask route received it: `recover` (a client whose daemon
   * stopped mid pre-commit) puts the commit's work back and refuses; any other hook is
   * handled. A question without an attempt id (curl's) gets the git command above the
   * runner's shell, read from /proc, from `pid`.
   */
  async ask(
    hook: string,
    req: HookRequest,
    from: { pid?: number },
    progress: (line: string) => void,
    signal: AbortSignal,
    judging: JudgingConfig,
  ): Promise<HookResult> {
    if (!req.sandboxed && !req.attempt && from.pid) req.attempt = (await import('./attempt.js')).attemptOf(from.pid);
    if (hook === 'recover') {
      const { restoreAfterDaemonLoss, selfRestoreMessage } = await import('./recover.js');
      const r = await restoreAfterDaemonLoss(this.ctx.paths.gitDir, { attempt: req.attempt });
      const said = selfRestoreMessage(r);
      return {
        hook,
        ok: false,
        exitCode: 1,
        message: `${said || 'hermesd: nothing of this commit needed putting back.'}\nhermesd: commit again (a new daemon judges it). The daemon log says why the last one stopped: hermesd logs`,
      };
    }
    return this.handle(hook, req, progress, signal, judging);
  }

  /** One hook's question, judged with `judging` (the config in force, the last valid one while the files do not load). */
  async handle(hook: string, req: HookRequest, progress: (line: string) => void, signal: AbortSignal, judging: JudgingConfig): Promise<HookResult> {
    if (!(ANSWERED_HOOKS as readonly string[]).includes(hook)) {
      throw new UsageError(`Unknown hook "${hook}". hermesd handles: ${ANSWERED_HOOKS.join(', ')}.`);
    }
    this.begin(hook);
    const started = Date.now();
    const work = this.dispatch(hook as HookName, req, progress, signal, judging);
    this.inflight.add(work);
    let result: HookResult | undefined;
    try {
      result = await work;
      const own = hook === 'post-commit' && result.message ? [result.message] : [];
      const carried = this.undelivered.splice(0);
      if (carried.length) result = { ...result, message: [...carried, result.message].filter(Boolean).join('\n') };
      if (carried.length || own.length) result = { ...result, notices: [...carried, ...own] };
      // A client that went away while the hook worked reads nothing: its notices wait for the next hook.
      if (signal.aborted) result = this.unread(result);
      return result;
    } finally {
      // `hermesd logs` shows what the hooks did (one line each), not only daemon events.
      this.ctx.log.info(`hook ${hook}${req.phase ? ` (${req.phase})` : ''}`, {
        via: req.via,
        ...(result ? { exitCode: result.exitCode } : { error: signal.aborted ? 'client went away' : 'failed' }),
        ms: Date.now() - started,
        ...(result?.violations?.length ? { violations: result.violations.length } : {}),
        ...(result?.sessionId ? { sessionId: result.sessionId } : {}),
      });
      this.inflight.delete(work);
      this.end(hook);
      // Refresh the work-tree snapshot others serve, once git has moved.
      if (hook.startsWith('post-')) this.ctx.events.emit('workspace-changed', { hook });
    }
  }

  /**
   * An answer that did not reach its client (the connection had closed: the terminal went
   * away): its notices are kept, and the next hook's answer carries them. Returns the
   * result without them, so they are kept once.
   */
  unread(result: HookResult): HookResult {
    if (!result.notices?.length) return result;
    this.undelivered.push(...result.notices);
    this.ctx.log.warn('post-commit notice not delivered (its client went away); the next hook shows it', { notice: result.notices[0]!.split('\n')[0] });
    const { notices: _kept, ...rest } = result;
    return rest;
  }

  private async dispatch(
    hook: HookName,
    req: HookRequest,
    progress: (line: string) => void,
    signal: AbortSignal,
    { config, broken }: JudgingConfig,
  ): Promise<HookResult> {
    const { root, paths } = this.ctx;
    if (broken && (hook === 'pre-commit' || hook === 'pre-commit-final')) {
      // The last valid rules judge; a commit of the broken file itself waits for its fix.
      const staged = gitTry(['diff', '--cached', '--name-only', '--', '.hermes/config.yaml'], { cwd: this.ctx.root, indexFile: this.indexFileOf(req) });
      if (staged.status !== 0 || staged.stdout.trim())
        return {
          hook,
          ok: false,
          exitCode: 2,
          message: `hermesd: this commit changes .hermes/config.yaml, which does not load:\n${broken}\nhermesd: fix it, then commit again.`,
        };
      progress(`hermesd: .hermes/config.yaml does not load (${broken.split('\n')[0]}); judged with the last valid rules.`);
    }
    switch (hook) {
      case 'pre-commit-final': {
        // The end of a hook manager's chain: a commit whose pre-commit this daemon judged is re-checked; --no-verify is post-commit's to report.
        const attempt = isAttemptId(req.attempt) ? req.attempt : undefined;
        const judged = attempt ? precommitOfAttempt(paths.gitDir, attempt) : undefined;
        if (!judged) return { hook, ok: true, exitCode: 0, message: '' };
        return { hook, ...(await this.recheck(config, this.indexFileOf(req), attempt, judged.trees.at(-1), signal)) };
      }
      case 'pre-commit': {
        const pending = pendingBackupsIn(this.backupsFolder);
        if (pending.length) {
          // The work tree may still hold the staged snapshot of the interrupted run, not the user's work.
          return {
            hook,
            ok: false,
            exitCode: 1,
            message: `${pendingNotice(pending)}\nhermesd: this commit waits until it is restored (or: HERMESD_SKIP=1 git commit …  or  git commit --no-verify).`,
          };
        }
        const indexFile = this.indexFileOf(req);
        // hermesd guard: a commit from the sandbox has its checks and generators run in it too.
        const wrap = req.sandboxed ? this.deps.sandboxWrap(config) : undefined;
        const attempt = isAttemptId(req.attempt) ? req.attempt : undefined;
        const judged = attempt ? precommitOfAttempt(paths.gitDir, attempt) : undefined;
        // A second pre-commit of the same git command (the end of the hook chain, or a hook
        // manager that runs hermesd twice) re-checks only what changed since the verdict.
        if (req.phase === 'final' || judged) return { hook, ...(await this.recheck(config, indexFile, attempt, judged?.trees.at(-1), signal, wrap)) };
        const outcome = await runPreCommit({
          root,
          gitDir: paths.gitDir,
          indexFile,
          attempt,
          config,
          signal,
          progress,
          env: this.ctx.env,
          wrap,
          checkStaged: () => this.checkCommitted(config, indexFile, signal, wrap),
          runFix: (request) => this.deps.runFix(request),
        });
        // The record that this attempt's pre-commit judged the tree it lets through (in memory:
        // post-commit and the agent guard ask for it; no file an agent could forge).
        if (outcome.exitCode === 0) this.recordPass(indexFile, attempt);
        if (outcome.violations?.length || outcome.checks?.length) this.recordPreCommit(outcome);
        return { hook, ...outcome };
      }
      case 'commit-msg':
        return { hook, ok: true, exitCode: 0, message: '' };
      case 'post-commit': {
        const at = await this.placeOf(req);
        // The audit needs the commit's id and tree, read from git's files; the evidence's list of
        // files (a git process) is read after the answer, which git waits for.
        const object = OBJECT_ID.test(at.head) ? readCommitObject(this.ctx.paths, at.head) : undefined;
        const read = object ? undefined : await readCommit(root, at.head, this.ctx.paths);
        const commit = read ?? { sha: at.head, tree: object!.tree };
        // What the commit changed, from the judgement of its snapshot when one judged it on this parent (no git process).
        const judged = object?.parents.length === 1 ? this.staged.changesOf(object.tree, object.parents[0]!) : undefined;
        if (judged)
          this.deps.committed?.(
            at.head,
            object!.parents[0]!,
            judged.flatMap((c) => (c.oldPath !== undefined ? [c.oldPath, c.path] : [c.path])),
          );
        const evidence = this.later(hook, async () => postCommitEvidence(root, at, read ?? (await readCommit(root, commit.sha, this.ctx.paths, judged))));
        // hermesd guard: every new commit since the last look is judged, not only HEAD.
        const since = this.deps.refTipsSinceLastLook();
        const audit = await this.auditCommit(config, commit.sha, commit.tree, req, since);
        if (!audit?.notice) return evidence;
        const changed = audit.hookRan && audit.violations.length > 0;
        const title = changed ? 'changed after the pre-commit judged it' : audit.hookRan ? 'reaches new commits no hook judged' : 'skipped the pre-commit hook';
        const sessionId = await this.store('post-commit', `commit ${audit.commit.slice(0, 10)} ${title}`, [
          {
            role: 'user',
            content: changed
              ? `git post-commit: commit ${audit.commit} was changed after the pre-commit hook judged it (${audit.violations.length} rule violation(s) in what changed).`
              : audit.hookRan
                ? `git post-commit: commit ${audit.commit} reaches new commits that no pre-commit hook judged (${audit.earlier?.length ?? 0} breaking the rules).`
                : `git post-commit: commit ${audit.commit} skipped the pre-commit hook (${audit.violations.length} rule violation(s)).`,
          },
          { role: 'assistant', content: audit.notice },
        ]);
        return { ...evidence, message: audit.notice, sessionId };
      }
      case 'post-merge': {
        const at = await this.placeOf(req);
        return this.later(hook, () => postMergeEvidence(root, req.args, at));
      }
      case 'post-checkout': {
        const at = await this.placeOf(req);
        // A checkout of files (`git checkout -- file`, `git restore`) does not move HEAD: a run of
        // them at one commit is one session, not one each.
        if (req.args[2] === '0') return this.later(hook, () => postCheckoutEvidence(root, req.args, at), { group: `files@${at.head}` });
        return this.later(hook, () => postCheckoutEvidence(root, req.args, at));
      }
      case 'post-rewrite': {
        const at = await this.placeOf(req);
        return this.later(hook, () => postRewriteEvidence(root, req.args, req.stdin ?? [], at));
      }
    }
  }

  /**
   * The pre-commit's re-check at the end of the hook chain: the tree git will commit, judged
   * only where it differs from the last verdict of this attempt (`since`). Without a verdict
   * to compare with (no attempt id, or this daemon did not see the first pre-commit), the
   * whole staged snapshot is judged by the rules; checks are not run again.
   */
  private async recheck(
    config: HermesConfig,
    indexFile: string,
    attempt: string | undefined,
    since: string | undefined,
    signal: AbortSignal,
    wrap?: CommandWrap,
  ): Promise<HookOutcome> {
    const tree = this.treeOf(indexFile);
    if (tree && since && tree === since) return { ok: true, exitCode: 0, message: '' };
    const { violations, warnings } = await checkStaged(this.ctx.root, config, { indexFile, signal, wrap, since: tree !== undefined ? since : undefined });
    if (violations.length) {
      const outcome: HookOutcome = {
        ok: false,
        exitCode: 1,
        message: `hermesd: commit refused by the repository's rules (.hermes/config.yaml), in changes made ${since ? 'after hermesd judged the staged files (by a hook that ran later, e.g. a formatter that re-staged them)' : 'by the hooks of this commit'}:\n${formatViolations({ violations, warnings })}`,
        violations,
      };
      this.recordPreCommit(outcome);
      return outcome;
    }
    if (tree) recordPrecommitPass(this.ctx.paths.gitDir, tree, Date.now(), { attempt });
    else this.recordPass(indexFile, attempt);
    return { ok: true, exitCode: 0, message: warnings.length ? formatViolations({ violations, warnings }) : '' };
  }

  /**
   * The staged snapshot's verdict (kept ready, or judged now), and — past `git diff --cached` —
   * the tree git will commit when the index's cache tree names another one than its entries.
   */
  private async checkCommitted(config: HermesConfig, indexFile: string, signal: AbortSignal, wrap?: CommandWrap): Promise<CheckResult> {
    const staged = await this.staged.check(config, indexFile, { signal, wrap });
    const committed = await checkCommittedTree(this.ctx.root, config, indexFile, {
      indexFile,
      signal,
      ...(staged.snapshot ? { snapshot: staged.snapshot } : {}),
    });
    if (committed.trees.length > 0) this.judgedTrees.set(indexFile, { trees: committed.trees, stamp: fileStamp(indexFile) });
    else this.judgedTrees.delete(indexFile);
    if (committed.trees.length < 2) return staged;
    return { violations: [...staged.violations, ...committed.violations], warnings: [...staged.warnings, ...committed.warnings], files: staged.files };
  }

  /**
   * Per index file, the trees its last pre-commit judged (the staged files', and the cache
   * tree's when it named another one), and the file's stamp then (a fix staged since changes it).
   */
  private readonly judgedTrees = new Map<string, { trees: string[]; stamp: string }>();

  /** The tree of the index being committed, from its entries (no process), else `git write-tree`. */
  private treeOf(indexFile: string): string | undefined {
    const staged = stagedTreeOf(indexFile);
    if (staged) return staged;
    const r = gitTry(['write-tree'], { cwd: this.ctx.root, indexFile });
    return r.status === 0 ? r.stdout.trim() : undefined;
  }

  private recordPass(indexFile: string, attempt: string | undefined): void {
    // Both trees when the cache tree named another than the staged files (the commit records that one); else the index's now.
    const judged = this.judgedTrees.get(indexFile);
    this.judgedTrees.delete(indexFile);
    const trees = judged && (judged.trees.length > 1 || judged.stamp === fileStamp(indexFile)) ? judged.trees : [this.treeOf(indexFile)];
    for (const t of trees) if (t) recordPrecommitPass(this.ctx.paths.gitDir, t, Date.now(), { attempt });
  }

  /**
   * Whether this commit's own pre-commit ran, asked by attempt: a record belongs to one git
   * command, so the verdict of an attempt commit-msg rejected never covers the next one.
   * Undefined: nothing to say (judged, or judged and unchanged).
   */
  private async auditCommit(config: HermesConfig, sha: string, tree: string, req: HookRequest, since?: string[]): Promise<CommitAudit | undefined> {
    const { root, paths } = this.ctx;
    const gitDir = paths.gitDir;
    const attempt = isAttemptId(req.attempt) ? req.attempt : undefined;
    // commits other than HEAD that are new since the daemon's last look (commit-tree, merges) are judged by content.
    const withEarlier = async (audit: CommitAudit | undefined): Promise<CommitAudit | undefined> => {
      if (!since) return audit;
      const earlier = await postCommitAudit(root, config, { dirs: paths, hookRan: true, since });
      if (!earlier.earlier?.length) return audit;
      if (!audit) return earlier;
      return { ...audit, earlier: earlier.earlier, notice: [audit.notice, earlier.notice].filter(Boolean).join('\n') };
    };
    if (!attempt) {
      // No attempt id (no /proc, an old hook script): a tree the pre-commit passed recently counts.
      if (tree && precommitPassed(gitDir, tree)) return withEarlier(undefined);
      return postCommitAudit(root, config, { dirs: paths, hookRan: false, since });
    }
    const rec = precommitOfAttempt(gitDir, attempt);
    if (rec) {
      recordJudgedCommit(gitDir, attempt, sha, tree);
      if (rec.trees.includes(tree)) return withEarlier(undefined);
      return withEarlier(await auditChangedAfterJudgement(root, config, { commit: sha, judgedTree: rec.trees.at(-1)! }));
    }
    // The daemon started after git did: its memory cannot say whether the pre-commit ran.
    const started = attemptStart(attempt);
    const self = processStart();
    const unknown = started !== undefined && self !== undefined && self > started;
    return postCommitAudit(root, config, { dirs: paths, hookRan: false, unknown, since });
  }

  /**
   * Evidence is written after git has its answer: a post-* hook costs git one round trip,
   * not the SessionDB write. Writes are queued, so they land in the order git ran them.
   */
  private later(hook: string, evidence: () => Promise<Evidence>, opts: { group?: string } = {}): HookResult {
    this.afterAnswer(hook, async () => {
      const e = await evidence();
      if (opts.group) await this.recordGrouped(hook, opts.group, e);
      else await this.store(hook, e.title, [{ role: 'user', content: e.text }]);
    });
    return { hook, ok: true, exitCode: 0, message: '' };
  }

  /**
   * `work` (a record in SessionDB) queued behind the records before it, and run once the
   * hook's answer has gone out: git waits for the answer, not for the record, nor for the
   * redaction the record passes through to be ready.
   */
  private afterAnswer(hook: string, work: () => Promise<void>): void {
    const job = this.evidenceQueue.then(async () => {
      try {
        await new Promise((r) => setImmediate(r));
        await work();
      } catch (err) {
        this.ctx.log.warn('hook evidence not recorded', { hook, error: String(err) });
      }
    });
    this.evidenceQueue = job;
    this.inflight.add(job);
    void job.finally(() => this.inflight.delete(job));
  }

  private evidenceQueue: Promise<void> = Promise.resolve();

  /** Where git was: as the hook read it (no git process), else asked now. */
  private placeOf(req: HookRequest): Promise<Place> {
    if (req.head && OBJECT_ID.test(req.head)) return Promise.resolve({ head: req.head, branch: req.branch || '(detached HEAD)' });
    return placeOf(this.ctx.root, this.ctx.paths);
  }

  private indexFileOf(req: HookRequest): string {
    if (!req.indexFile) return join(this.ctx.paths.gitDir, 'index');
    return isAbsolute(req.indexFile) ? req.indexFile : resolve(this.ctx.root, req.indexFile);
  }

  /** The open group of evidence (file checkouts at one commit): its session, when it last grew, how many. */
  private group: { key: string; sessionId: string; at: number; count: number } | undefined;

  /** Evidence that joins the session of the same kind made within EVIDENCE_GROUP_MS, instead of a session each. */
  private async recordGrouped(hook: string, key: string, evidence: Evidence): Promise<void> {
    const g = this.group;
    if (g && g.key === key && Date.now() - g.at < EVIDENCE_GROUP_MS) {
      try {
        await this.deps.recordable?.();
        const db = (this.db ??= this.deps.sessions());
        g.count++;
        g.at = Date.now();
        db.appendMessage(g.sessionId, { role: 'user', content: `${evidence.text} (${g.count} in a row)` });
        db.updateSession(g.sessionId, { title: `${hook}: ${evidence.title} (${g.count}×)`.slice(0, 200) });
        return;
      } catch (err) {
        this.ctx.log.warn('hook evidence not recorded', { hook, error: String(err) });
      }
    }
    const sessionId = await this.store(hook, evidence.title, [{ role: 'user', content: evidence.text }]);
    this.group = sessionId ? { key, sessionId, at: Date.now(), count: 1 } : undefined;
  }

  /** The pre-commit's verdict, recorded after its answer; HEAD is read now, as it was when the answer went out. */
  private recordPreCommit(o: HookOutcome): void {
    const staged = (() => {
      try {
        return readFileSync(join(this.ctx.paths.gitDir, 'HEAD'), 'utf8').trim();
      } catch {
        return '';
      }
    })();
    const summary = o.violations?.length
      ? `pre-commit refused ${o.violations.length} rule violation(s): ${o.violations.map((v) => `${v.file}:${v.line} ${v.rule}`).join('; ')}`
      : `pre-commit checks ${(o.checks ?? []).map((c) => `${c.id} ${c.ok ? 'passed' : 'failed'}`).join(', ')}${o.fix ? `; fix (${o.fix.mode}) ${o.fix.files.length ? `changed ${o.fix.files.join(', ')}` : 'changed nothing'}${o.fix.staged ? ', staged' : ''}` : ''}`;
    const details = (o.checks ?? []).filter((c) => !c.ok).map((c) => `check ${c.id} (${c.run}) output:\n${c.output.slice(-4000)}`);
    const messages = [
      { role: 'user' as const, content: `git pre-commit (${staged}): ${summary}` },
      ...details.map((content) => ({ role: 'tool' as const, content, toolName: 'check' })),
      { role: 'assistant' as const, content: o.message || (o.ok ? 'commit allowed' : 'commit stopped') },
    ];
    this.afterAnswer('pre-commit', async () => {
      await this.store('pre-commit', summary.slice(0, 120), messages);
    });
  }

  /** A record in SessionDB, written once the redaction it passes through is ready (GitHooksPorts.recordable). */
  private async store(
    hook: string,
    title: string,
    messages: Array<{ role: 'user' | 'assistant' | 'tool'; content: string; toolName?: string }>,
  ): Promise<string | undefined> {
    try {
      await this.deps.recordable?.();
      const db = (this.db ??= this.deps.sessions());
      return db.recordSession({ repo: this.ctx.root, source: 'hook', title: `${hook}: ${title}`.slice(0, 200) }, messages).id;
    } catch (err) {
      // Evidence is worth having, never worth failing a git operation for.
      this.ctx.log.warn('hook evidence not recorded', { hook, error: String(err) });
      return undefined;
    }
  }

  backups(): WorkState[] {
    return pendingBackupsIn(this.backupsFolder);
  }

  restore(id?: string) {
    const pending = this.backups();
    const chosen = id ?? (pending.length === 1 ? pending[0]!.id : undefined);
    if (id && !readWorkState(join(backupsDir(this.ctx.paths.gitDir), id)) && !readWorkState(keptBackupDir(this.ctx.paths.gitDir, id))) {
      throw new NotFound(`No backup ${id}. List them with: hermesd hook backups`);
    }
    if (!chosen) {
      throw new UsageError(
        pending.length === 0
          ? 'No interrupted hook left a backup; nothing to restore.'
          : `Several backups are pending (${pending.map((p) => p.id).join(', ')}); name one: hermesd hook restore <id>.`,
      );
    }
    this.begin('restore');
    try {
      return recoverBackup(this.ctx.paths.gitDir, chosen);
    } catch (err) {
      if (err instanceof BackupGone) throw new NotFound(err.message);
      throw err;
    } finally {
      this.end('restore');
    }
  }
}

/** File checkouts at one commit within this long of each other share one session (an agent restoring files one by one). */
const EVIDENCE_GROUP_MS = 10 * 60 * 1000;
