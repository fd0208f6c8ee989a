/**
 * The daemon's side of other agents' hooks: a payload in, the agent's documented answer out.
 * Before a tool call, the guard judges it (judge.ts) with this repository's config; at
 * session start the memory snapshot and the skill index go out as context; at prompt submit,
 * turn-only recall from SessionDB, fenced and labelled as hermesd's own agent gets it; after
 * tool calls, at stop and at session end, the transcript is ingested (after the answer, so
 * the agent never waits for it); once a stop's or a session end's transcript is in,
 * 'agent-stopped' tells the placement service to queue the session's post-task review.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { ZodError } from 'zod';
import type { HermesConfig } from '../../config/schema.js';
import { UsageError } from '../../errors/index.js';
import { cleanGitEnv } from '../../git/env.js';
import { findRealGit } from '../../git/real-git.js';
import type { Memories } from '../../memory/memories.js';
import type { SessionDB } from '../../sessions/db.js';
import type { SkillStore } from '../../skills/store.js';
import { recallBlock } from '../../agent/recall.js';
import { recallFrom } from '../../agent/session-log.js';
import { SESSION_CONTEXT_CLOSE, SESSION_CONTEXT_OPEN } from '../../text/fence.js';
import { claude } from '../../integrations/claude.js';
import { codex } from '../../integrations/codex.js';
import { cursor } from '../../integrations/cursor.js';
import { gemini } from '../../integrations/gemini.js';
import { AGENT_NAMES, SOURCE_OF, type Adapter, type AgentEvent, type AgentName, type Answer } from '../../integrations/event.js';
import { ingestTranscript, sessionOfTranscript, transcriptPathProblem, transcriptsBehind, transcriptStats } from '../../integrations/ingest.js';
import type { TranscriptStats } from '../../protocol/agents.js';
import { judgeTool, type JudgeContext } from '../../integrations/judge.js';
import { agentShellReadOnly, confinedCommand } from '../../guard/agent-shell.js';
import { describeProtectedChanges, discardSnapshot, restoreProtected, snapshotProtected, type ProtectedChange, type ProtectedSnapshot } from '../../guard/protect.js';
import { sandboxAvailability } from '../../guard/sandbox.js';
import type { GuardConfig } from '../../guard/config.js';
import { guardDir } from '../../paths/index.js';
import type { DaemonContext } from '../context.js';
import type { Built } from './built.js';
import type { ConfigService } from './config.js';

export const ADAPTERS: Record<AgentName, Adapter> = { claude, codex, cursor, gemini };

/**
 * Context handed out at session start, at most (characters). Claude Code keeps hook output up
 * to 10,000 characters in the conversation and replaces longer output by a file and a preview;
 * Codex's default per-hook budget is about 2,500 tokens (≈ 10,000 characters).
 */
export const AGENT_CONTEXT_MAX_CHARS = 10_000;

const CONTEXT_HEADER =
  "hermesd: this repository's memory and skills, as of the start of this session. Memory holds durable facts; " +
  "a skill is a procedure: when a task matches one, read it (hermesd's MCP tool skill_view) before starting. " +
  'Changes made during the session (MCP tools memory, skill_manage) show in the next session.';

/** What 'agent-stopped' says: an agent delivered a turn (or ended its session) and its transcript is in SessionDB. */
export type AgentStopped = { sessionId: string; source: string; event: string };

/**
 * Whether the event ends a task the user waited for: the main agent's stop (Claude Code and
 * Codex `Stop`, Cursor `stop`, Gemini CLI `AfterAgent`) or the session's end. A subagent's
 * stop is not: its parent's turn goes on.
 */
function deliveredTask(ev: AgentEvent): boolean {
  if (ev.kind === 'session-end') return true;
  return ev.kind === 'stop' && !/^subagent/i.test(ev.event);
}

export type HandledHook = { answer: Answer; event: AgentEvent; decision: 'deny' | 'rewrite' | 'context' | 'none'; rule?: string };

/** After a tool call, the transcript is read once no other call came for this long… */
const POST_TOOL_INGEST_QUIET_MS = 1_000;
/** …or once reads have waited this long (an agent that never pauses). */
const POST_TOOL_INGEST_MAX_MS = 10_000;
/** A shell call's snapshot waits this long for its post-tool event. */
const PENDING_CALL_TTL_MS = 60 * 60_000;
/** At most this many shell calls' snapshots are kept (parallel calls, events that never came). */
const PENDING_CALLS_MAX = 64;
/** How long the read-only paths of confined commands are reused: a guard file made since is bound from the next computation on. */
const READ_ONLY_REUSE_MS = 2_000;

export class AgentHookService {
  private readOnlyCache: { key: string; at: number; paths: string[] } | undefined;
  /** Snapshots of the protected files taken before allowed shell calls, by call, until their post-tool event. */
  private readonly before = new Map<string, { snap: ProtectedSnapshot; at: number }>();
  /** Ingests in flight, per transcript path: one at a time per file; shutdown waits for them. */
  private readonly ingests = new Map<string, Promise<void>>();
  private readonly gitBin = findRealGit();
  private readonly root: string;
  /** The daemon's environment does not change: what the judge's git calls run with, computed once. */
  private readonly gitEnv: NodeJS.ProcessEnv;
  private readonly home: string;

  /** The stores are resolved on first use: a daemon whose agents only ask about tool calls opens none of them. */
  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: { config: ConfigService; memory: () => Memories; skills: () => SkillStore; sessions: () => SessionDB },
  ) {
    let root = ctx.root;
    try {
      root = realpathSync(ctx.root);
    } catch {
      // the work tree as given
    }
    this.root = root;
    this.gitEnv = cleanGitEnv(ctx.env);
    this.home = ctx.env.HOME ?? homedir();
  }

  /** The adapter for a payload: Cursor's payloads are Cursor's, whichever agent's hook config ran them. */
  adapterFor(agent: string, payload: Record<string, unknown>): Adapter {
    if (cursor.recognises!(payload)) return cursor;
    if (!(AGENT_NAMES as readonly string[]).includes(agent)) throw new UsageError(`Unknown agent "${agent}"; hermesd's agent hooks are for ${AGENT_NAMES.join(', ')}.`);
    return ADAPTERS[agent as AgentName];
  }

  async handle(agent: string, payload: unknown): Promise<HandledHook> {
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new UsageError('The hook payload must be a JSON object (what the agent writes on the hook\'s stdin).');
    const adapter = this.adapterFor(agent, payload as Record<string, unknown>);
    let ev: AgentEvent;
    try {
      ev = adapter.parse(payload as Record<string, unknown>);
    } catch (err) {
      if (err instanceof ZodError) throw new UsageError(`Not a ${adapter.agent} hook payload: ${err.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ')}`);
      throw err;
    }
    ev.cwd = this.real(ev.cwd);
    switch (ev.kind) {
      case 'pre-tool':
        return this.preTool(adapter, ev);
      case 'session-start': {
        this.ingestSoon(ev);
        this.catchUp();
        const text = this.sessionContext();
        const answer = text ? adapter.context(ev, text) : undefined;
        return answer ? { answer, event: ev, decision: 'context' } : { answer: adapter.silent(ev), event: ev, decision: 'none' };
      }
      case 'prompt': {
        // Cursor's beforeSubmitPrompt takes no context: no recall to compute.
        const text = adapter.context(ev, '') ? this.recall(ev) : '';
        this.ingestSoon(ev);
        const answer = text ? adapter.context(ev, text) : undefined;
        return answer ? { answer, event: ev, decision: 'context' } : { answer: adapter.silent(ev), event: ev, decision: 'none' };
      }
      case 'post-tool': {
        this.ingestSoon(ev);
        const told = await this.putBack(adapter, ev);
        return told ? { answer: told, event: ev, decision: 'context' } : { answer: adapter.silent(ev), event: ev, decision: 'none' };
      }
      case 'stop':
      case 'session-end':
        this.ingestSoon(ev);
        return { answer: adapter.silent(ev), event: ev, decision: 'none' };
      default:
        return { answer: adapter.silent(ev), event: ev, decision: 'none' };
    }
  }

  private real(p: string): string {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  }


  private preTool(adapter: Adapter, ev: AgentEvent): HandledHook {
    if (!ev.tool || ev.tool.action.kind === 'other') return { answer: adapter.silent(ev), event: ev, decision: 'none' };
    // A config that does not load is judged with the last valid one, and the agent is told.
    const { config, broken } = this.deps.config.forJudging();
    const jc: JudgeContext = { root: this.root, config, gitBin: this.gitBin, gitEnv: this.gitEnv, home: this.home };
    const denial = judgeTool(jc, ev.tool.action, ev.cwd);
    const note = broken ? `hermesd: .hermes/config.yaml does not load (${broken.split('\n')[0]}); this call was judged with the last valid rules. Fix the file.` : '';
    if (denial) {
      if (note) denial.message = `${denial.message} (${note})`;
      this.ctx.log.info('agent tool call refused', { agent: ev.agent, tool: ev.tool.name, rule: denial.rule, session: ev.sessionId });
      return { answer: adapter.deny(ev, denial), event: ev, decision: 'deny', rule: denial.rule };
    }
    const told = (answer: Answer): Answer => (note ? { ...answer, stderr: `${answer.stderr}${note}\n` } : answer);
    if (ev.tool.action.kind === 'shell') {
      const rewritten = this.confine(adapter, ev, ev.tool.action.command, jc.config);
      if (rewritten) return { answer: told(rewritten), event: ev, decision: 'rewrite' };
    }
    return { answer: told(adapter.silent(ev)), event: ev, decision: 'none' };
  }

  /** The key a shell call's snapshot is kept under until its post-tool event: the call's id, else its command. */
  private callKey(ev: AgentEvent, command: string): string {
    return `${ev.agent}\0${ev.sessionId ?? ''}\0${ev.toolUseId ?? command}`;
  }

  /**
   * Before an allowed shell call: the protected files are snapshotted (their post-tool event puts
   * back what the command changed anyway), and where the agent lets the hook rewrite the command
   * and bubblewrap runs here, the command comes back confined (guard/agent-shell.ts).
   */
  private confine(adapter: Adapter, ev: AgentEvent, command: string, config: GuardConfig): Answer | undefined {
    const protects = (config.rules ?? []).some((r) => (r.protect ?? []).length > 0);
    const snap = protects ? snapshotProtected(this.root, config, { gitBin: this.gitBin, spillDir: guardDir(this.ctx.paths.gitDir) }) : undefined;
    let confined: string | undefined;
    const sandbox = sandboxAvailability(this.ctx.env);
    if (adapter.rewrite && sandbox.kind === 'bwrap' && config.guard?.sandbox?.enabled !== false) {
      const protectedFiles = snap ? [...snap.entries.keys()].map((rel) => ({ rel, generator: snap.matcher.rules.some((r) => r.generator && r.isMatch(rel) && !r.isExcluded(rel)) })) : [];
      confined = confinedCommand({ bwrap: sandbox.path, readOnly: this.readOnly(config, protectedFiles), gitDir: this.ctx.paths.gitDir, command });
    }
    if (snap) {
      this.prune();
      const entry = { snap, at: Date.now() };
      this.before.set(this.callKey(ev, command), entry);
      // Gemini CLI has no call id; its after-tool event carries the rewritten command.
      if (confined && !ev.toolUseId) this.before.set(this.callKey(ev, confined), entry);
    }
    return confined && adapter.rewrite ? adapter.rewrite(ev, confined) : undefined;
  }

  /**
   * The read-only paths of a confined command, computed again at most every READ_ONLY_REUSE_MS
   * for the same config and protected files: a real path per candidate costs a few ms, on every
   * shell call of every agent.
   */
  private readOnly(config: GuardConfig, protectedFiles: Array<{ rel: string; generator: boolean }>): string[] {
    const key = JSON.stringify([config.rules, config.guard, protectedFiles]);
    const hit = this.readOnlyCache;
    if (hit && hit.key === key && Date.now() - hit.at < READ_ONLY_REUSE_MS) return hit.paths;
    const paths = agentShellReadOnly({ root: this.root, gitDir: this.ctx.paths.gitDir, commonDir: this.ctx.paths.commonDir, config, protectedFiles });
    this.readOnlyCache = { key, at: Date.now(), paths };
    return paths;
  }

  /** After a shell call: what it changed of the protected files is put back, and the model told (where the event takes context). */
  private async putBack(adapter: Adapter, ev: AgentEvent): Promise<Answer | undefined> {
    if (ev.tool?.action.kind !== 'shell') return undefined;
    const key = this.callKey(ev, ev.tool.action.command);
    const entry = this.before.get(key);
    if (!entry) return undefined;
    for (const [k, v] of this.before) if (v === entry) this.before.delete(k);
    let changes: ProtectedChange[] = [];
    try {
      changes = await restoreProtected(entry.snap, { generatorEnv: this.ctx.env });
    } finally {
      discardSnapshot(entry.snap);
    }
    if (changes.length === 0) return undefined;
    this.ctx.log.warn('agent shell call changed protected files; put back', { agent: ev.agent, session: ev.sessionId, files: changes.map((c) => c.file), rules: [...new Set(changes.map((c) => c.rule))] });
    const text = `hermesd: ${describeProtectedChanges(changes)}. Do not write these files; change their sources (or ask the user) instead.`;
    return adapter.context(ev, text);
  }

  /** Snapshots of calls whose post-tool event never came (a killed command, an agent that stopped) are let go. */
  private prune(): void {
    const old = Date.now() - PENDING_CALL_TTL_MS;
    for (const [k, v] of this.before) {
      if (v.at >= old && this.before.size <= PENDING_CALLS_MAX) continue;
      this.before.delete(k);
      discardSnapshot(v.snap);
    }
  }

  /** The memory snapshot and the skill index, as hermesd's own agent gets them in its prompt, within the context budget. */
  sessionContext(): string {
    const memory = this.deps.memory().snapshot();
    let skills = '';
    try {
      skills = this.deps.skills().indexText();
    } catch (err) {
      this.ctx.log.warn('skill index not built for an agent session', { error: String(err) });
    }
    const fixed = [CONTEXT_HEADER, memory.memory, memory.repo, memory.user].map((p) => p.trim()).filter(Boolean);
    if (fixed.length === 1 && !skills.trim()) return '';
    // Fenced, so that a transcript holding it (an agent may store what a hook said) is stored without it.
    const fence = SESSION_CONTEXT_OPEN.length + SESSION_CONTEXT_CLOSE.length + 2;
    const used = fixed.join('\n\n').length + 2 + fence;
    const room = AGENT_CONTEXT_MAX_CHARS - used;
    if (skills.length > room) {
      const note = '\n… (skill index cut to fit; hermesd\'s MCP tool skills_list lists every skill)';
      skills = room > note.length ? skills.slice(0, room - note.length).replace(/\n[^\n]*$/, '') + note : '';
    }
    return `${SESSION_CONTEXT_OPEN}\n${[...fixed, skills.trim()].filter(Boolean).join('\n\n')}\n${SESSION_CONTEXT_CLOSE}`;
  }

  /** Turn-only recall for a prompt: evidence from earlier sessions of this repository, this session's own left out. */
  private recall(ev: AgentEvent): string {
    if (!ev.prompt?.trim()) return '';
    const db = this.deps.sessions();
    const own = ev.transcriptPath ? sessionOfTranscript(db, ev.transcriptPath) : undefined;
    const hits = recallFrom(db, this.ctx.root)(ev.prompt, new Set(own ? [own] : []));
    return recallBlock(hits);
  }

  /** Ingests the event's transcript after the answer has gone out; SessionEnd also closes the session. */
  private ingestSoon(ev: AgentEvent): void {
    const path = ev.transcriptPath;
    if (!path) return;
    const problem = transcriptPathProblem(path);
    if (problem) {
      if (ev.kind !== 'session-start') this.ctx.log.info('agent transcript not read', { agent: ev.agent, reason: problem });
      return;
    }
    const work = () => {
      const db = this.deps.sessions();
      const r = ingestTranscript(db, { path, agent: ev.agent, repo: this.ctx.root, ...(ev.sessionId ? { agentSessionId: ev.sessionId } : {}) });
      if (r.stored || r.skipped) this.ctx.log.info('agent transcript read', { agent: ev.agent, session: r.sessionId, stored: r.stored, skipped: r.skipped });
      if (ev.kind === 'session-end' && r.sessionId) db.endSession(r.sessionId, ev.reason ?? 'ended');
      if (r.sessionId && deliveredTask(ev)) {
        const stopped: AgentStopped = { sessionId: r.sessionId, source: SOURCE_OF[ev.agent], event: ev.event };
        this.ctx.events.emit('agent-stopped', stopped);
      }
    };
    // After a tool call the transcript is read once the calls pause (a turn's calls read
    // together, not each beside the next call on a machine the agent also runs on); any other
    // event reads it at once, and that read covers what the deferred one would have.
    if (ev.kind === 'post-tool') return this.defer(path, work);
    this.deferred.get(path)?.cancel();
    this.queue(path, work);
  }

  /** Post-tool reads waiting for the calls to pause, by transcript; `since`: when the first of them was asked for. */
  private readonly deferred = new Map<string, { since: number; cancel(): void; fire(): void }>();

  private defer(path: string, work: () => void): void {
    const pending = this.deferred.get(path);
    pending?.cancel();
    const since = pending?.since ?? Date.now();
    if (Date.now() - since >= POST_TOOL_INGEST_MAX_MS) return this.queue(path, work);
    const timer = setTimeout(() => entry.fire(), POST_TOOL_INGEST_QUIET_MS);
    const entry = {
      since,
      cancel: () => {
        clearTimeout(timer);
        if (this.deferred.get(path) === entry) this.deferred.delete(path);
      },
      fire: () => {
        entry.cancel();
        this.queue(path, work);
      },
    };
    this.deferred.set(path, entry);
  }

  private queue(path: string, work: () => void): void {
    const before = this.ingests.get(path) ?? Promise.resolve();
    const next = before
      .then(() => new Promise<void>((res) => setImmediate(res)))
      .then(work)
      .catch((err: unknown) => this.ctx.log.warn('agent transcript ingest failed', { path, error: String((err as Error)?.message ?? err) }))
      .finally(() => {
        if (this.ingests.get(path) === next) this.ingests.delete(path);
      });
    this.ingests.set(path, next);
  }

  /** Transcripts an agent wrote on while no hook reached the daemon (it was down when a session ended). */
  private catchUp(): void {
    let behind: Array<{ path: string; agent: AgentName }> = [];
    try {
      behind = transcriptsBehind(this.deps.sessions(), this.ctx.root);
    } catch (err) {
      this.ctx.log.warn('agent transcripts not checked', { error: String(err) });
    }
    for (const t of behind) this.queue(t.path, () => void ingestTranscript(this.deps.sessions(), { path: t.path, agent: t.agent, repo: this.ctx.root }));
  }

  /** Resolves when every ingest queued so far has finished. */
  async settled(): Promise<void> {
    for (const d of [...this.deferred.values()]) d.fire();
    while (this.ingests.size) await Promise.allSettled([...this.ingests.values()]);
  }

  stats(): TranscriptStats {
    return transcriptStats(this.deps.sessions(), this.ctx.root);
  }
}

/** The agents' hook service of a daemon: status reports the transcripts read, and closing waits for the ingests in flight. */
export function createAgentHookService(ctx: DaemonContext, deps: ConstructorParameters<typeof AgentHookService>[1]): Built<AgentHookService> {
  const service = new AgentHookService(ctx, deps);
  ctx.report('agents', () => {
    try {
      return service.stats();
    } catch {
      return undefined;
    }
  });
  return {
    value: service,
    close: () => service.settled(),
  };
}
