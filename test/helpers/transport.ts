/**
 * Asking the daemon as the hooks do, for the tests of what every fault on the way means
 * (src/hook-client/): another agent's tool call through the committed stub, a commit through
 * git, and the daemon's pid and files.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { denied, runHook, toolHookCommand, type HookRun } from './agents.js';
import { commitIn, type TestEnv } from './env.js';

/** A config that protects gen/ and forbids AWS keys, with the bounds a test wants. */
export function guardedConfig(extra = ''): string {
  return [
    'rules:',
    '  - id: generated',
    '    message: Do not edit generated files; run the generator.',
    '    protect: ["gen/**"]',
    '  - id: no-aws-keys',
    '    message: Never commit credentials.',
    '    forbid: "AKIA[0-9A-Z]{16}"',
    extra,
  ].join('\n');
}

/** A key the default rule refuses (built here so no scanner flags this file). */
export const KEY = 'AKIA' + 'ABCDEFGHIJKLMNOP';

/** Claude Code's PreToolUse for a Write of `file` (relative), run through the command init wrote. */
export function claudeWrite(t: TestEnv, repo: string, file: string, opts: { env?: NodeJS.ProcessEnv; content?: string } = {}): Promise<HookRun> {
  const payload = {
    session_id: 's1',
    transcript_path: null,
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: 'Write',
    tool_input: { file_path: join(repo, file), content: opts.content ?? 'x' },
  };
  return runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, ...opts.env }, payload });
}

/** Claude Code's PreToolUse for a Bash command. */
export function claudeBash(t: TestEnv, repo: string, command: string, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<HookRun> {
  const payload = { session_id: 's1', transcript_path: null, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } };
  return runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Bash'), { cwd: repo, env: { CLAUDE_PROJECT_DIR: repo, ...opts.env }, payload });
}

/** Stages a file holding a key and commits it as a user does: `git add -A && git commit`. */
export function commitKey(
  t: TestEnv,
  repo: string,
  name = 'creds.txt',
  env: NodeJS.ProcessEnv = {},
): { code: number; out: string; ms: number; head: string; moved: boolean } {
  const before = head(repo);
  spawnSync('sh', ['-c', `printf 'key = "%s"\\n' "$1" > "$2" && git add -A`, 'sh', KEY, name], { cwd: repo, env: t.env });
  const r = commitIn(t, repo, ['-qm', `add ${name}`], env);
  const after = head(repo);
  return { ...r, head: after, moved: after !== before };
}

export function head(repo: string): string {
  return spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
}

/** The pid daemon.json records (the daemon of this work tree), or undefined. */
export function recordedPid(repo: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(repo, '.git', 'hermesd', 'daemon.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

/** The daemon's pid, starting it through the CLI when none runs. */
export async function daemonPid(t: TestEnv, repo: string): Promise<number> {
  await t.cli(['start'], { cwd: repo });
  const r = await t.cli(['status', '--json'], { cwd: repo });
  if (r.code !== 0) throw new Error(`status failed: ${r.stderr}`);
  return r.json().pid as number;
}

/** A refusal in Claude Code's structured form (exit 0, the deny on stdout) whose reason says `text`; the reason. */
export function expectRefused(r: HookRun, text: string): string {
  const reason = denied('claude', r);
  expect(reason, `not a refusal: ${JSON.stringify(r)}`).toBeDefined();
  expect(reason).toContain(text);
  return reason!;
}
