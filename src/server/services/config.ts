/** The config in force of a daemon (./config-in-force.ts), wired to it: the runners' settings follow it, status and warnings show it. */
import type { DaemonContext } from '../daemon-context.js';
import { describeLoosenings } from '../../guard/approval.js';
import { ConfigInForce } from './config-in-force.js';
import { writeRunnerSettings } from '../../hook-client/runners.js';

/**
 * The config in force of a daemon, with its state in status and its pending approvals among the
 * warnings; the runners' settings file follows the config in force (the last valid one while
 * the files do not load).
 */
export function createConfigService(ctx: DaemonContext): ConfigInForce {
  const service = new ConfigInForce(ctx);
  const settings = () => {
    const { config } = service.forJudging();
    try {
      writeRunnerSettings(ctx.paths.gitDir, { hooks: config.hooks, agents: config.agents });
    } catch (err) {
      ctx.log.warn('runner settings not written', { error: String(err) });
    }
  };
  settings();
  ctx.events.on('config-loaded', settings);
  const seen = ctx.oncePerStatus(() => service.seen());
  ctx.report('config', () => seen().status);
  ctx.warningSources.push(() => {
    const pending = seen().pending;
    const stale = (() => {
      try {
        return service.get().daemon.hibernateAfterMinutes !== undefined
          ? [
              'config: daemon.hibernateAfterMinutes no longer does anything (an idle daemon exits after daemon.idleTimeoutMinutes, and the next question starts one); remove it',
            ]
          : [];
      } catch {
        return [];
      }
    })();
    return [
      ...stale,
      ...(pending.length
        ? [
            `guard config: ${pending.length} loosening change(s) wait for approval (${describeLoosenings(pending)}); review .hermes/config.yaml, then run: hermesd config approve`,
          ]
        : []),
    ];
  });
  return service;
}
