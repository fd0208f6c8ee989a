/**
 * The environment a benchmark runs hermesd and git in: its own HERMES_HOME and socket folder
 * under `base` (never the user's), a fixed git identity, no system git config, and none of the
 * caller's other HERMESD_* settings.
 */
import { join } from 'node:path';

export function benchEnv(base: string, home = join(base, 'home')): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HERMES_HOME: home,
    HERMESD_SOCKET_DIR: join(base, 's'),
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@e',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@e',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  for (const k of Object.keys(env)) if (k.startsWith('HERMESD_') && k !== 'HERMESD_SOCKET_DIR') delete env[k];
  return env;
}
