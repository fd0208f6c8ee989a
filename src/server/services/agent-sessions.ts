/**
 * Other agents' sessions in a daemon (src/other-agents/sessions.ts): status reports the
 * transcripts read and a committed stub that is gone, and closing waits for the ingests in flight.
 */
import { existsSync } from 'node:fs';
import { AgentSessions } from '../../other-agents/sessions.js';
import { agentsRecordPath, goneAgentStubs, MCP_STUB } from '../../paths/index.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';

/** Other agents' sessions in a daemon: status reports the transcripts read, and closing waits for the ingests in flight. */
export function createAgentSessions(ctx: DaemonContext, deps: ConstructorParameters<typeof AgentSessions>[1]): Built<AgentSessions> {
  const service = new AgentSessions(ctx, deps);
  // A committed stub gone (a `git clean`, a reset): said in status, not only by doctor.
  ctx.warningSources.push(() => {
    if (!existsSync(agentsRecordPath(ctx.paths.gitDir))) return [];
    return goneAgentStubs(ctx.root).map(
      (stub) =>
        `agents: ${stub} is gone, so a clone without it runs ${stub === MCP_STUB ? 'no hermesd MCP server' : 'no hermesd hook'} (hermesd doctor says what still runs here); put it back: hermesd init --agents, and commit it`,
    );
  });
  ctx.report('agents', () => {
    try {
      return service.stats();
    } catch {
      return undefined;
    }
  });
  return { value: service, close: () => service.settled() };
}
