/**
 * The agents' table (protocol/agent-hooks.ts) read for one hook call: is this an agent hermesd
 * answers, what is this event for hermesd, and the refusal or the silence the agent reads —
 * the bytes the C client and the curl runner print from the same table.
 */
import { AGENT_EVENTS, AGENT_NAMES, DENY_FORMS, SILENT_FORMS, type AgentName, type EventKind } from '../protocol/agent-hooks.js';

export function isAgentName(s: string): s is AgentName {
  return (AGENT_NAMES as readonly string[]).includes(s);
}

/** What `event` of `agent` is for hermesd ('other' for an event it does not know). */
export function eventKind(agent: AgentName, event: string): EventKind {
  const events = AGENT_EVENTS[agent];
  return Object.hasOwn(events, event) ? events[event]! : 'other';
}

/** The refusal `agent` reads for `event`, with `reason`: the bytes the daemon, the C client and the curl runner print. */
export function denyText(agent: AgentName, event: string, reason: string): string {
  const { form } = DENY_FORMS.find((r) => r.agent === agent && (r.event === undefined || r.event === event))!;
  return form.replace(/\$(REASON|EVENT)/g, (_m, slot: string) => JSON.stringify(slot === 'REASON' ? reason : event)) + '\n';
}

/** What `agent` is told when hermesd has nothing to say. */
export function silentText(agent: AgentName): string {
  return SILENT_FORMS[agent];
}
