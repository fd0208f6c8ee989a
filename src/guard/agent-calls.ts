/**
 * The guard around another agent's tool calls (Claude Code, Codex, Gemini CLI, Cursor), as its
 * hooks reach it: before a call, the judgement of what the call would do (tool-judge.ts); before
 * an allowed shell call, what it will be judged against afterwards and, where the agent lets the
 * hook give the command back and bubblewrap runs here, the command confined in hermesd's sandbox
 * plan (agent-shell.ts); after it, the judgement of what it did (after-command.ts). Knows nothing
 * of the agents' formats: other-agents/hook-handler.ts reads their payloads and writes their answers.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import { cleanGitEnv } from '../git/env.js';
import { findRealGit } from '../git/real-git.js';
import { findOnPath } from '../process/path.js';
import { runCommandSync, type CommandWrap } from '../process/run.js';
import { GENERATOR_TIMEOUT_MS } from '../rules/generator.js';
import { confineDir, guardDir } from '../paths/index.js';
import type { Logger } from '../storage/log.js';
import { judgeCommandEffects, type BeforeCommand } from './after-command.js';
import {
  agentShellPlan,
  codexConfinedCommand,
  codexProfileCovers,
  confinedCommand,
  confineScript,
  confineScriptFile,
  type CodexProfile,
} from './agent-shell.js';
import { gitPolicyOf, type GuardConfig } from './guard-config.js';
import { precommitPassed } from '../rules/precommit-marker.js';
import { recordName, RefusedRecord } from './refused-preload.js';
import { describeRefusedWrites, refusedPaths, refusedWrites, type RefusedWrite } from './refused-writes.js';
import { describeProtectedChanges, discardSnapshot, snapshotProtected } from './protect.js';
import { bwrapArgs, recordDaemonNamespace, sandboxFor, within, type SandboxAvailability, type SandboxPlan } from './sandbox.js';
import { gitConfigIncludes, hooksPathOf } from './git-reads.js';
import type { Denial, ToolAction } from './tool-call.js';
import { judgeTool, writeJudgeContext, type JudgeContext } from './tool-judge.js';
import { captureRefState, captureRepoState, gitReadNames } from './verify.js';

/** A shell call's snapshot waits this long for its post-tool event. */
const PENDING_CALL_TTL_MS = 60 * 60_000;
/** At most this many shell calls' snapshots are kept (parallel calls, events that never came). */
const PENDING_CALLS_MAX = 64;
/** How long the read-only paths of confined commands are reused: a guard file made since is bound from the next computation on. */
const READ_ONLY_REUSE_MS = 2_000;

/** A shell call on its way: what it is judged against after, whether hermesd's sandbox held it, and that sandbox's plan. */
type PendingCall = { before: BeforeCommand; at: number; confined: boolean; plan?: SandboxPlan };

/** What the guard of other agents' calls needs of the process around it. */
export type AgentCallsContext = {
  /** The work tree (a realpath is taken here). */
  root: string;
  gitDir: string;
  commonDir: string;
  /** $HERMES_HOME. */
  home: string;
  /** The daemon's environment (the user's HOME, TMPDIR, PATH). */
  env: NodeJS.ProcessEnv;
  /** The daemon's socket folder and socket (inside a confinement the agent socket is bound there). */
  socketDir: string;
  socket: string;
  log: Logger;
  /** Starts the agent socket (git hooks from inside a confinement reach the daemon there); its path, or undefined. */
  agentSocket: () => Promise<string | undefined>;
};

/** How a shell call is to run: confined (the command to give the agent back), or as written. */
export type ShellCallStart = { confined?: string };

export class AgentCallGuard {
  private scriptCache: { key: string; at: number; file: string; text: string; plan: SandboxPlan; refused?: { lib: string; folder: string } } | undefined;
  private planCache: { key: string; at: number; plan: SandboxPlan } | undefined;
  /** What allowed shell calls are judged against, by call, until their post-tool event. */
  private readonly pending = new Map<string, PendingCall>();
  /** The temporary folders an agent's command may write: /tmp, and the daemon's TMPDIR where that is another. */
  private readonly tmpDirs: string[];
  private readonly gitBin = findRealGit();
  /** The shell a confined command runs in when the agent's is neither bash nor zsh: bash where there is one (Gemini CLI's). */
  private readonly shell: string;
  private readonly root: string;
  /** The daemon's environment does not change: what the judge's git calls run with, computed once. */
  private readonly gitEnv: NodeJS.ProcessEnv;
  private readonly userHome: string;
  /** What confined commands were refused, recorded by their processes (refused-preload.ts). */
  private readonly record: RefusedRecord;

  constructor(private readonly ctx: AgentCallsContext) {
    let root = ctx.root;
    try {
      root = realpathSync(ctx.root);
    } catch {
      // the work tree as given
    }
    this.root = root;
    this.gitEnv = cleanGitEnv(ctx.env);
    this.userHome = ctx.env.HOME ?? homedir();
    this.shell = findOnPath('bash', ctx.env) ?? '/bin/sh';
    this.tmpDirs = [...new Set(['/tmp', ...(ctx.env.TMPDIR && isAbsolute(ctx.env.TMPDIR) ? [ctx.env.TMPDIR] : [])])];
    this.record = new RefusedRecord(this.confineDir(), ctx.env, ctx.log);
  }

  /** The guard's decision on a tool call before it runs (paths relative to `cwd`); undefined when nothing refuses it. */
  judge(action: ToolAction, cwd: string, config: GuardConfig): Denial | undefined {
    const jc: JudgeContext = {
      ...writeJudgeContext({ ...this.dirs(), config, gitBin: this.gitBin, gitEnv: this.gitEnv }),
      home: this.userHome,
      hermesHome: this.ctx.home,
      // Asked only of a write outside the work tree.
      plan: () => this.judgingPlan(config),
    };
    return judgeTool(jc, action, cwd);
  }

  /**
   * Before an allowed shell call: what the call will be judged against when it ends (the
   * protected files, the names at the top of the git directories, the refs; and where the call
   * runs outside any sandbox, the hooks and the config too), and, where the agent can take the
   * command back (`rewrite`) and bubblewrap runs here, the command in hermesd's sandbox plan.
   * Codex: where its own sandbox runs the profile init wrote (`codex.profile`) and that profile
   * holds every path the confinement would, the command runs as written in Codex's sandbox; Codex
   * takes the profile's paths from the folder its session runs in (`codex.cwd`).
   */
  async beforeShell(
    keys: { call: string; alias?: (confined: string) => string; session?: string },
    command: string,
    config: GuardConfig,
    o: { rewrite: boolean; codex?: { profile?: CodexProfile; cwd: string } },
  ): Promise<ShellCallStart> {
    const { gitDir, commonDir } = this.ctx;
    const snapshot = snapshotProtected(this.root, config, { gitBin: this.gitBin, spillDir: guardDir(gitDir) });
    let confined: string | undefined;
    let plan: SandboxPlan | undefined;
    const sandbox = sandboxFor(config, this.ctx.env);
    if (o.rewrite && sandbox.kind === 'bwrap' && config.guard?.sandbox?.enabled !== false) {
      const protectedFiles = [...snapshot.entries.keys()].map((rel) => ({ rel, generator: snapshot.matcher.rules.some((r) => r.generator && r.covers(rel)) }));
      const socket = await this.ctx.agentSocket();
      const script = this.confineScript(sandbox, config, protectedFiles, socket);
      plan = script.plan;
      const profile = o.codex?.profile;
      const refused = script.refused;
      const record = refused && keys.session !== undefined ? { ...refused, name: recordName(keys.session) } : undefined;
      confined =
        profile && codexProfileCovers(profile, o.codex!.cwd, this.root, plan.readOnly)
          ? codexConfinedCommand(profile, script.file, command, record)
          : confinedCommand(script.file, command, record?.name);
    }
    const dirs = { root: this.root, gitDir, commonDir, gitBin: this.gitBin };
    // A call hermesd's sandbox does not hold could reach the hooks, the config and hermesd's runners: their whole state is kept.
    const state = confined ? captureRefState(dirs) : captureRepoState(dirs);
    const call: PendingCall = {
      before: { snapshot, state, names: gitReadNames(this.dirs(), this.gitBin) },
      at: Date.now(),
      confined: confined !== undefined,
      plan,
    };
    this.prune();
    this.pending.set(keys.call, call);
    // An agent that names its calls by command alone (Gemini CLI) carries the command given back in its after-tool event.
    if (confined && keys.alias) this.pending.set(keys.alias(confined), call);
    return confined ? { confined } : {};
  }

  /**
   * After a shell call: what it did, judged as `terminal`'s commands are — planted git names
   * removed, protected files put back, new commits that break a rule taken back — and what to tell
   * the model (undefined when it broke nothing and was refused nothing, or no call was started
   * under `key`). A write the confinement refused reaches the command as "Read-only file
   * system" only: `ran.output` (what the agent reports the call printed, or its error) is read
   * for those refusals, as `terminal`'s output is (refused-writes.ts), and each is named with
   * the rule that keeps the path read-only; so is what the session's confined commands recorded
   * they were refused (refused-preload.ts: a writer whose output was thrown away, or one in the
   * background that wrote after its own call returned, is told at this call).
   */
  async afterShell(
    key: string,
    config: GuardConfig,
    who: Record<string, unknown>,
    ran: { output?: string; cwd?: string; command?: string; session?: string } = {},
  ): Promise<string | undefined> {
    const call = this.pending.get(key);
    const fromOutput = this.inOutput(config, ran);
    if (!call) {
      // A call this daemon did not see start (it started after the call's pre-tool event, the
      // one before having stopped meanwhile): what the command's output shows it was refused is
      // still told. There is no snapshot to compare, and no record (it went with its daemon).
      if (fromOutput.length === 0) return undefined;
      this.ctx.log.info('agent shell call refused a write', { ...who, files: fromOutput.map((r) => r.path), rules: fromOutput.map((r) => r.rule ?? 'guard') });
      return `hermesd: ${describeRefusedWrites(fromOutput)}`;
    }
    const gitDirs = [this.ctx.gitDir, this.ctx.commonDir];
    const recorded = ran.session !== undefined ? refusedPaths(this.record.take(ran.session), { root: this.root, config, gitDirs }) : [];
    const refused: RefusedWrite[] = [...fromOutput, ...recorded.filter((r) => !fromOutput.some((o) => o.path === r.path))];
    for (const [k, v] of this.pending) if (v === call) this.pending.delete(k);
    const run = call.plan ? this.inPlan(call.plan, config) : undefined;
    const effects = await judgeCommandEffects(call.before, {
      config,
      ...(call.confined ? {} : { policy: gitPolicyOf(config) }),
      restore: run ? { generatorEnv: this.ctx.env, runGenerator: run.generator, wrap: run.wrap } : { generatorEnv: this.ctx.env },
      judged: (tree) => precommitPassed(this.ctx.gitDir, tree, { sinceMs: call.at }),
    });
    const lines: string[] = [];
    if (effects.protected.length > 0)
      lines.push(`${describeProtectedChanges(effects.protected)}. Do not write these files; change their sources (or ask the user) instead.`);
    for (const g of effects.git) lines.push(g.message);
    if (refused.length > 0) {
      lines.push(describeRefusedWrites(refused));
      this.ctx.log.info('agent shell call refused a write', { ...who, files: refused.map((r) => r.path), rules: refused.map((r) => r.rule ?? 'guard') });
    }
    if (lines.length === 0) return undefined;
    const rules = [...new Set([...effects.protected.map((c) => c.rule), ...effects.git.flatMap((g) => (g.policy === 'rules' ? (g.rules ?? []) : [g.policy]))])];
    if (effects.protected.length > 0 || effects.git.length > 0)
      this.ctx.log.warn('agent shell call broke the rules; put back', { ...who, files: effects.protected.map((c) => c.file), rules });
    return `hermesd: ${lines.join('\n')}`;
  }

  /** The writes a command's output shows the confinement refused (its processes' own error words), with their rules. */
  private inOutput(config: GuardConfig, ran: { output?: string; cwd?: string; command?: string }): RefusedWrite[] {
    if (!ran.output) return [];
    return refusedWrites(ran.output, {
      root: this.root,
      cwd: ran.cwd ?? this.root,
      config,
      gitDirs: [this.ctx.gitDir, this.ctx.commonDir],
      ...(ran.command ? { command: ran.command } : {}),
    });
  }

  /** Why confined commands record nothing they were refused (the library does not load here), once a command was confined; undefined otherwise. */
  recordProblem(): string | undefined {
    return this.record.problem();
  }

  /**
   * The daemon stops: the records of refused writes go; the confine scripts stay (a command given
   * back just before the stop has not started its script yet), checked byte for byte before the
   * next daemon hands one out again.
   */
  close(): void {
    this.record.close();
  }

  /**
   * The confine script of a shell command: its plan computed again at most every
   * READ_ONLY_REUSE_MS for the same config and protected files (a real path per candidate costs a
   * few ms, on every shell call of every agent); the script's file checked on every hand-out.
   */
  private confineScript(
    bwrap: Extract<SandboxAvailability, { kind: 'bwrap' }>,
    config: GuardConfig,
    protectedFiles: Array<{ rel: string; generator: boolean }>,
    socket: string | undefined,
  ): { file: string; plan: SandboxPlan; refused?: { lib: string; folder: string } } {
    // What records the refused writes, checked each call: put back where it went meanwhile (a folder removed by hand, a /tmp cleaner).
    const lib = this.record.lib();
    const folder = lib ? this.record.folderPath() : undefined;
    const refused = lib && folder ? { lib, folder } : undefined;
    const key = JSON.stringify([bwrap, config.rules, config.guard, protectedFiles, socket, refused]);
    const hit = this.scriptCache;
    if (hit && hit.key === key && Date.now() - hit.at < READ_ONLY_REUSE_MS) return { ...hit, file: confineScriptFile(this.confineDir(), hit.text) };
    const { plan, shared } = agentShellPlan({
      root: this.root,
      gitDir: this.ctx.gitDir,
      commonDir: this.ctx.commonDir,
      config,
      protectedFiles,
      home: this.ctx.home,
      userHome: this.userHome,
      tmpDirs: this.tmpDirs,
      socketDir: this.ctx.socketDir,
      ...(socket ? { socket: [socket, this.ctx.socket] as [string, string] } : {}),
      hooksPath: hooksPathOf(this.dirs(), this.gitBin),
      gitConfigFiles: gitConfigIncludes(this.dirs(), this.gitBin),
    });
    const text = confineScript({ bwrap, plan, shell: this.shell, shared, ...(refused ? { refused } : {}) });
    const file = confineScriptFile(this.confineDir(), text);
    // A git hook inside the confinement knows it from this (another pid namespace): no HERMESD_SKIP, no onUnavailable there.
    recordDaemonNamespace(this.ctx.gitDir);
    this.scriptCache = { key, at: Date.now(), file, text, plan, ...(refused ? { refused } : {}) };
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
    const { plan } = agentShellPlan({
      root: this.root,
      gitDir: this.ctx.gitDir,
      commonDir: this.ctx.commonDir,
      config,
      protectedFiles: [],
      home: this.ctx.home,
      userHome: this.userHome,
      tmpDirs: this.tmpDirs,
      socketDir: this.ctx.socketDir,
    });
    this.planCache = { key, at: Date.now(), plan };
    return plan;
  }

  /** The repository's work tree and git directories. */
  private dirs(): { root: string; gitDir: string; commonDir: string } {
    return { root: this.root, gitDir: this.ctx.gitDir, commonDir: this.ctx.commonDir };
  }

  /** Where this daemon's confine scripts are: `<git-dir>/hermesd/confine/`, read-only inside the confinement. */
  private confineDir(): string {
    return confineDir(this.ctx.gitDir);
  }

  /** How a generator the check runs after a confined call runs: in the call's own plan, never outside it. */
  private inPlan(plan: SandboxPlan, config: GuardConfig): { generator: (command: string) => number | null; wrap: CommandWrap } | undefined {
    const sandbox = sandboxFor(config, this.ctx.env);
    if (sandbox.kind !== 'bwrap') return undefined;
    const wrap: CommandWrap = (command, cwd = this.root) => {
      const inTree = plan.writable.some((w) => within(w, cwd));
      return { file: sandbox.path, args: bwrapArgs(sandbox, { ...plan, cwd, writable: inTree ? plan.writable : [...plan.writable, cwd] }, command) };
    };
    return {
      wrap,
      generator: (command) =>
        runCommandSync(command, { cwd: this.root, env: this.ctx.env, wrap: (c) => wrap(c, this.root), timeoutMs: GENERATOR_TIMEOUT_MS }).status,
    };
  }

  /** Snapshots of calls whose post-tool event never came (a killed command, an agent that stopped) are let go. */
  private prune(): void {
    const old = Date.now() - PENDING_CALL_TTL_MS;
    for (const [k, v] of this.pending) {
      if (v.at >= old && this.pending.size <= PENDING_CALLS_MAX) continue;
      this.pending.delete(k);
      discardSnapshot(v.before.snapshot);
    }
  }
}
