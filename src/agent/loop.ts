/**
 * The agent loop: one task = one session. It knows nothing of HTTP or the CLI: callbacks in
 * (model, tools, session log, prompt builder, recall), events out. The system prompt is
 * built once when the session starts and every model call of the session sends those same
 * bytes (seed §2.1: a memory write changes disk, not the prompt in use). Every message, tool
 * call and tool result is written to the session log as it happens, so a crashed task still
 * tells its story. Cancellation is the AbortSignal; the turn budget bounds a runaway model.
 */
import { createHash } from 'node:crypto';
import { HermesError } from '../errors/index.js';
import { Cancelled, type ChatMessage, type ModelClient, type TokenUsage, type ToolCall } from '../model/client.js';
import { composeUserApiContent, recallBlock, safeHits, turnContextBlock, type RecallHit } from '../sessions/recall.js';
import { runToolCall, shortArgs, toolSpecs, type Tool, type ToolContext } from './tools/index.js';

export type TaskStatus = 'completed' | 'failed' | 'cancelled' | 'max_turns';

export type AgentEvent =
  | { type: 'session'; sessionId: string; parentSessionId?: string; promptSha256: string }
  | { type: 'text'; delta: string }
  | { type: 'assistant'; text: string }
  | { type: 'tool_call'; id: string; name: string; args: Record<string, unknown> | string }
  | { type: 'tool_result'; id: string; name: string; ok: boolean; summary: string; refusedBy?: { rule: string; path?: string } };

export type TaskResult = {
  sessionId: string;
  status: TaskStatus;
  answer: string;
  turns: number;
  error?: { code: string; message: string };
  /** Tool calls a repository rule refused during the task (the model was told; the task may still have completed). */
  refused?: Array<{ tool: string; rule: string; path?: string }>;
};

/** A message as the session log gives it back for a replay. */
export type LoggedMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  apiContent?: string;
  toolCalls?: Array<{ id?: string; function: { name: string; arguments: string } }>;
  toolName?: string;
  toolCallId?: string;
};

/** Where a session is recorded (SessionDB in the daemon). Every call is a committed write or a read. */
export interface SessionLog {
  start(input: { source: string; model: string; systemPrompt: string; parentSessionId?: string; title: string }): string;
  append(sessionId: string, message: LoggedMessage): number;
  end(sessionId: string, reason: string): void;
  /** Adds one model call's token usage to the session's totals. */
  usage(sessionId: string, usage: TokenUsage): void;
  /** The stored system prompt of a session, for a continuation that replays it. */
  promptOf(sessionId: string): string | undefined;
  /** Messages of a session and its ancestors, oldest first, for a continuation. */
  history(sessionId: string): { sessionIds: string[]; messages: LoggedMessage[] };
}

export type AgentDeps = {
  model: ModelClient;
  tools: readonly Tool[];
  log: SessionLog;
  /** Builds the session's system prompt (three tiers joined); called once per session. */
  buildPrompt(input: { callerSystem?: string; toolNames: string[] }): Promise<{ system: string; sha256: string }> | { system: string; sha256: string };
  /** Evidence related to a request, from earlier sessions of this repository (excluding `exclude`). */
  recall(text: string, exclude: ReadonlySet<string>): RecallHit[];
  /** The context tools run with, for this session. */
  toolContext(sessionId: string, signal: AbortSignal): ToolContext;
  maxTurns: number;
};

export type TaskInput = {
  task: string;
  /** A caller-supplied system message (context tier). */
  system?: string;
  /** Continue this session: a new session with it as parent, replaying its messages. */
  continueFrom?: string;
  source: string;
  /** Turn-only material from the caller (a hook's failing check output). */
  turnContext?: string;
  signal: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
};

/** Title of a session: the first line of the task, short. */
const TITLE_CHARS = 80;

/** The first line of a task, cut to TITLE_CHARS: a session's title and a task's label. */
export function taskTitle(task: string): string {
  return task.split('\n')[0]!.slice(0, TITLE_CHARS);
}

/**
 * Replays logged messages as API messages: the `api_content` sidecar when there is one (the
 * bytes that were sent), and a placeholder result for a tool call the log never answered
 * (a task that crashed mid-tool), since the API refuses an unanswered call.
 */
export function replayMessages(logged: LoggedMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const answered = new Set(logged.filter((m) => m.role === 'tool' && m.toolCallId).map((m) => m.toolCallId!));
  for (const m of logged) {
    if (m.role === 'system') continue;
    if (m.role === 'user') out.push({ role: 'user', content: m.apiContent ?? m.content });
    else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, type: 'function' as const, function: c.function }));
      out.push(
        calls.length
          ? { role: 'assistant', content: m.apiContent ?? (m.content || null), tool_calls: calls }
          : { role: 'assistant', content: m.apiContent ?? m.content },
      );
      for (const c of calls) {
        if (!answered.has(c.id)) {
          // Placed right after the call so the order stays valid; the real result, if logged later, is skipped.
          answered.add(c.id);
          out.push({
            role: 'tool',
            tool_call_id: c.id,
            content: JSON.stringify({ error: 'No result was recorded for this call (the task ended before the tool finished).' }),
          });
        }
      }
    } else if (m.role === 'tool') {
      if (!m.toolCallId || out.some((o) => o.role === 'tool' && o.tool_call_id === m.toolCallId)) continue;
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.apiContent ?? m.content });
    }
  }
  return out;
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof HermesError) return { code: err.code, message: err.message };
  return { code: 'internal', message: `Internal error in the agent loop: ${err instanceof Error ? err.message : String(err)}` };
}

export async function runTask(deps: AgentDeps, input: TaskInput): Promise<TaskResult> {
  const emit = (e: AgentEvent) => {
    try {
      input.onEvent?.(e);
    } catch {
      // A listener's failure (a client gone) must not end the task.
    }
  };
  const toolNames = deps.tools.map((t) => t.name);

  // The prompt: a continuation without a new caller system replays its parent's exact bytes.
  let system: string | undefined;
  let history: { sessionIds: string[]; messages: LoggedMessage[] } = { sessionIds: [], messages: [] };
  if (input.continueFrom) {
    history = deps.log.history(input.continueFrom);
    if (input.system === undefined) system = deps.log.promptOf(input.continueFrom);
  }
  let promptSha: string;
  if (system === undefined) {
    const built = await deps.buildPrompt({ callerSystem: input.system, toolNames });
    system = built.system;
    promptSha = built.sha256;
  } else {
    promptSha = createHash('sha256').update(system).digest('hex');
  }

  const sessionId = deps.log.start({
    source: input.source,
    model: deps.model.settings.name,
    systemPrompt: system,
    parentSessionId: input.continueFrom,
    title: taskTitle(input.task),
  });
  emit({ type: 'session', sessionId, ...(input.continueFrom ? { parentSessionId: input.continueFrom } : {}), promptSha256: promptSha });

  let status: TaskStatus = 'failed';
  let answer = '';
  let turns = 0;
  const refused: NonNullable<TaskResult['refused']> = [];
  let error: TaskResult['error'];
  try {
    // Turn-only material goes into the API copy of this user message, never the system prompt.
    let hits: RecallHit[] = [];
    try {
      hits = safeHits(deps.recall(input.task, new Set([sessionId, ...history.sessionIds])));
    } catch {
      // Recall is a help, not a precondition: a search failure leaves the turn without it.
    }
    const apiContent = composeUserApiContent(input.task, [turnContextBlock(input.turnContext), recallBlock(hits)]);
    deps.log.append(sessionId, { role: 'user', content: input.task, ...(apiContent !== input.task ? { apiContent } : {}) });

    const messages: ChatMessage[] = [{ role: 'system', content: system }, ...replayMessages(history.messages), { role: 'user', content: apiContent }];
    const specs = toolSpecs(deps.tools);
    const signal = input.signal;
    const ctx = deps.toolContext(sessionId, signal);

    for (;;) {
      if (signal.aborted) throw new Cancelled('The task was cancelled.');
      if (turns >= deps.maxTurns) {
        status = 'max_turns';
        break;
      }
      turns++;
      const reply = await deps.model.complete({ messages, tools: specs, signal, onText: (delta) => emit({ type: 'text', delta }) });
      if (reply.usage) {
        try {
          deps.log.usage(sessionId, reply.usage);
        } catch {
          // Token totals are bookkeeping: losing one call's count must not fail the task.
        }
      }
      const calls: ToolCall[] = reply.toolCalls;
      const wireCalls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
      deps.log.append(sessionId, { role: 'assistant', content: reply.content, ...(calls.length ? { toolCalls: wireCalls } : {}) });
      messages.push(
        calls.length ? { role: 'assistant', content: reply.content || null, tool_calls: wireCalls } : { role: 'assistant', content: reply.content },
      );
      if (reply.content) answer = reply.content;
      if (calls.length === 0) {
        emit({ type: 'assistant', text: reply.content });
        status = 'completed';
        break;
      }
      if (reply.content) emit({ type: 'assistant', text: reply.content });
      for (const call of calls) {
        if (signal.aborted) {
          // Answer every call the model made, so a continuation of this session is a valid conversation.
          const content = JSON.stringify({ error: 'The task was cancelled before this tool ran.' });
          deps.log.append(sessionId, { role: 'tool', content, toolName: call.name, toolCallId: call.id });
          continue;
        }
        emit({ type: 'tool_call', id: call.id, name: call.name, args: shortArgs(call.arguments) });
        const outcome = await runToolCall(deps.tools, call, ctx);
        deps.log.append(sessionId, { role: 'tool', content: outcome.content, toolName: call.name, toolCallId: call.id });
        messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        emit({
          type: 'tool_result',
          id: call.id,
          name: call.name,
          ok: outcome.ok,
          summary: outcome.summary,
          ...(outcome.refusedBy ? { refusedBy: outcome.refusedBy } : {}),
        });
        if (outcome.refusedBy) refused.push({ tool: call.name, ...outcome.refusedBy });
      }
    }
  } catch (err) {
    if (err instanceof Cancelled || input.signal.aborted) {
      status = 'cancelled';
      error = { code: 'cancelled', message: 'The task was cancelled.' };
    } else {
      status = 'failed';
      error = errorOf(err);
      try {
        // The reason stays with the session: `sessions show` says why it failed, not only that it did.
        deps.log.append(sessionId, { role: 'system', content: `The task failed (${error.code}): ${error.message}` });
      } catch {
        // the log is what failed; the caller still gets the error
      }
    }
  } finally {
    try {
      deps.log.end(sessionId, status);
    } catch {
      // The log is closing with the daemon; the messages already written stand.
    }
  }
  return { sessionId, status, answer, turns, ...(error ? { error } : {}), ...(refused.length ? { refused } : {}) };
}
