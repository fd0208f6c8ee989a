/**
 * The git hooks in a daemon (src/githooks/hook-service.ts), wired to the rest of it: SessionDB for
 * the evidence, the guard's sandbox for a sandboxed commit's checks, hermesd's agent for fix
 * requests; their health and pending backups in status and warnings, and the staged verdict
 * judged ahead after the index or HEAD moved.
 */
import type { TaskRunner } from '../../agent/task-runner.js';
import type { HermesConfig } from '../../config/schema.js';
import { pendingBackups, pendingNotice } from '../../githooks/backup.js';
import { hookHealth, type HookHealth } from '../../githooks/health.js';
import { GitHooks } from '../../githooks/hook-service.js';
import { clientProblem } from '../../hook-client/build.js';
import { clientPath } from '../../paths/index.js';
import type { SessionDB } from '../../sessions/db.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';
import type { ConfigInForce } from './config-in-force.js';
import type { GuardService } from './guard.js';

/** How long a hooks health reading is served before it is read again (status is polled by every CLI command). */
const HEALTH_TTL_MS = 2_000;

/** The hook service, with its health and pending backups in status and warnings. */
export function createHookService(
  ctx: DaemonContext,
  deps: { config: ConfigInForce; guard: GuardService; sessions: () => SessionDB; tasks: () => TaskRunner },
): Built<GitHooks> {
  // What the hooks read of the daemon, as values: they call nothing back in the server.
  const service = new GitHooks(
    { root: ctx.root, paths: ctx.paths, env: ctx.env, log: ctx.log, events: ctx.events },
    {
      sessions: deps.sessions,
      sandboxWrap: (config: HermesConfig) => deps.guard.sandboxWrap(config),
      refTipsSinceLastLook: () => deps.guard.refTipsSinceLastLook(),
      committed: (commit, parent, paths) => deps.guard.secrets.committed(commit, parent, paths),
      // Bound, not a closure of this module: the hooks call into security, not back into the server.
      recordable: deps.guard.secrets.ready.bind(deps.guard.secrets),
      runFix: async ({ task, turnContext, signal, onProgress }) => {
        const r = await deps.tasks().run({
          task,
          turnContext,
          source: 'hook',
          signal,
          onEvent: (e) => {
            if (e.type === 'tool_call') onProgress(`hermesd:   agent: ${e.name} ${typeof e.args === 'string' ? e.args : JSON.stringify(e.args)}`.slice(0, 200));
          },
        });
        return { sessionId: r.sessionId, status: r.status, answer: r.answer, error: r.error };
      },
    },
  );
  // Whether git still runs hermesd (a manager reinstalled over it, core.hooksPath unset…): read at most every few seconds.
  let health: { at: number; value: HookHealth } | undefined;
  const healthNow = () => {
    if (!health || Date.now() - health.at > HEALTH_TTL_MS) health = { at: Date.now(), value: hookHealth(ctx.paths) };
    return health.value;
  };
  const pendingNow = ctx.oncePerStatus(() => pendingBackups(ctx.paths.gitDir));
  ctx.report('hooks', () => ({ running: service.running, pendingBackups: pendingNow().map((b) => b.id), staged: { ...service.staged.stats }, ...healthNow() }));
  service.judgeAhead(deps.config);
  ctx.warningSources.push(() => {
    const h = healthNow();
    const pending = pendingNow();
    const client = h.installed ? clientProblem(clientPath(ctx.paths.commonDir)) : undefined;
    return [
      ...(h.installed && !h.active ? [`hooks: ${h.problems.join('; ')}`] : []),
      ...(pending.length ? [pendingNotice(pending).replace(/^hermesd: /, 'hooks: ')] : []),
      ...(client ? [`hook client: not built here (${client}); the hooks ask the daemon with curl, a few ms slower each (hermesd doctor)`] : []),
    ];
  });
  // Aborted hooks put the user's work back on their way out; the daemon waits for that.
  return { value: service, close: () => Promise.allSettled([...service.inflight]) };
}
