/**
 * Driving other agents' hooks as the agents do: the command `hermesd init --agents` wrote
 * into the agent's config, run through a shell with the hook payload on stdin and the
 * environment the agent documents (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR…).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonc } from '../../src/other-agents/json-edit.js';
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

/** Whether a hook entry's matcher takes `tool`, as the agent matches: Claude Code takes a plain list of names exactly, anything else as an unanchored regex; Codex and Gemini CLI as a regex. */
function matches(agent: 'claude' | 'codex' | 'gemini', matcher: string | undefined, tool: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (agent === 'claude' && /^[A-Za-z0-9_|, -]*$/.test(matcher)) return matcher.split(/[|,]/).some((name) => name.trim() === tool);
  return new RegExp(matcher).test(tool);
}

/**
 * The command the agent runs for a call of `tool` at `event`: hermesd's entry whose matcher
 * takes the tool (it fails the test when two do). A tool no entry takes gets `otherwise`, the
 * command a wider matcher would run, when given.
 */
export function toolHookCommand(root: string, agent: 'claude' | 'codex' | 'gemini', event: string, tool: string, otherwise?: string): string {
  const file = { claude: '.claude/settings.json', codex: '.codex/hooks.json', gemini: '.gemini/settings.json' }[agent];
  const json = parseJsonc(readFileSync(join(root, file), 'utf8')).value as { hooks: Record<string, Group[]> };
  const found = (json.hooks[event] ?? [])
    .filter((g) => matches(agent, g.matcher, tool))
    .flatMap((g) => g.hooks.map((h) => h.command).filter((c) => c.includes('.hermes/agent-hook')));
  if (found.length === 0 && otherwise !== undefined) return otherwise;
  if (found.length !== 1) throw new Error(`${file}: ${found.length} hermesd ${event} entries take ${tool}`);
  return found[0]!;
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
    // A hook that answers without reading its stdin (the stub in a clone without hermesd) closes the pipe: not an error of the test.
    child.stdin.on('error', () => undefined);
    child.stdin.end(typeof opts.payload === 'string' ? opts.payload : JSON.stringify(opts.payload));
  });
}

/** What Gemini CLI does to a hook command before it runs it: $GEMINI_PROJECT_DIR replaced by the shell-quoted cwd. */
export function geminiExpand(command: string, cwd: string): string {
  const quoted = `'${cwd.replace(/'/g, `'\\''`)}'`;
  return command
    .replace(/\$GEMINI_PROJECT_DIR/g, quoted)
    .replace(/\$GEMINI_CWD/g, quoted)
    .replace(/\$CLAUDE_PROJECT_DIR/g, quoted);
}

/** The daemon's record of the transcripts it read for this repository. */
export async function transcripts(
  t: TestEnv,
  repo: string,
): Promise<Array<{ path: string; agent: string; sessionId: string; offset: number; lines: number; stored: number; skipped: number }>> {
  const status = (await t.cli(['status', '--json'], { cwd: repo })).json();
  const { DaemonClient } = await import('../../src/client/daemon-client.js');
  return (
    await new DaemonClient(status.socket).call<{
      transcripts: Array<{ path: string; agent: string; sessionId: string; offset: number; lines: number; stored: number; skipped: number }>;
    }>('GET', '/v1/agents/transcripts')
  ).transcripts;
}

/** Polls an async reading until `ok` holds (a daemon ingests and answers in the background), failing with the last reading. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The reason of a refusal in the agent's documented structured form — exit 0 and JSON on stdout
 * (Claude Code and Codex: `hookSpecificOutput` with exactly hookEventName, permissionDecision
 * "deny" and permissionDecisionReason; Gemini CLI: `{decision: "deny", reason}`; Cursor:
 * `{permission: "deny", user_message, agent_message?}`), nothing on stderr; undefined for any other answer.
 */
export function denied(agent: 'claude' | 'codex' | 'cursor' | 'gemini', r: HookRun): string | undefined {
  if (r.code !== 0 || r.stderr !== '' || !r.stdout.trim().startsWith('{')) return undefined;
  const out = JSON.parse(r.stdout) as Record<string, any>;
  switch (agent) {
    case 'claude':
    case 'codex': {
      const h = out.hookSpecificOutput;
      if (
        Object.keys(out).join() !== 'hookSpecificOutput' ||
        !h ||
        Object.keys(h).sort().join() !== 'hookEventName,permissionDecision,permissionDecisionReason'
      )
        return undefined;
      return h.permissionDecision === 'deny' && h.hookEventName === 'PreToolUse' ? String(h.permissionDecisionReason) : undefined;
    }
    case 'gemini':
      return out.decision === 'deny' && Object.keys(out).sort().join() === 'decision,reason' ? String(out.reason) : undefined;
    case 'cursor':
      return out.permission === 'deny' ? String(out.agent_message ?? out.user_message) : undefined;
  }
}

/**
 * What Codex writes into `$CODEX_HOME/config.toml` when the user trusts the project and then
 * hermesd's hooks in /hooks (all of them, or all but the first `leaveOut`).
 */
export async function trustCodex(t: TestEnv, repo: string, leaveOut = 0): Promise<void> {
  const { codexHookHash } = await import('../../src/other-agents/codex-trust.js');
  const { mkdirSync, realpathSync, writeFileSync } = await import('node:fs');
  const file = realpathSync(join(repo, '.codex/hooks.json'));
  const hooks = JSON.parse(readFileSync(file, 'utf8')).hooks as Record<
    string,
    Array<{ matcher?: string; hooks: Array<{ command: string; timeout?: number }> }>
  >;
  const states: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    groups.forEach((g, gi) =>
      g.hooks.forEach((h, hi) => {
        if (!h.command.includes('.hermes/agent-hook')) return;
        const key = `${file}:${event.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase()}:${gi}:${hi}`;
        states.push(`[hooks.state."${key}"]\nenabled = true\ntrusted_hash = "${codexHookHash(event, g.matcher, h)}"\n`);
      }),
    );
  }
  mkdirSync(t.env.CODEX_HOME!, { recursive: true });
  writeFileSync(join(t.env.CODEX_HOME!, 'config.toml'), `[projects."${repo}"]\ntrust_level = "trusted"\n\n${states.slice(leaveOut).join('\n')}`);
}

/** The command a pre-tool answer gives back to run instead (Claude Code and Codex `updatedInput`, Gemini CLI `hookSpecificOutput.tool_input`); undefined for any other answer. */
export function rewritten(agent: 'claude' | 'codex' | 'gemini', r: HookRun): string | undefined {
  if (r.code !== 0 || r.stderr !== '' || !r.stdout.trim().startsWith('{')) return undefined;
  const h = (JSON.parse(r.stdout) as { hookSpecificOutput?: Record<string, any> }).hookSpecificOutput;
  if (!h) return undefined;
  if (agent === 'gemini') return typeof h.tool_input?.command === 'string' ? h.tool_input.command : undefined;
  if (agent === 'codex' && h.permissionDecision !== 'allow') return undefined;
  if (agent === 'claude' && h.permissionDecision !== undefined) return undefined;
  return typeof h.updatedInput?.command === 'string' ? h.updatedInput.command : undefined;
}

/**
 * What a rewritten command runs the agent's command in: the text of the confine script it names
 * (`/bin/sh '<git-dir>/hermesd/confine/<hash>.sh' '<command>'`), its file, and the command it
 * passes; undefined for a command that is not one.
 */
export function confinement(command: string | undefined): { file: string; script: string; command: string } | undefined {
  if (command === undefined) return undefined;
  // Codex's form: the command as written where Codex runs hermesd's profile, else the confine script (guard/agent-shell.ts codexConfinedCommand).
  // (Where the record of refused writes is built, the command's processes get its environment first: guard/refused-preload.ts.)
  const codex =
    /^if \[ "\$\{CODEX_PERMISSION_PROFILE-\}" = hermesd-[0-9a-f]{12} \]; then trap .*? EXIT; (?:LD_PRELOAD=\S+ HERMESD_REFUSED=\S+ ASAN_OPTIONS=\S+ )?eval '((?:[^']|'\\'')*)'; else (.*); fi$/.exec(
      command,
    );
  if (codex) {
    const inner = confinement(codex[2]);
    return inner && inner.command === codex[1]!.replace(/'\\''/g, "'") ? inner : undefined;
  }
  const m = /^\/bin\/sh '([^']+\/hermesd\/confine\/[0-9a-f]{16}\.sh)' '((?:[^']|'\\'')*)'(?: [0-9a-f]{16})?$/.exec(command);
  return m ? { file: m[1]!, script: readFileSync(m[1]!, 'utf8'), command: m[2]!.replace(/'\\''/g, "'") } : undefined;
}

export type ShellCall = { pre: HookRun; ran?: string; status?: number | null; stdout?: string; stderr?: string; post?: HookRun };

/**
 * One shell call of another agent, as the agent makes it: its pre-tool hook, the command it gives
 * back (or the command itself) run by bash in the work tree with the agent's environment
 * (`env`), then its post-tool hook with what the command printed.
 */
export async function agentShellCall(
  t: TestEnv,
  repo: string,
  agent: 'claude' | 'codex' | 'gemini',
  command: string,
  id: string,
  env: NodeJS.ProcessEnv = {},
  /** Runs after the pre-tool answer, before the agent's shell runs the command given back. */
  beforeRun?: () => Promise<void>,
): Promise<ShellCall> {
  const hookEnv = { CLAUDE_PROJECT_DIR: repo, GEMINI_PROJECT_DIR: repo };
  const base = { session_id: `${agent}-s`, transcript_path: null, cwd: repo };
  const tool = agent === 'gemini' ? 'run_shell_command' : 'Bash';
  const preEvent = agent === 'gemini' ? 'BeforeTool' : 'PreToolUse';
  const postEvent = agent === 'gemini' ? 'AfterTool' : 'PostToolUse';
  const expand = (c: string) => (agent === 'gemini' ? geminiExpand(c, repo) : c);
  const ids = agent === 'gemini' ? {} : { tool_use_id: id };
  const pre = await runHook(t, expand(toolHookCommand(repo, agent, preEvent, tool)), {
    cwd: repo,
    env: hookEnv,
    payload: { ...base, hook_event_name: preEvent, tool_name: tool, tool_input: { command }, ...ids },
  });
  if (denied(agent, pre)) return { pre };
  const ran = rewritten(agent, pre) ?? command;
  await beforeRun?.();
  const r = spawnSync('bash', ['-c', ran], { cwd: repo, encoding: 'utf8', env: { ...process.env, ...t.env, ...env }, timeout: 60_000 });
  const post = await runHook(t, expand(hookCommands(repo, agent)[postEvent]!), {
    cwd: repo,
    env: hookEnv,
    payload: {
      ...base,
      hook_event_name: postEvent,
      tool_name: tool,
      tool_input: { command: ran },
      // Gemini CLI 0.61 hands the model the command's output, stdout and stderr together, as `Output: …` (its shell tool's llmContent).
      tool_response:
        agent === 'gemini' ? { llmContent: `Output: ${r.stdout + r.stderr || '(empty)'}` } : { stdout: r.stdout, stderr: r.stderr, interrupted: false },
      ...ids,
    },
  });
  return { pre, ran, status: r.status, stdout: r.stdout, stderr: r.stderr, post };
}

/** What a post-tool answer hands the model as context (hermesd's report of what it put back), or ''. */
export function postContext(call: ShellCall): string {
  if (!call.post?.stdout.trim()) return '';
  const out = JSON.parse(call.post.stdout) as { hookSpecificOutput?: { additionalContext?: string } };
  return out.hookSpecificOutput?.additionalContext ?? '';
}

/**
 * An environment where every agent is on the machine as doctor tells (src/other-agents/health.ts):
 * a HOME of the test's own with the folders Claude Code, Cursor and Gemini CLI keep their state in,
 * and the test's CODEX_HOME made. Doctor's agent lines are then checks, whatever this machine has.
 */
export function agentsOnThisMachine(t: TestEnv): NodeJS.ProcessEnv {
  const home = join(t.home, '..', 'agents-home');
  for (const dir of ['.claude', '.cursor', '.gemini']) mkdirSync(join(home, dir), { recursive: true });
  mkdirSync(t.env.CODEX_HOME!, { recursive: true });
  return { HOME: home, CLAUDE_CONFIG_DIR: undefined };
}
