/**
 * The settings the sh runner sources before talking to the daemon (it cannot read YAML):
 * `<git-dir>/hermesd/hook-settings`. Written by init and refreshed by the daemon whenever it
 * handles a hook or its config changes.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hookSettingsPath } from '../paths/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';

export type HookSettings = {
  timeoutMs: number;
  /** The pre-commit may run for long (checks or generators): the sh client bounds silence, not the whole run. */
  longPreCommit?: boolean;
};

export function hookSettingsText(settings: HookSettings): string {
  return `HERMESD_TIMEOUT_MS=${Math.max(1, Math.round(settings.timeoutMs))}\nHERMESD_LONG_PRECOMMIT=${settings.longPreCommit === false ? 0 : 1}\n`;
}

export function writeHookSettings(gitDir: string, settings: HookSettings): void {
  const file = hookSettingsPath(gitDir);
  const text = hookSettingsText(settings);
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // not written yet
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, text, 0o644);
}
