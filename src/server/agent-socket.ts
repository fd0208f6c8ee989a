/**
 * The agent socket: a second listener of the daemon, bound inside every sandboxed command at
 * the path of the daemon's own socket. It answers only what a command legitimately needs
 * from the daemon — the git hooks (pre-commit judges the agent's commits like the user's),
 * `GET /v1/status` (the hooks' sign of life) and the push broker — so a command can neither
 * approve a config, nor start tasks, nor stop the daemon.
 */
import { chmodSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { configOf } from './services/config.js';
import type { DaemonContext } from './context.js';
import { checkSocketPath } from '../paths/index.js';
import { gitPolicyOf } from '../guard/config.js';
import { findRealGit } from '../guard/git.js';
import { precommitPassed } from '../guard/precommit-marker.js';
import { brokerPush } from '../guard/push-broker.js';
import { createApiServer } from './http.js';
import { hooksRoutes } from './routes/hooks.js';
import { statusRoutes } from './routes/status.js';
import type { Route } from './route.js';

const PushBody = z.strictObject({ args: z.array(z.string()).max(200) });

const REAL_GIT = findRealGit();

/** Pushes made for sandboxed commands, judged by their effect first (push-broker.ts). */
export const pushBrokerRoute: Route = {
  method: 'POST',
  path: '/v1/guard/push',
  body: PushBody,
  handler: async ({ daemon, body }) => {
    const config = configOf(daemon);
    const { args } = body as z.infer<typeof PushBody>;
    const r = await brokerPush(daemon.root, config, gitPolicyOf(config), args, { gitBin: REAL_GIT, judged: (tree) => precommitPassed(daemon.paths.gitDir, tree) });
    daemon.log.info('push broker', { args, exitCode: r.exitCode, ...(r.refused ? { refused: r.refused.policy } : {}) });
    return r;
  },
};

/** The git hooks route, with every request marked as coming from the sandbox (its checks and generators then run in it). */
function sandboxedHooks(route: Route): Route {
  if (route.stream) return route;
  return { ...route, handler: (ctx) => route.handler({ ...ctx, body: { ...(ctx.body as object), sandboxed: true } }) };
}

/** What a sandboxed command may ask of the daemon, and nothing else. */
export const agentRoutes: Route[] = [
  ...statusRoutes.filter((r) => r.method === 'GET' && r.path === '/v1/status'),
  ...hooksRoutes.filter((r) => r.method === 'POST' && r.path === '/v1/hooks/:name').map(sandboxedHooks),
  pushBrokerRoute,
];

/** `<socket dir>/<hash>.agent.sock`, next to the daemon's own socket (same private directory). */
export function agentSocketPath(ctx: DaemonContext): string {
  return join(ctx.paths.socketDir, ctx.paths.socket.slice(ctx.paths.socket.lastIndexOf('/') + 1).replace(/\.sock$/, '.agent.sock'));
}

/** Starts the agent socket (once per daemon); resolves with its path. */
export async function startAgentSocket(ctx: DaemonContext): Promise<string> {
  const path = agentSocketPath(ctx);
  checkSocketPath(path);
  rmSync(path, { force: true });
  const api = createApiServer(ctx, agentRoutes);
  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    const oldMask = process.umask(0o177);
    api.server.listen(path, () => {
      process.umask(oldMask);
      api.server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  const ino = statSync(path).ino;
  ctx.onClose(() => {
    api.server.close();
    api.abortAll();
    try {
      if (statSync(path).ino === ino) rmSync(path, { force: true });
    } catch {
      // gone already
    }
  });
  ctx.log.info('agent socket listening', { path });
  return path;
}
