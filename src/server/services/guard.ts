/**
 * The daemon's side of the guard: the repository's known secret values (redacted from tool
 * results and from everything SessionDB stores), the agent socket sandboxed commands reach
 * the daemon through, and the port the terminal tool uses. Core guard modules know nothing
 * of the daemon; this file composes them.
 */
import type { DaemonContext } from '../daemon-context.js';
import type { GuardConfig } from '../../guard/guard-config.js';
import { cleanGitEnv } from '../../git/env.js';
import { refTips } from '../../git/refs.js';
import { findRealGit } from '../../git/real-git.js';
import { gitOut } from '../../git/run.js';
import { SecretValues } from '../../security/secret-values.js';
import { sandboxWrapFor, type GuardPort } from '../../guard/terminal-guard.js';
import type { CommandWrap } from '../../process/run.js';
import type { ConfigInForce } from './config-in-force.js';

/** The real git, by absolute path, resolved when the daemon loads its services (before any shim dir is on a PATH). */
const REAL_GIT = findRealGit();

export class GuardService {
  /** This repository's known secret values (files at any depth, their history, the daemon's environment). */
  readonly secrets: SecretValues;
  /** The terminal tool's view of this daemon's guard. */
  readonly port: GuardPort;
  private socket?: Promise<string | undefined>;
  private socketPath?: string;
  private tips?: string[];

  /** `agentSocket` starts the agent socket (once, on the first sandboxed command) and resolves with its path. */
  constructor(
    private readonly ctx: DaemonContext,
    private readonly config: ConfigInForce,
    agentSocket: () => Promise<string>,
  ) {
    const { config: guardConfig, apiKey } = this.configOrEmpty();
    this.secrets = new SecretValues({ root: ctx.root, dirs: ctx.paths, config: guardConfig, env: ctx.env, extra: apiKey ? [apiKey] : [] });
    ctx.events.on('config-changed', () => {
      const next = this.configOrEmpty();
      this.secrets.update({ config: next.config, extra: next.apiKey ? [next.apiKey] : [] });
    });
    this.port = {
      secrets: this.secrets,
      home: ctx.home,
      env: ctx.env,
      socketDir: ctx.paths.socketDir,
      socket: ctx.paths.socket,
      agentSocket: () => {
        this.socket ??= agentSocket().then(
          (path) => (this.socketPath = path),
          (err: unknown) => {
            ctx.log.warn('agent socket not started', { error: String(err) });
            return undefined;
          },
        );
        return this.socket;
      },
    };
  }

  private configOrEmpty(): { config: GuardConfig; apiKey?: string } {
    try {
      const config = this.config.get();
      return { config, apiKey: config.model.apiKey };
    } catch {
      // An invalid config is reported by every command; the secret scan goes on with the built-in names.
      return { config: {} };
    }
  }

  /**
   * The ref tips (branches, tags, remote-tracking) at the previous call, and records the
   * current ones: post-commit judges every commit HEAD reaches beyond them, not
   * only HEAD. Undefined the first time (then only HEAD is judged).
   */
  refTipsSinceLastLook(): string[] | undefined {
    const previous = this.tips;
    // From git's files (no git process), else from git.
    const read = refTips(this.ctx.paths, ['refs/heads/', 'refs/tags/', 'refs/remotes/']);
    if (read) this.tips = read;
    else {
      const out = gitOut(REAL_GIT, ['for-each-ref', '--format=%(objectname)', 'refs/heads', 'refs/tags', 'refs/remotes'], this.ctx.root, cleanGitEnv());
      if (out !== undefined) this.tips = [...new Set(out.split('\n').filter(Boolean))];
    }
    return previous;
  }

  /**
   * How the daemon runs a sandboxed commit's pre-commit checks and generators: in the sandbox
   * the commit came from. Undefined when commands are not sandboxed here.
   */
  sandboxWrap(config: GuardConfig): CommandWrap | undefined {
    return sandboxWrapFor(this.ctx.root, config, this.port, this.socketPath);
  }
}
