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
import { isAbsolute, join } from 'node:path';
import { ZodError } from 'zod';
import { UsageError } from '../../errors/index.js';
import { cleanGitEnv } from '../../git/env.js';
import { findRealGit } from '../../git/real-git.js';
import { findOnPath } from '../../process/path.js';
import { claude } from '../../other-agents/claude.js';
import { codex } from '../../other-agents/codex.js';
import { cursor } from '../../other-agents/cursor.js';
import { gemini } from '../../other-agents/gemini.js';
import { AGENT_NAMES, type Adapter, type AgentEvent, type AgentName, type Answer } from '../../other-agents/event.js';
import { judgeTool, type JudgeContext } from '../../guard/tool-judge.js';
import { agentShellPlan, codexConfinedCommand, codexProfileCovers, confinedCommand, confineScript, confineScriptFile, type CodexProfile } from '../../guard/agent-shell.js';
import { judgeCommandEffects, type BeforeCommand } from '../../guard/after-command.js';
import { gitPolicyOf } from '../../guard/config.js';
import { precommitPassed } from '../../guard/precommit-marker.js';
import { gitConfigIncludes, hooksPathOf } from '../../guard/terminal.js';
import { captureRefState, captureRepoState, gitDirNames } from '../../guard/verify.js';
import { GENERATOR_TIMEOUT_MS } from '../../rules/generator.js';
import { runCommandSync, type CommandWrap } from '../../process/run.js';
import { codexConfigFile, readCodexProfile } from '../../other-agents/codex-profile.js';
import { fileStamp } from '../../storage/file-stamp.js';
import { describeProtectedChanges, discardSnapshot, hardLinkedProtected, snapshotProtected } from '../../guard/protect.js';
import { bwrapArgs, recordDaemonNamespace, sandboxFor, within, type SandboxAvailability, type SandboxPlan } from '../../guard/sandbox.js';
import type { GuardConfig } from '../../guard/config.js';
import { guardDir, runtimeDirOf } from '../../paths/index.js';
import type { DaemonContext } from '../daemon-context.js';
import type { AgentSessions, HandledHook } from './agent-sessions.js';
import type { Built } from './built.js';
import type { ConfigService } from './config.js';

export const ADAPTERS: Record<AgentName, Adapter> = { claude, codex, cursor, gemini };

/** A shell call's snapshot waits this long for its post-tool event. */
const PENDING_CALL_TTL_MS = 60 * 60_000;
/** At most this many shell calls' snapshots are kept (parallel calls, events that never came). */
const PENDING_CALLS_MAX = 64;
/** A shell call on its way: what it is judged against after, whether hermesd's sandbox held it, and that sandbox's plan. */
type PendingCall = { before: BeforeCommand; at: number; confined: boolean; plan?: SandboxPlan };

/** How long the read-only paths of confined commands are reused: a guard file made since is bound from the next computation on. */
const READ_ONLY_REUSE_MS = 2_000;

export class AgentHookService {
  private scriptCache: { key: string; at: number; file: string; plan: SandboxPlan } | undefined;
  private profileCache: { stamp: string; profile: CodexProfile | undefined } | undefined;
  private planCache: { key: string; at: number; plan: SandboxPlan } | undefined;
  /** What allowed shell calls are judged against, by call, until their post-tool event. */
  private readonly before = new Map<string, PendingCall>();
  /** The temporary folders an agent's command may write: /tmp, and the daemon's TMPDIR where that is another. */
  private readonly tmpDirs: string[];
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
    private readonly deps: { config: ConfigService; sessions: () => Promise<AgentSessions>; agentSocket: () => Promise<string | undefined> },
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
    this.tmpDirs = [...new Set(['/tmp', ...(ctx.env.TMPDIR && isAbsolute(ctx.env.TMPDIR) ? [ctx.env.TMPDIR] : [])])];
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


  private async preTool(adapter: Adapter, ev: AgentEvent): Promise<HandledHook> {
    if (!ev.tool || ev.tool.action.kind === 'other') return { answer: adapter.silent(ev), event: ev, decision: 'none' };
    // A config that does not load is judged with the last valid one, and the agent is told.
    const { config, broken } = this.deps.config.forJudging();
    const jc: JudgeContext = {
      root: this.root,
      config,
      gitBin: this.gitBin,
      gitEnv: this.gitEnv,
      home: this.home,
      hermesHome: this.ctx.home,
      // Asked only of a write outside the work tree.
      plan: () => this.judgingPlan(config),
      hardLinkOf: (_abs, st) => hardLinkedProtected(this.root, config, this.gitBin, st),
    };
    const denial = judgeTool(jc, ev.tool.action, ev.cwd);
    const note = broken ? `hermesd: .hermes/config.yaml does not load (${broken.split('\n')[0]}); this call was judged with the last valid rules. Fix the file.` : '';
    if (denial) {
      if (note) denial.message = `${denial.message} (${note})`;
      this.ctx.log.info('agent tool call refused', { agent: ev.agent, tool: ev.tool.name, rule: denial.rule, session: ev.sessionId });
      return { answer: adapter.deny(ev, denial), event: ev, decision: 'deny', rule: denial.rule };
    }
    const told = (answer: Answer): Answer => (note ? { ...answer, stderr: `${answer.stderr}${note}\n` } : answer);
    if (ev.tool.action.kind === 'shell') {
      const rewritten = await this.confine(adapter, ev, ev.tool.action.command, jc.config);
      if (rewritten) return { answer: told(rewritten), event: ev, decision: 'rewrite' };
    }
    return { answer: told(adapter.silent(ev)), event: ev, decision: 'none' };
  }

  /** The key a shell call's snapshot is kept under until its post-tool event: the call's id, else its command. */
  private callKey(ev: AgentEvent, command: string): string {
    return `${ev.agent}\0${ev.sessionId ?? ''}\0${ev.toolUseId ?? command}`;
  }

  /**
   * Before an allowed shell call: what the call will be judged against when it ends (the
   * protected files, the names at the top of the git directories, the refs; and where the call
   * runs outside any sandbox, the hooks and the config too), and where the agent lets the hook
   * rewrite the command and bubblewrap runs here, the command back in hermesd's sandbox plan
   * (guard/agent-shell.ts).
   */
  private async confine(adapter: Adapter, ev: AgentEvent, command: string, config: GuardConfig): Promise<Answer | undefined> {
    const { gitDir, commonDir } = this.ctx.paths;
    const snapshot = snapshotProtected(this.root, config, { gitBin: this.gitBin, spillDir: guardDir(gitDir) });
    let confined: string | undefined;
    let plan: SandboxPlan | undefined;
    const sandbox = sandboxFor(config, this.ctx.env);
    if (adapter.rewrite && sandbox.kind === 'bwrap' && config.guard?.sandbox?.enabled !== false) {
      const protectedFiles = [...snapshot.entries.keys()].map((rel) => ({ rel, generator: snapshot.matcher.rules.some((r) => r.generator && r.covers(rel)) }));
      const socket = await this.deps.agentSocket();
      const script = this.confineScript(sandbox, config, protectedFiles, socket);
      plan = script.plan;
      // Codex: where its own sandbox runs the profile init wrote, and that profile holds every path the confinement would, the command runs as written.
      // Codex takes the profile's paths from the folder its session runs in: from a folder below the root they name other paths.
      const profile = ev.agent === 'codex' ? this.codexProfile() : undefined;
      confined = profile && codexProfileCovers(profile, ev.cwd, this.root, plan.readOnly) ? codexConfinedCommand(profile, script.file, command) : confinedCommand(script.file, command);
    }
    const dirs = { root: this.root, gitDir, commonDir, gitBin: this.gitBin };
    // A call hermesd's sandbox does not hold could reach the hooks, the config and hermesd's runners: their whole state is kept.
    const state = confined ? captureRefState(dirs) : captureRepoState(dirs);
    const call: PendingCall = { before: { snapshot, state, names: gitDirNames(gitDir, commonDir) }, at: Date.now(), confined: confined !== undefined, plan };
    this.prune();
    this.before.set(this.callKey(ev, command), call);
    // Gemini CLI has no call id; its after-tool event carries the rewritten command.
    if (confined && !ev.toolUseId) this.before.set(this.callKey(ev, confined), call);
    return confined && adapter.rewrite ? adapter.rewrite(ev, confined) : undefined;
  }

  /**
   * The confine script of a shell command: its plan computed again at most every
   * READ_ONLY_REUSE_MS for the same config and protected files (a real path per candidate costs a
   * few ms, on every shell call of every agent); the script written again when it is gone.
   */
  private confineScript(
    bwrap: Extract<SandboxAvailability, { kind: 'bwrap' }>,
    config: GuardConfig,
    protectedFiles: Array<{ rel: string; generator: boolean }>,
    socket: string | undefined,
  ): { file: string; plan: SandboxPlan } {
    const key = JSON.stringify([bwrap, config.rules, config.guard, protectedFiles, socket]);
    const hit = this.scriptCache;
    if (hit && hit.key === key && Date.now() - hit.at < READ_ONLY_REUSE_MS && existsSync(hit.file)) return hit;
    const { paths } = this.ctx;
    const { plan, shared } = agentShellPlan({
      root: this.root,
      gitDir: paths.gitDir,
      commonDir: paths.commonDir,
      config,
      protectedFiles,
      home: this.ctx.home,
      userHome: this.home,
      tmpDirs: this.tmpDirs,
      socketDir: paths.socketDir,
      ...(socket ? { socket: [socket, paths.socket] as [string, string] } : {}),
      hooksPath: hooksPathOf(this.root, this.gitBin),
      gitConfigFiles: gitConfigIncludes(this.root, this.gitBin),
    });
    const file = confineScriptFile(this.confineDir(), confineScript({ bwrap, plan, shell: this.shell, shared }));
    // A git hook inside the confinement knows it from this (another pid namespace): no HERMESD_SKIP, no onUnavailable there.
    recordDaemonNamespace(paths.gitDir);
    this.scriptCache = { key, at: Date.now(), file, plan };
    return this.scriptCache;
  }

  /**
   * The plan a tool call is judged by where it writes outside the work tree (which folders a
   * confined command may write): the same plan as a shell call's, without its protected files
   * (inside the work tree the rules themselves judge), reused for READ_ONLY_REUSE_MS.
   */
  private judgingPlan(config: GuardConfig): SandboxPlan {
    const key = JSON.stringify([config.guard?.sandbox?.writable ?? []]);
    const hit = this.planCache;
    if (hit && hit.key === key && Date.now() - hit.at < READ_ONLY_REUSE_MS) return hit.plan;
    const { paths } = this.ctx;
    const { plan } = agentShellPlan({ root: this.root, gitDir: paths.gitDir, commonDir: paths.commonDir, config, protectedFiles: [], home: this.ctx.home, userHome: this.home, tmpDirs: this.tmpDirs, socketDir: paths.socketDir });
    this.planCache = { key, at: Date.now(), plan };
    return plan;
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

  /**
   * After a shell call: what it did judged as `terminal`'s commands are (guard/after-command.ts) —
   * planted git names removed, protected files put back, new commits that break a rule taken back
   * — and the model told what and why (where the event takes context).
   */
  private async putBack(adapter: Adapter, ev: AgentEvent): Promise<Answer | undefined> {
    if (ev.tool?.action.kind !== 'shell') return undefined;
    const key = this.callKey(ev, ev.tool.action.command);
    const call = this.before.get(key);
    if (!call) return undefined;
    for (const [k, v] of this.before) if (v === call) this.before.delete(k);
    const { config } = this.deps.config.forJudging();
    const run = call.plan ? this.inPlan(call.plan, config) : undefined;
    const effects = await judgeCommandEffects(call.before, {
      config,
      ...(call.confined ? {} : { policy: gitPolicyOf(config) }),
      restore: run ? { generatorEnv: this.ctx.env, runGenerator: run.generator, wrap: run.wrap } : { generatorEnv: this.ctx.env },
      judged: (tree) => precommitPassed(this.ctx.paths.gitDir, tree, { sinceMs: call.at }),
    });
    const lines: string[] = [];
    if (effects.protected.length > 0) lines.push(`${describeProtectedChanges(effects.protected)}. Do not write these files; change their sources (or ask the user) instead.`);
    for (const g of effects.git) lines.push(g.message);
    if (lines.length === 0) return undefined;
    const rules = [...new Set([...effects.protected.map((c) => c.rule), ...effects.git.flatMap((g) => (g.policy === 'rules' ? (g.rules ?? []) : [g.policy]))])];
    this.ctx.log.warn('agent shell call broke the rules; put back', { agent: ev.agent, session: ev.sessionId, files: effects.protected.map((c) => c.file), rules });
    return adapter.context(ev, `hermesd: ${lines.join('\n')}`);
  }

  /** How a generator the check runs after a confined call runs: in the call's own plan, never outside it. */
  private inPlan(plan: SandboxPlan, config: GuardConfig): { generator: (command: string) => number | null; wrap: CommandWrap } | undefined {
    const sandbox = sandboxFor(config, this.ctx.env);
    if (sandbox.kind !== 'bwrap') return undefined;
    const wrap: CommandWrap = (command, cwd = this.root) => {
      const inTree = plan.writable.some((w) => within(w, cwd));
      return { file: sandbox.path, args: bwrapArgs(sandbox, { ...plan, cwd, writable: inTree ? plan.writable : [...plan.writable, cwd] }, command) };
    };
    return { wrap, generator: (command) => runCommandSync(command, { cwd: this.root, env: this.ctx.env, wrap: (c) => wrap(c, this.root), timeoutMs: GENERATOR_TIMEOUT_MS }).status };
  }

  /** Snapshots of calls whose post-tool event never came (a killed command, an agent that stopped) are let go. */
  private prune(): void {
    const old = Date.now() - PENDING_CALL_TTL_MS;
    for (const [k, v] of this.before) {
      if (v.at >= old && this.before.size <= PENDING_CALLS_MAX) continue;
      this.before.delete(k);
      discardSnapshot(v.before.snapshot);
    }
  }
}

/** The agents' hook service of a daemon. */
export function createAgentHookService(ctx: DaemonContext, deps: ConstructorParameters<typeof AgentHookService>[1]): Built<AgentHookService> {
  const service = new AgentHookService(ctx, deps);
  return { value: service, close: () => service.close() };
}
