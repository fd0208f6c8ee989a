/**
 * Other agents' hooks in a daemon: the guard of their tool calls (src/guard/agent-calls.ts) and
 * the handler of their events (src/other-agents/hook-handler.ts), built from this daemon's
 * context; closing takes the confine scripts away.
 */
import { AgentCallGuard } from '../../guard/agent-calls.js';
import { OtherAgentHooks } from '../../other-agents/hook-handler.js';
import type { AgentSessions } from '../../other-agents/sessions.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';

export function createAgentHookService(
  ctx: DaemonContext,
  deps: { sessions: () => Promise<AgentSessions>; agentSocket: () => Promise<string | undefined> },
): Built<OtherAgentHooks> {
  const { paths } = ctx;
  const guard = new AgentCallGuard({
    root: ctx.root,
    gitDir: paths.gitDir,
    commonDir: paths.commonDir,
    home: ctx.home,
    env: ctx.env,
    socketDir: paths.socketDir,
    socket: paths.socket,
    log: ctx.log,
    agentSocket: deps.agentSocket,
  });
  // Where the record of refused writes cannot load, a refusal without output reaches no model: said in status (and so by doctor).
  ctx.warningSources.push(() => {
    const why = guard.recordProblem();
    return why
      ? [`agents: a write refused inside the confinement is told only where the command's output shows it (the record of refused writes does not load: ${why})`]
      : [];
  });
  return { value: new OtherAgentHooks({ root: ctx.root, log: ctx.log }, { guard, sessions: deps.sessions }), close: () => guard.close() };
}
