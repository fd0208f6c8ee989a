/**
 * The agent socket: a second listener of the daemon, bound inside every sandboxed command at
 * the path of the daemon's own socket. It answers only what a command legitimately needs
 * from the daemon — its git hooks' questions (POST /v1/ask: pre-commit judges the agent's
 * commits like the user's), `GET /v1/status` and the push broker — so a command can neither
 * approve a config, nor start tasks, nor stop the daemon.
 */
import { chmodSync, rmSync, statSync } from 'node:fs';
import { z } from 'zod';
import { gitPolicyOf } from '../guard/guard-config.js';
import { findRealGit } from '../git/real-git.js';
import { precommitPassed } from '../rules/precommit-marker.js';
import { brokerPush } from '../guard/push-broker.js';
import { agentSocketPath, checkSocketPath } from '../paths/index.js';
import { createApiServer } from './http.js';
import { defineRoute, type Route } from './route.js';
import { askRoute } from './routes/ask.js';
import { statusRoutes } from './routes/status.js';
import type { Listener, Services } from './services/index.js';

const PushBody = z.strictObject({ args: z.array(z.string()).max(200) });

const REAL_GIT = findRealGit();

/** Pushes made for sandboxed commands, judged by their effect first (push-broker.ts). */
function pushBrokerRoute(services: Services): Route {
  const { daemon } = services;
  return defineRoute({
    method: 'POST',
    path: '/v1/guard/push',
    body: PushBody,
    handler: async ({ body: { args } }) => {
      const config = services.config.get();
      const r = await brokerPush(daemon.root, config, gitPolicyOf(config), args, {
        gitBin: REAL_GIT,
        judged: (tree) => precommitPassed(daemon.paths.gitDir, tree),
      });
      daemon.log.info('push broker', { args, exitCode: r.exitCode, ...(r.refused ? { refused: r.refused.policy } : {}) });
      return r;
    },
  });
}

/** What a sandboxed command may ask of the daemon, and nothing else. */
export function agentRoutes(services: Services): Route[] {
  return [
    ...statusRoutes(services.daemon).filter((r) => r.method === 'GET' && r.path === '/v1/status'),
    askRoute(services.daemon, async () => services, { sandboxed: true }),
    pushBrokerRoute(services),
  ];
}

/** Starts the agent socket next to the daemon's own; the services close it (first) on shutdown. */
export async function startAgentSocket(services: Services): Promise<Listener> {
  const { daemon } = services;
  const path = agentSocketPath(daemon.paths);
  checkSocketPath(path);
  rmSync(path, { force: true });
  const api = createApiServer(daemon, agentRoutes(services));
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
  daemon.log.info('agent socket listening', { path });
  return {
    path,
    close: () => {
      api.server.close();
      api.abortAll();
      try {
        if (statSync(path).ino === ino) rmSync(path, { force: true });
      } catch {
        // gone already
      }
    },
  };
}
