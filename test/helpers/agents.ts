/**
 * Driving other agents' hooks as the agents do: the command `hermesd init --agents` wrote
 * into the agent's config, run through a shell with the hook payload on stdin and the
 * environment the agent documents (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR…).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonc } from '../../src/agents/json-edit.js';
import type { TestEnv } from './env.js';

export type HookRun = { code: number; stdout: string; stderr: string; ms: number };

type Group = { matcher?: string; hooks: Array<{ command: string }> };

/** The hook command per event, read from the agent's config file as written (the event's first hermesd entry). */
export function hookCommands(root: string, agent: 'claude' | 'codex' | 'cursor' | 'gemini'): Record<string, string> {
  const file = { claude: '.claude/settings.json', codex: '.codex/hooks.json', cursor: '.cursor/hooks.json', gemini: '.gemini/settings.json' }[agent];
  const text = readFileSync(join(root, file), 'utf8');
  // Gemini's settings may hold comments: read as JSONC.
  const json = parseJsonc(text).value as { hooks: Record<string, unknown[]> };
  const out: Record<string, string> = {};
  for (const [event, list] of Object.entries(json.hooks)) {
    for (const entry of list) {
      const commands = agent === 'cursor' ? [(entry as { command: string }).command] : (entry as Group).hooks.map((h) => h.command);
      const ours = commands.find((c) => c.includes('.hermes/agent-hook'));
      if (ours && !out[event]) out[event] = ours;
    }
  }
  return out;
}

/** Runs a hook command as the agent would: `sh -c <command>` in `cwd`, the payload on stdin. */
export function runHook(t: TestEnv, command: string, opts: { cwd: string; payload: unknown; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('sh', ['-c', command], { cwd: opts.cwd, env: { ...t.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - started });
    });
    // A hook that exits without reading its payload (nothing to judge) closes the pipe first: not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(typeof opts.payload === 'string' ? opts.payload : JSON.stringify(opts.payload));
  });
}

/** What Gemini CLI does to a hook command before it runs it: $GEMINI_PROJECT_DIR replaced by the shell-quoted cwd. */
export function geminiExpand(command: string, cwd: string): string {
  const quoted = `'${cwd.replace(/'/g, `'\\''`)}'`;
  return command.replace(/\$GEMINI_PROJECT_DIR/g, quoted).replace(/\$GEMINI_CWD/g, quoted).replace(/\$CLAUDE_PROJECT_DIR/g, quoted);
}

/** The daemon's record of the transcripts it read for this repository. */
export async function transcripts(t: TestEnv, repo: string): Promise<Array<{ path: string; agent: string; sessionId: string; offset: number; lines: number; stored: number; skipped: number }>> {
  const status = (await t.cli(['status', '--json'], { cwd: repo })).json();
  const { DaemonClient } = await import('../../src/client/client.js');
  return (await new DaemonClient(status.socket).call<{ transcripts: Array<{ path: string; agent: string; sessionId: string; offset: number; lines: number; stored: number; skipped: number }> }>('GET', '/v1/agents/transcripts')).transcripts;
}
