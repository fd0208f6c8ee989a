/**
 * Daemon glue of the guard: the repository's known secret values (redacted from tool
 * results and from everything SessionDB stores), the agent socket sandboxed commands reach
 * the daemon through, and the port the terminal tool uses. Core guard modules know nothing
 * of the daemon; this file composes them.
 */
import { configOf } from './config.js';
import type { DaemonContext } from '../context.js';
import type { GuardConfig } from '../../guard/config.js';
import { cleanGitEnv, findRealGit, gitOut } from '../../guard/git.js';
import { SecretValues } from '../../guard/secret-values.js';
import { sandboxWrapFor, type GuardPort } from '../../guard/terminal.js';
import type { CommandWrap } from '../../rules/generator.js';

const KEY = 'guard';

type GuardState = { secrets: SecretValues; socket?: Promise<string | undefined>; socketPath?: string; port: GuardPort; tips?: string[] };

const REAL_GIT = findRealGit();

function configOrEmpty(ctx: DaemonContext): { config: GuardConfig; apiKey?: string } {
  try {
    const config = configOf(ctx);
    return { config, apiKey: config.model.apiKey };
  } catch {
    // An invalid config is reported by every command; the secret scan goes on with the built-in names.
    return { config: {} };
  }
}

function stateOf(ctx: DaemonContext): GuardState {
  return ctx.service<GuardState>(KEY, () => {
    const { config, apiKey } = configOrEmpty(ctx);
    const secrets = new SecretValues({ root: ctx.root, config, env: ctx.env, extra: apiKey ? [apiKey] : [] });
    ctx.events.on('config-changed', () => {
      const next = configOrEmpty(ctx);
      secrets.update({ config: next.config, extra: next.apiKey ? [next.apiKey] : [] });
    });
    const state: GuardState = {
      secrets,
      port: {
        secrets,
        home: ctx.home,
        env: ctx.env,
        socketDir: ctx.paths.socketDir,
        socket: ctx.paths.socket,
        agentSocket: () => {
          state.socket ??= import('../agent-socket.js').then(
            async (m) => (state.socketPath = await m.startAgentSocket(ctx)),
            (err: unknown) => {
              ctx.log.warn('agent socket not started', { error: String(err) });
              return undefined;
            },
          );
          return state.socket;
        },
      },
    };
    return state;
  });
}

/** The terminal tool's view of this daemon's guard. */
export function guardPortOf(ctx: DaemonContext): GuardPort {
  return stateOf(ctx).port;
}

/** This repository's known secret values (files at any depth, their history, the daemon's environment). */
export function secretValuesOf(ctx: DaemonContext): SecretValues {
  return stateOf(ctx).secrets;
}

/**
 * The ref tips (branches, tags, remote-tracking) at the previous call, and records the
 * current ones: post-commit judges every commit HEAD reaches beyond them (issue 20), not
 * only HEAD. Undefined the first time (then only HEAD is judged).
 */
export function refTipsSinceLastLook(ctx: DaemonContext): string[] | undefined {
  const state = stateOf(ctx);
  const previous = state.tips;
  const out = gitOut(REAL_GIT, ['for-each-ref', '--format=%(objectname)', 'refs/heads', 'refs/tags', 'refs/remotes'], ctx.root, cleanGitEnv());
  if (out !== undefined) state.tips = [...new Set(out.split('\n').filter(Boolean))];
  return previous;
}

/**
 * How the daemon runs a sandboxed commit's pre-commit checks and generators: in the sandbox
 * the commit came from (issue 20). Undefined when commands are not sandboxed here.
 */
export function sandboxWrapOf(ctx: DaemonContext, config: GuardConfig): CommandWrap | undefined {
  const state = stateOf(ctx);
  return sandboxWrapFor(ctx.root, config, state.port, state.socketPath);
}
