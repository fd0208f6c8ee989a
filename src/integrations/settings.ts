/**
 * The settings the agents' sh runner sources before it talks to the daemon (it cannot read
 * YAML): `<git-dir>/hermesd/agent-settings`. Written by `hermesd init --agents` and refreshed
 * by the daemon when its config changes.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { agentSettingsPath } from '../paths/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';

export type AgentHookSettings = { timeoutMs: number; onUnavailable: 'allow' | 'block' };

function agentSettingsText(s: AgentHookSettings): string {
  return `HERMESD_AGENT_TIMEOUT_MS=${Math.max(1, Math.round(s.timeoutMs))}\nHERMESD_AGENT_ON_UNAVAILABLE=${s.onUnavailable}\n`;
}

export function writeAgentSettings(gitDir: string, s: AgentHookSettings): void {
  const file = agentSettingsPath(gitDir);
  const text = agentSettingsText(s);
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // not written yet
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, text, 0o644);
}
