/**
 * Other agents' sessions, as hermesd keeps them: at session start the repository's authority
 * where the agent does not read it itself (instruction-files.ts), the memory snapshot and the
 * skill index go out as context; at prompt submit, turn-only recall from SessionDB, fenced and
 * labelled as hermesd's own agent gets it; after tool calls, at stop and at session end, the
 * transcript is ingested (after the answer, so the agent never waits for it); once a stop's or
 * a session end's transcript is in, 'agent-stopped' tells whoever listens (the post-task review)
 * that a task was delivered. Their tool calls are judged by the guard (hook-handler.ts hands
 * every other event here).
 */
import type { EventEmitter } from 'node:events';
import type { Memories } from '../memory/memories.js';
import type { SessionDB } from '../sessions/db.js';
import type { SkillStore } from '../skills/store.js';
import { recallBlock, recallFrom } from '../sessions/recall.js';
import type { Logger } from '../storage/log.js';
import { SESSION_CONTEXT_CLOSE, SESSION_CONTEXT_OPEN } from '../text/fence.js';
import { silentAnswer, SOURCE_OF, type Adapter, type AgentEvent, type Answer } from './event.js';
import { type AgentName } from '../protocol/agent-hooks.js';
import { ingestTranscript, sessionOfTranscript, transcriptPathProblem, transcriptsBehind, transcriptStats } from './ingest.js';
import type { TranscriptStats } from '../protocol/agents.js';
import type { Authority } from '../context/authority.js';
import { agentView, authorityContext } from './instruction-files.js';
import { relative } from 'node:path';

/** What the sessions of other agents need of the process around them: the work tree, a log, and where 'agent-stopped' goes. */
export type AgentSessionsContext = { root: string; log: Logger; events: EventEmitter };

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

/** An agent's hook event handled: the answer, and what it decided. */
export type HandledHook = { answer: Answer; event: AgentEvent; decision: 'deny' | 'rewrite' | 'context' | 'none'; rule?: string };

/** After a tool call, the transcript is read once no other call came for this long… */
const POST_TOOL_INGEST_QUIET_MS = 1_000;
/** …or once reads have waited this long (an agent that never pauses). */
const POST_TOOL_INGEST_MAX_MS = 10_000;

export class AgentSessions {
  /** Ingests in flight, per transcript path: one at a time per file; shutdown waits for them. */
  private readonly ingests = new Map<string, Promise<void>>();

  /** The stores are resolved on first use. */
  constructor(
    private readonly ctx: AgentSessionsContext,
    private readonly deps: {
      memory: () => Memories;
      skills: () => SkillStore;
      sessions: () => SessionDB;
      /** The repository's authority for a session at `cwd` (the daemon's cached load: context/authority.ts). */
      authority?: (cwd: string) => Promise<Authority>;
      /** Resolves when a transcript may be written without the daemon stopping for it (as GitHooksPorts.recordable). */
      recordable?: () => Promise<void>;
    },
  ) {}

  /** An event of a session other than a tool call's (the guard judges those: hook-handler.ts). */
  async handle(adapter: Adapter, ev: AgentEvent): Promise<HandledHook> {
    switch (ev.kind) {
      case 'session-start': {
        this.ingestSoon(ev);
        this.catchUp();
        const text = this.sessionContext(await this.authorityFor(ev));
        const answer = text ? adapter.context(ev, text) : undefined;
        return answer ? { answer, event: ev, decision: 'context' } : { answer: silentAnswer(ev), event: ev, decision: 'none' };
      }
      case 'prompt': {
        // Cursor's beforeSubmitPrompt takes no context: no recall to compute.
        const text = adapter.context(ev, '') ? this.recall(ev) : '';
        this.ingestSoon(ev);
        const answer = text ? adapter.context(ev, text) : undefined;
        return answer ? { answer, event: ev, decision: 'context' } : { answer: silentAnswer(ev), event: ev, decision: 'none' };
      }
      case 'stop':
      case 'session-end':
        this.ingestSoon(ev);
        return { answer: silentAnswer(ev), event: ev, decision: 'none' };
      default:
        return { answer: silentAnswer(ev), event: ev, decision: 'none' };
    }
  }

  /**
   * What the agent of `ev` is to be told of the repository's authority at session start: its
   * text where the agent reads it neither on its own nor through its setting, and which file wins
   * where it also reads another (instruction-files.ts). The same bytes every session until a file changes.
   */
  async authorityFor(ev: Pick<AgentEvent, 'agent' | 'cwd'>): Promise<string> {
    if (!this.deps.authority) return '';
    const root = this.ctx.root;
    const inside = ev.cwd && !relative(root, ev.cwd).startsWith('..') ? ev.cwd : root;
    try {
      const authority = await this.deps.authority(inside);
      const view = agentView(ev.agent, root, authority, inside);
      return authorityContext(view, authority.text);
    } catch (err) {
      this.ctx.log.warn('authority not read for an agent session', { agent: ev.agent, error: String(err) });
      return '';
    }
  }

  /**
   * The authority part (authorityFor), the memory snapshot and the skill index, as hermesd's own
   * agent gets them in its prompt, within the context budget: the authority first (it is what
   * stays the same longest), cut only when it alone would not fit.
   */
  sessionContext(authority = ''): string {
    const memory = this.deps.memory().snapshot();
    let skills = '';
    try {
      skills = this.deps.skills().indexText();
    } catch (err) {
      this.ctx.log.warn('skill index not built for an agent session', { error: String(err) });
    }
    const fence = SESSION_CONTEXT_OPEN.length + SESSION_CONTEXT_CLOSE.length + 2;
    const memoryParts = [memory.memory, memory.repo, memory.user].map((p) => p.trim()).filter(Boolean);
    const withMemory = memoryParts.length > 0 || skills.trim() !== '' ? [CONTEXT_HEADER, ...memoryParts] : [];
    if (authority) {
      const room = AGENT_CONTEXT_MAX_CHARS - fence - withMemory.join('\n\n').length - 2;
      if (authority.length > room) {
        const note = '\n… (cut to fit the session context; read the file itself for the rest)';
        authority = room > note.length + 200 ? authority.slice(0, room - note.length) + note : '';
      }
    }
    const fixed = [authority.trim(), ...withMemory].filter(Boolean);
    if (fixed.length === 0) return '';
    // Fenced, so that a transcript holding it (an agent may store what a hook said) is stored without it.
    const used = fixed.join('\n\n').length + 2 + fence;
    const room = AGENT_CONTEXT_MAX_CHARS - used;
    if (skills.length > room) {
      const note = "\n… (skill index cut to fit; hermesd's MCP tool skills_list lists every skill)";
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
  ingestSoon(ev: AgentEvent): void {
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
      .then(() => this.deps.recordable?.())
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
