/**
 * The daemon's side of other agents' hooks: a payload in, the agent's documented answer out.
 * Before a tool call, the guard judges it (judge.ts) with this repository's config; after a
 * shell call, what it changed of the protected files is put back. Everything else an agent's
 * session asks for (context at session start, recall at a prompt, its transcripts) is
 * agent-sessions.ts's, loaded with the rest of the services: a cold daemon's first verdict on a
 * tool call waits for the config and the judge only.
 */
import { existsSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ZodError } from 'zod';
import { UsageError } from '../../errors/index.js';
import { cleanGitEnv } from '../../git/env.js';
import { findRealGit } from '../../git/real-git.js';
import { findOnPath } from '../../process/path.js';
import { claude } from '../../integrations/claude.js';
import { codex } from '../../integrations/codex.js';
import { cursor } from '../../integrations/cursor.js';
import { gemini } from '../../integrations/gemini.js';
import { AGENT_NAMES, type Adapter, type AgentEvent, type AgentName, type Answer } from '../../integrations/event.js';
import { judgeTool, type JudgeContext } from '../../integrations/judge.js';
import { agentShellReadOnly, codexConfinedCommand, codexProfileCovers, confinedCommand, confineScript, confineScriptFile, type CodexProfile } from '../../guard/agent-shell.js';
import { codexConfigFile, readCodexProfile } from '../../integrations/codex-profile.js';
import { fileStamp } from '../../storage/file-stamp.js';
import { describeProtectedChanges, discardSnapshot, restoreProtected, snapshotProtected, type ProtectedChange, type ProtectedSnapshot } from '../../guard/protect.js';
import { sandboxAvailability } from '../../guard/sandbox.js';
import type { GuardConfig } from '../../guard/config.js';
import { guardDir, runtimeDirOf } from '../../paths/index.js';
import type { DaemonContext } from '../context.js';
import type { AgentSessions, HandledHook } from './agent-sessions.js';
import type { Built } from './built.js';
import type { ConfigService } from './config.js';

export const ADAPTERS: Record<AgentName, Adapter> = { claude, codex, cursor, gemini };

/** A shell call's snapshot waits this long for its post-tool event. */
const PENDING_CALL_TTL_MS = 60 * 60_000;
/** At most this many shell calls' snapshots are kept (parallel calls, events that never came). */
const PENDING_CALLS_MAX = 64;
/** How long the read-only paths of confined commands are reused: a guard file made since is bound from the next computation on. */
const READ_ONLY_REUSE_MS = 2_000;

export class AgentHookService {
  private scriptCache: { key: string; at: number; file: string; readOnly: string[] } | undefined;
  private profileCache: { stamp: string; profile: CodexProfile | undefined } | undefined;
  /** Snapshots of the protected files taken before allowed shell calls, by call, until their post-tool event. */
  private readonly before = new Map<string, { snap: ProtectedSnapshot; at: number }>();
  private readonly gitBin = findRealGit();
  /** The shell a confined command runs in when the agent's is neither bash nor zsh: bash where there is one (Gemini CLI's). */
  private readonly shell: string;
  private readonly root: string;
  /** The daemon's environment does not change: what the judge's git calls run with, computed once. */
  private readonly gitEnv: NodeJS.ProcessEnv;
  private readonly home: string;

  /** `sessions` is loaded on first use: a daemon whose agents only ask about tool calls loads none of it. */
  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: { config: ConfigService; sessions: () => Promise<AgentSessions> },
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
    this.shell = findOnPath('bash', ctx.env) ?? '/bin/sh';
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
    if (ev.kind === 'pre-tool') return this.preTool(adapter, ev);
    const sessions = await this.deps.sessions();
    if (ev.kind !== 'post-tool') return sessions.handle(adapter, ev);
    sessions.ingestSoon(ev);
    const told = await this.putBack(adapter, ev);
    return told ? { answer: told, event: ev, decision: 'context' } : { answer: adapter.silent(ev), event: ev, decision: 'none' };
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
      const { file, readOnly } = this.confineScript(sandbox.path, config, protectedFiles);
      // Codex: where its own sandbox runs the profile init wrote, and that profile holds every path the confinement would, the command runs as written.
      // Codex takes the profile's paths from the folder its session runs in: from a folder below the root they name other paths.
      const profile = ev.agent === 'codex' ? this.codexProfile() : undefined;
      confined = profile && codexProfileCovers(profile, ev.cwd, readOnly) ? codexConfinedCommand(profile, file, command) : confinedCommand(file, command);
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
   * The confine script of a shell command: its read-only paths computed again at most every
   * READ_ONLY_REUSE_MS for the same config and protected files (a real path per candidate costs a
   * few ms, on every shell call of every agent); the script written again when it is gone.
   */
  private confineScript(bwrap: string, config: GuardConfig, protectedFiles: Array<{ rel: string; generator: boolean }>): { file: string; readOnly: string[] } {
    const key = JSON.stringify([bwrap, config.rules, config.guard, protectedFiles]);
    const hit = this.scriptCache;
    if (hit && hit.key === key && Date.now() - hit.at < READ_ONLY_REUSE_MS && existsSync(hit.file)) return hit;
    const readOnly = agentShellReadOnly({ root: this.root, gitDir: this.ctx.paths.gitDir, commonDir: this.ctx.paths.commonDir, config, protectedFiles });
    const file = confineScriptFile(this.confineDir(), confineScript({ bwrap, readOnly, shell: this.shell }));
    this.scriptCache = { key, at: Date.now(), file, readOnly };
    return this.scriptCache;
  }

  /** hermesd's profile as this work tree's `.codex/config.toml` holds it now (read again when the file changes). */
  private codexProfile(): CodexProfile | undefined {
    const stamp = fileStamp(codexConfigFile(this.root));
    if (this.profileCache?.stamp !== stamp) this.profileCache = { stamp, profile: readCodexProfile(this.root) };
    return this.profileCache.profile;
  }

  /** Where this daemon's confine scripts are: `<git-dir>/hermesd/confine/`, read-only inside the confinement. */
  private confineDir(): string {
    return join(runtimeDirOf(this.ctx.paths.gitDir), 'confine');
  }

  /** The daemon stops: the confine scripts it wrote go (a command that already started has its script open). */
  close(): void {
    rmSync(this.confineDir(), { recursive: true, force: true });
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
}

/** The agents' hook service of a daemon. */
export function createAgentHookService(ctx: DaemonContext, deps: ConstructorParameters<typeof AgentHookService>[1]): Built<AgentHookService> {
  const service = new AgentHookService(ctx, deps);
  return { value: service, close: () => service.close() };
}
