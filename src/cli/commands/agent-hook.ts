/**
 * `hermesd agent-hook <agent> [event]`: what the agents' hook runner (hooks/hermesd-agent-hook.sh)
 * runs when its curl fast path cannot: no curl, no daemon recorded or listening. It reads the
 * hook payload from stdin, starts a daemon that is down, asks it (POST /v1/agents/:agent/hook)
 * and prints the agent's answer. When no daemon answers in time it applies
 * agents.onUnavailable to a tool call (refuse: exit 2 with the reason on stderr) and lets every
 * other event go on.
 *
 * It exits 0 or 2 and nothing else on purpose: Gemini CLI refuses a tool call on any other
 * non-zero exit that prints text, Claude Code and Codex on 2. An error of its own exits 0
 * with the reason on stderr (or 2 when agents.onUnavailable is "block" for a tool call).
 */
import type { Command } from 'commander';
import { DaemonClient } from '../../client/client.js';
import { ensureDaemon } from '../../client/lifecycle.js';
import { hermesHome, resolvePaths, type RepoPaths } from '../../paths/index.js';
import type { AgentHookAnswer } from '../../protocol/agents.js';
import { action, readStdin, withDeadline } from '../runtime.js';

/** Events that come before a tool call: the ones agents.onUnavailable applies to. */
const PRE_TOOL_EVENTS = new Set(['PreToolUse', 'preToolUse', 'beforeShellExecution', 'beforeReadFile', 'beforeMCPExecution', 'BeforeTool']);
/** How long a daemon that is down may take to start for an agent's hook, at least (a cold start takes about a second). */
const AGENT_START_MIN_MS = 5_000;

type Settings = { timeoutMs: number; onUnavailable: 'allow' | 'block'; configError?: string };

async function agentSettings(paths: RepoPaths | undefined): Promise<Settings> {
  const { DEFAULTS } = await import('../../config/schema.js');
  if (!paths) return { ...DEFAULTS.agents };
  try {
    const { loadConfig } = await import('../../config/load.js');
    const { applyApproval } = await import('../../guard/approval.js');
    // A loosening of agents.onUnavailable waits for `hermesd config approve` here too.
    const c = applyApproval(hermesHome(), paths.root, loadConfig({ root: paths.root, home: hermesHome() }), { record: false }).config;
    return { timeoutMs: c.agents.timeoutMs, onUnavailable: c.agents.onUnavailable };
  } catch (err) {
    return { ...DEFAULTS.agents, configError: err instanceof Error ? err.message : String(err) };
  }
}

type Out = { code: 0 | 2; stdout: string; stderr: string };

async function runAgentHook(agent: string, event: string, opts: { repo?: string; unreachable?: string }): Promise<Out> {
  const pre = PRE_TOOL_EVENTS.has(event);
  let paths: RepoPaths | undefined;
  try {
    paths = resolvePaths(opts.repo ?? process.cwd());
  } catch {
    paths = undefined;
  }
  const settings = await agentSettings(paths);
  const unavailable = (why: string): Out => {
    if (pre && settings.onUnavailable === 'block') {
      return { code: 2, stdout: '', stderr: `hermesd: ${why}; this tool call is refused because agents.onUnavailable is "block". Check the daemon with: hermesd status (restart: hermesd restart)\n` };
    }
    return { code: 0, stdout: agent === 'cursor' ? '{}\n' : '', stderr: pre ? `hermesd: ${why}; this tool call was not checked (agents.onUnavailable is "allow")\n` : '' };
  };
  if (process.env.HERMESD_SKIP === '1') return { code: 0, stdout: '', stderr: '' };
  if (!paths) return unavailable(`${opts.repo ?? process.cwd()} is not in a git work tree`);
  const raw = opts.unreachable ? '' : await readStdin();
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    payload = undefined;
  }
  let socket: string;
  try {
    const bound = Math.max(settings.timeoutMs, AGENT_START_MIN_MS);
    const { status } = await withDeadline(ensureDaemon(paths), bound, `the daemon did not start within ${bound} ms`);
    socket = String(status.socket);
  } catch (err) {
    return unavailable(err instanceof Error ? err.message.split('\n')[0]!.replace(/\.$/, '') : String(err));
  }
  if (opts.unreachable) {
    const curlExit = /^broke-off:(\d+)$/.exec(opts.unreachable)?.[1];
    return unavailable(
      curlExit
        ? `the daemon's answer broke off (curl exit ${curlExit}; see hermesd logs; a daemon is running for the next call)`
        : 'the daemon was not listening (it has been started for the next call)',
    );
  }
  if (payload === undefined) return unavailable('the hook payload on stdin is not JSON');
  try {
    const r = await new DaemonClient(socket).call<AgentHookAnswer>('POST', `/v1/agents/${encodeURIComponent(agent)}/hook`, payload, { timeoutMs: settings.timeoutMs });
    return { code: r.exitCode === 2 ? 2 : 0, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  } catch (err) {
    return unavailable(err instanceof Error ? err.message.replace(/\.$/, '') : String(err));
  }
}

export function register(program: Command): void {
  program
    .command('agent-hook')
    .description("what Claude Code's, Codex's, Cursor's and Gemini CLI's hooks run when the daemon is not listening (reads the hook payload on stdin)")
    .argument('<agent>', 'claude, codex, cursor or gemini')
    .argument('[event]', "the agent's hook event (from the hook command)")
    .option('--repo <path>', 'the work tree the hook belongs to (default: the current directory)')
    .option('--unreachable <why>', 'set by the sh runner when its payload went to a daemon that did not listen')
    .allowUnknownOption()
    .action(
      action(async (agent: string, event: string | undefined, opts: { repo?: string; unreachable?: string }) => {
        let out: Out;
        try {
          out = await runAgentHook(agent, event ?? '', opts);
        } catch (err) {
          out = { code: 0, stdout: agent === 'cursor' ? '{}\n' : '', stderr: `hermesd: the agent hook failed: ${err instanceof Error ? err.message : String(err)}\n` };
        }
        if (out.stdout) process.stdout.write(out.stdout);
        if (out.stderr) process.stderr.write(out.stderr);
        // The answer is final: a daemon start still polling must not hold the agent.
        process.exitCode = out.code;
        await new Promise<void>((res) => process.stdout.write('', () => res()));
        process.exit(out.code);
      }),
    );
}
