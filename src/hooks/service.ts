/**
 * The daemon's side of the git hooks: one entry point per hook, with the config, the rule
 * engine, the agent and SessionDB wired in. While any hook runs, `running` is above zero and
 * 'hook-start' / 'hook-end' are emitted on ctx.events, so the watcher acts on nothing it sees
 * (a pre-commit that checks out the staged snapshot rewrites files that are not edits).
 */
import { isAbsolute, join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { configOf } from '../config/service.js';
import { postCommitAudit } from '../guard/audit.js';
import { refTipsSinceLastLook, sandboxWrapOf } from '../guard/service.js';
import { precommitPassed, recordPrecommitPass, recordStagedPass } from '../guard/precommit-marker.js';
import type { DaemonContext } from '../daemon/context.js';
import { checkStaged } from '../rules/engine.js';
import { sessionsOf } from '../sessions/service.js';
import { tasksOf } from '../agent/service.js';
import { NotFound, UsageError } from '../errors/index.js';
import { backupsDir, keptBackupDir, pendingBackups, pendingNotice, readWorkState, recoverBackup, type WorkState } from './backup.js';
import { placeOf, postCheckoutEvidence, postCommitEvidence, postMergeEvidence, postRewriteEvidence, readCommit, type Evidence, type Place } from './evidence.js';
import { indexTreeOf } from './git.js';
import { HERMESD_HOOKS, writeHookSettings, type HookName } from './install.js';
import type { HermesConfig } from '../config/schema.js';
import { runPreCommit, type HookOutcome } from './precommit.js';

/**
 * `head`/`branch`: where git was when a post-* hook ran, as the sh hook read it (it runs in the background).
 * `sandboxed`: set by the daemon (never the client) when the hook came over the agent socket, from a sandboxed command.
 */
export type HookRequest = { args: string[]; indexFile?: string; stdin?: string[]; head?: string; branch?: string; sandboxed?: boolean };

export type HookResult = HookOutcome & { hook: string; sessionId?: string };

export class HookService {
  /** Hooks being handled right now; the watcher holds back while this is above zero. */
  running = 0;
  /** Hooks in flight, so a shutdown waits for their restore to finish. */
  readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly ctx: DaemonContext) {}

  async handle(hook: string, req: HookRequest, progress: (line: string) => void, signal: AbortSignal): Promise<HookResult> {
    if (!(HERMESD_HOOKS as readonly string[]).includes(hook)) {
      throw new UsageError(`Unknown hook "${hook}". hermesd handles: ${HERMESD_HOOKS.join(', ')}.`);
    }
    this.running++;
    this.ctx.events.emit('hook-start', { hook });
    const work = this.dispatch(hook as HookName, req, progress, signal);
    this.inflight.add(work);
    try {
      return await work;
    } finally {
      this.inflight.delete(work);
      this.running--;
      this.ctx.events.emit('hook-end', { hook });
      // Refresh the work-tree snapshot others serve, once git has moved.
      if (hook.startsWith('post-')) this.ctx.events.emit('workspace-changed', { hook });
    }
  }

  private async dispatch(hook: HookName, req: HookRequest, progress: (line: string) => void, signal: AbortSignal): Promise<HookResult> {
    const { root, paths } = this.ctx;
    const config = configOf(this.ctx);
    this.refreshSettings(config);
    switch (hook) {
      case 'pre-commit': {
        const pending = pendingBackups(paths.gitDir);
        if (pending.length) {
          // The work tree may still hold the staged snapshot of the interrupted run, not the user's work.
          return { hook, ok: false, exitCode: 1, message: `${pendingNotice(pending)}\nhermesd: this commit waits until it is restored (or: HERMESD_SKIP=1 git commit …  or  git commit --no-verify).` };
        }
        const indexFile = this.indexFileOf(req);
        // hermesd guard (issue 20): a commit from the sandbox has its checks and generators run in it too.
        const wrap = req.sandboxed ? sandboxWrapOf(this.ctx, config) : undefined;
        const outcome = await runPreCommit({
          root,
          gitDir: paths.gitDir,
          indexFile,
          config,
          signal,
          progress,
          env: this.ctx.env,
          wrap,
          checkStaged: () => checkStaged(root, config, { indexFile, signal, wrap }),
          runFix: async ({ task, turnContext, signal: s, onProgress }) => {
            const r = await tasksOf(this.ctx).run({
              task,
              turnContext,
              source: 'hook',
              signal: s,
              onEvent: (e) => {
                if (e.type === 'tool_call') onProgress(`hermesd:   agent: ${e.name} ${typeof e.args === 'string' ? e.args : JSON.stringify(e.args)}`.slice(0, 200));
              },
            });
            return { sessionId: r.sessionId, status: r.status, answer: r.answer };
          },
        });
        // hermesd guard (issue 9): vouch for the tree this pass judged, so post-commit can tell a skipped hook.
        // The index's own cache tree names it without a `git write-tree` (~5 ms) on the commit's path.
        if (outcome.exitCode === 0) {
          const tree = indexTreeOf(indexFile);
          if (tree) recordPrecommitPass(paths.gitDir, tree);
          else recordStagedPass(root, paths.gitDir, indexFile);
        }
        const sessionId = outcome.violations?.length || outcome.checks?.length ? this.recordPreCommit(outcome) : undefined;
        return { hook, ...outcome, sessionId };
      }
      case 'commit-msg':
        return { hook, ok: true, exitCode: 0, message: '' };
      case 'post-commit': {
        const at = await this.placeOf(req);
        const commit = await readCommit(root, at.head);
        const evidence = this.later(hook, async () => postCommitEvidence(root, at, commit));
        // hermesd guard (issue 20): every new commit since the last look is judged, not only HEAD.
        const since = refTipsSinceLastLook(this.ctx);
        // The pre-commit hook judged this tree and nothing else is new: nothing for the audit to find.
        if (commit.tree && precommitPassed(paths.gitDir, commit.tree) && !since) return evidence;
        // hermesd guard (issue 9): a commit the pre-commit hook never judged is re-checked, recorded and said loudly.
        const audit = await postCommitAudit(root, config, { gitDir: paths.gitDir, since });
        if (!audit.notice) return evidence;
        const sessionId = this.store('post-commit', `commit ${audit.commit.slice(0, 10)} skipped the pre-commit hook`, [
          { role: 'user', content: `git post-commit: commit ${audit.commit} skipped the pre-commit hook (${audit.violations.length} rule violation(s)).` },
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
        return this.later(hook, () => postCheckoutEvidence(root, req.args, at));
      }
      case 'post-rewrite': {
        const at = await this.placeOf(req);
        return this.later(hook, () => postRewriteEvidence(root, req.args, req.stdin ?? [], at));
      }
    }
  }

  /**
   * Evidence is written after git has its answer: a post-* hook costs git one round trip,
   * not the SessionDB write. Writes are queued, so they land in the order git ran them.
   */
  private later(hook: string, evidence: () => Promise<Evidence>): HookResult {
    const job = this.evidenceQueue.then(async () => {
      try {
        this.record(hook, await evidence());
      } catch (err) {
        this.ctx.log.warn('hook evidence not recorded', { hook, error: String(err) });
      }
    });
    this.evidenceQueue = job;
    this.inflight.add(job);
    void job.finally(() => this.inflight.delete(job));
    return { hook, ok: true, exitCode: 0, message: '' };
  }

  private evidenceQueue: Promise<void> = Promise.resolve();

  /** Where git was: as the hook read it (no git process), else asked now. */
  private placeOf(req: HookRequest): Promise<Place> {
    if (req.head && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(req.head)) return Promise.resolve({ head: req.head, branch: req.branch || '(detached HEAD)' });
    return placeOf(this.ctx.root);
  }

  /** What the sh hook sources before talking to the daemon (it cannot read YAML). */
  refreshSettings(config: HermesConfig): void {
    const pre = config.hooks['pre-commit'];
    writeHookSettings(this.ctx.paths.gitDir, {
      timeoutMs: config.hooks.timeoutMs,
      longPreCommit: pre.checks.length > 0 || (pre.rules && config.rules.some((r) => r.generator !== undefined)),
    });
  }

  private indexFileOf(req: HookRequest): string {
    if (!req.indexFile) return join(this.ctx.paths.gitDir, 'index');
    return isAbsolute(req.indexFile) ? req.indexFile : resolve(this.ctx.root, req.indexFile);
  }

  private record(hook: string, evidence: Evidence): HookResult {
    const sessionId = this.store(hook, evidence.title, [{ role: 'user', content: evidence.text }]);
    return { hook, ok: true, exitCode: 0, message: '', sessionId };
  }

  private recordPreCommit(o: HookOutcome): string | undefined {
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
    return this.store('pre-commit', summary.slice(0, 120), [
      { role: 'user', content: `git pre-commit (${staged}): ${summary}` },
      ...details.map((content) => ({ role: 'tool' as const, content, toolName: 'check' })),
      { role: 'assistant', content: o.message || (o.ok ? 'commit allowed' : 'commit stopped') },
    ]);
  }

  private store(hook: string, title: string, messages: Array<{ role: 'user' | 'assistant' | 'tool'; content: string; toolName?: string }>): string | undefined {
    try {
      const db = sessionsOf(this.ctx);
      const session = db.createSession({ repo: this.ctx.root, source: 'hook', title: `${hook}: ${title}`.slice(0, 200) });
      for (const m of messages) db.appendMessage(session.id, m);
      db.endSession(session.id, 'completed');
      return session.id;
    } catch (err) {
      // Evidence is worth having, never worth failing a git operation for.
      this.ctx.log.warn('hook evidence not recorded', { hook, error: String(err) });
      return undefined;
    }
  }

  backups(): WorkState[] {
    return pendingBackups(this.ctx.paths.gitDir);
  }

  restore(id?: string) {
    const pending = this.backups();
    const chosen = id ?? (pending.length === 1 ? pending[0]!.id : undefined);
    if (id && !readWorkState(join(backupsDir(this.ctx.paths.gitDir), id)) && !readWorkState(keptBackupDir(this.ctx.paths.gitDir, id))) {
      throw new NotFound(`No backup ${id}. List them with: hermesd hook backups`);
    }
    if (!chosen) {
      throw new UsageError(pending.length === 0 ? 'No interrupted hook left a backup; nothing to restore.' : `Several backups are pending (${pending.map((p) => p.id).join(', ')}); name one: hermesd hook restore <id>.`);
    }
    this.running++;
    this.ctx.events.emit('hook-start', { hook: 'restore' });
    try {
      return recoverBackup(this.ctx.paths.gitDir, chosen);
    } finally {
      this.running--;
      this.ctx.events.emit('hook-end', { hook: 'restore' });
    }
  }
}

export function hooksOf(ctx: DaemonContext): HookService {
  return ctx.service('hooks', () => {
    const service = new HookService(ctx);
    // A config that gains checks or generators: the next pre-commit already streams (bounds silence, not the run).
    ctx.events.on('config-changed', () => {
      try {
        service.refreshSettings(configOf(ctx));
      } catch {
        // an invalid config is reported by the next hook
      }
    });
    // Aborted hooks put the user's work back on their way out; the daemon waits for that.
    ctx.onClose(() => Promise.allSettled([...service.inflight]));
    ctx.statusExtras.set('hooks', () => ({ running: service.running, pendingBackups: pendingBackups(ctx.paths.gitDir).map((b) => b.id) }));
    return service;
  });
}
