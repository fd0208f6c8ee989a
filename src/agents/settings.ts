/**
 * The settings the agents' sh runner sources before it talks to the daemon (it cannot read
 * YAML): `<git-dir>/hermesd/agent-settings`. Written by `hermesd init --agents` and refreshed
 * by the daemon when its config changes.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../storage/atomic.js';

export function agentSettingsPath(gitDir: string): string {
  return join(gitDir, 'hermesd', 'agent-settings');
}

export function agentSettingsText(s: { timeoutMs: number; onUnavailable: 'allow' | 'block' }): string {
  return `HERMESD_AGENT_TIMEOUT_MS=${Math.max(1, Math.round(s.timeoutMs))}\nHERMESD_AGENT_ON_UNAVAILABLE=${s.onUnavailable}\n`;
}

export function writeAgentSettings(gitDir: string, s: { timeoutMs: number; onUnavailable: 'allow' | 'block' }): void {
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

