/**
 * Another agent's hook event, a payload in and the agent's documented answer out: the adapter
 * reads the payload (claude.ts, codex.ts, cursor.ts, gemini.ts), the guard decides about a tool
 * call (guard/agent-calls.ts), the adapter writes the answer. Every other event of a session
 * (context at session start, recall at a prompt, transcripts) is sessions.ts's, loaded on first
 * use: a cold daemon's first verdict on a tool call waits for the config and the guard only.
 */
import { realpathSync } from 'node:fs';
import { ZodError } from 'zod';
import { UsageError } from '../errors/index.js';
import type { AgentCallGuard } from '../guard/agent-calls.js';
import type { GuardConfig } from '../guard/guard-config.js';
import type { Logger } from '../storage/log.js';
import { fileStamp } from '../storage/file-stamp.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { codexConfigFile, readCodexProfile } from './codex-profile.js';
import { cursor } from './cursor.js';
import { denyAnswer, outputOf, silentAnswer, type Adapter, type AgentEvent, type Answer } from './event.js';
import { AGENT_NAMES, type AgentName } from '../protocol/agent-hooks.js';
import { gemini } from './gemini.js';
import type { AgentSessions, HandledHook } from './sessions.js';
import type { CodexProfile } from '../guard/agent-shell.js';
import type { JudgingConfig } from '../guard/approval.js';

export const ADAPTERS: Record<AgentName, Adapter> = { claude, codex, cursor, gemini };

/** How long what a shell call's after-check found waits for a post-tool event that can carry it. */
const UNTOLD_KEEP_MS = 60_000;

export class OtherAgentHooks {
  private profileCache: { stamp: string; profile: CodexProfile | undefined } | undefined;
  /** What after-checks found that their event could not tell the model, by call: the call's next post-tool event tells it. */
  private readonly untold = new Map<string, { text: string; at: number }>();

  /** `sessions` is loaded on first use: a daemon whose agents only ask about tool calls loads none of it. */
  constructor(
    private readonly ctx: { root: string; log: Logger },
    private readonly deps: { guard: AgentCallGuard; sessions: () => Promise<AgentSessions> },
  ) {}

  /** The adapter for a payload: Cursor's payloads are Cursor's, whichever agent's hook config ran them. */
  adapterFor(agent: string, payload: Record<string, unknown>): Adapter {
    if (cursor.recognises!(payload)) return cursor;
    if (!(AGENT_NAMES as readonly string[]).includes(agent))
      throw new UsageError(`Unknown agent "${agent}"; hermesd's agent hooks are for ${AGENT_NAMES.join(', ')}.`);
    return ADAPTERS[agent as AgentName];
  }

  /** One hook event of `agent`, judged with `judging` (the config in force, the last valid one while the files do not load). */
  async handle(agent: string, payload: unknown, judging: JudgingConfig<GuardConfig>): Promise<HandledHook> {
    if (!payload || typeof payload !== 'object' || Array.isArray(payload))
      throw new UsageError("The hook payload must be a JSON object (what the agent writes on the hook's stdin).");
    const adapter = this.adapterFor(agent, payload as Record<string, unknown>);
    let ev: AgentEvent;
    try {
      ev = adapter.parse(payload as Record<string, unknown>);
    } catch (err) {
      if (err instanceof ZodError)
        throw new UsageError(`Not a ${adapter.agent} hook payload: ${err.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ')}`);
      throw err;
    }
    ev.cwd = real(ev.cwd);
    // After a call, what it printed: the same fields in every agent's payload (event.ts).
    if (ev.kind === 'post-tool') ev.output = outputOf(payload as Record<string, unknown>);
    if (ev.kind === 'pre-tool') return this.preTool(adapter, ev, judging);
    const sessions = await this.deps.sessions();
    if (ev.kind !== 'post-tool') return sessions.handle(adapter, ev);
    sessions.ingestSoon(ev);
    const told =
      ev.tool?.action.kind === 'shell'
        ? await this.deps.guard.afterShell(
            callKey(ev, ev.tool.action.command),
            judging.config,
            { agent: ev.agent, session: ev.sessionId },
            {
              output: ev.output,
              cwd: ev.tool.action.cwd,
              command: ev.tool.action.command,
              session: sessionOf(ev),
            },
          )
        : undefined;
    const answer = this.deliver(adapter, ev, told);
    return answer ? { answer, event: ev, decision: 'context' } : { answer: silentAnswer(ev), event: ev, decision: 'none' };
  }

  /**
   * What was found after a shell call, in the answer of this post-tool event; where this event
   * carries no answer the model reads (Cursor's afterShellExecution: its postToolUse, which
   * comes for the same call, does), it is kept for the call's next post-tool event.
   */
  private deliver(adapter: Adapter, ev: AgentEvent, told: string | undefined): Answer | undefined {
    const key = ev.tool?.action.kind === 'shell' ? callKey(ev, ev.tool.action.command) : undefined;
    if (!key) return undefined;
    const now = Date.now();
    for (const [k, v] of this.untold) if (now - v.at > UNTOLD_KEEP_MS) this.untold.delete(k);
    // What the call's earlier event kept (all of what its after-check found) before what this one found again in its output.
    const text = this.untold.get(key)?.text ?? told;
    if (!text) return undefined;
    const answer = adapter.context(ev, text);
    if (answer) this.untold.delete(key);
    else this.untold.set(key, { text, at: now });
    return answer;
  }

  private async preTool(adapter: Adapter, ev: AgentEvent, { config, broken }: JudgingConfig<GuardConfig>): Promise<HandledHook> {
    if (!ev.tool || ev.tool.action.kind === 'other') return { answer: silentAnswer(ev), event: ev, decision: 'none' };
    const denial = this.deps.guard.judge(ev.tool.action, ev.cwd, config);
    // A config that does not load is judged with the last valid one, and the agent is told.
    const note = broken
      ? `hermesd: .hermes/config.yaml does not load (${broken.split('\n')[0]}); this call was judged with the last valid rules. Fix the file.`
      : '';
    if (denial) {
      if (note) denial.message = `${denial.message} (${note})`;
      this.ctx.log.info('agent tool call refused', { agent: ev.agent, tool: ev.tool.name, rule: denial.rule, session: ev.sessionId });
      return { answer: denyAnswer(ev, denial), event: ev, decision: 'deny', rule: denial.rule };
    }
    const told = (answer: Answer): Answer => (note ? { ...answer, stderr: `${answer.stderr}${note}\n` } : answer);
    if (ev.tool.action.kind === 'shell') {
      const { command } = ev.tool.action;
      const start = await this.deps.guard.beforeShell(
        // Gemini CLI has no call id: its after-tool event carries the command given back.
        { call: callKey(ev, command), session: sessionOf(ev), ...(ev.toolUseId ? {} : { alias: (confined: string) => callKey(ev, confined) }) },
        command,
        config,
        { rewrite: adapter.rewrite !== undefined, ...(ev.agent === 'codex' ? { codex: { profile: this.codexProfile(), cwd: ev.cwd } } : {}) },
      );
      if (start.confined && adapter.rewrite) return { answer: told(adapter.rewrite(ev, start.confined)), event: ev, decision: 'rewrite' };
    }
    return { answer: told(silentAnswer(ev)), event: ev, decision: 'none' };
  }

  /** hermesd's profile as this work tree's `.codex/config.toml` holds it now (read again when the file changes). */
  private codexProfile(): CodexProfile | undefined {
    const stamp = fileStamp(codexConfigFile(this.ctx.root));
    if (this.profileCache?.stamp !== stamp) this.profileCache = { stamp, profile: readCodexProfile(this.ctx.root) };
    return this.profileCache.profile;
  }
}

/** The agent's session, as what its confined commands were refused is recorded under (told at its next shell call). */
function sessionOf(ev: AgentEvent): string {
  return `${ev.agent}\0${ev.sessionId ?? ''}`;
}

/** The key a shell call is kept under until its post-tool event: the call's id, else its command. */
function callKey(ev: AgentEvent, command: string): string {
  return `${sessionOf(ev)}\0${ev.toolUseId ?? command}`;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
