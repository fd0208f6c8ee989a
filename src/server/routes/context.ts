import { realpathSync } from 'node:fs';
import { relative, isAbsolute, sep } from 'node:path';
import { UsageError } from '../../errors/index.js';
import type { DaemonContext } from '../daemon-context.js';
import { defineRoute, type Route } from '../route.js';
import { agentsReport } from '../../other-agents/agent-drift.js';
import type { Services } from '../services/index.js';

/** The session directory a client asks about: absolute, inside this daemon's work tree. */
function cwdOf(daemon: DaemonContext, raw: string | null): string {
  if (!raw) return daemon.root;
  if (!isAbsolute(raw)) throw new UsageError(`cwd must be an absolute path, got ${JSON.stringify(raw)}.`);
  let real: string;
  try {
    real = realpathSync(raw);
  } catch {
    throw new UsageError(`cwd ${raw} does not exist.`);
  }
  const rel = relative(daemon.root, real);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new UsageError(`cwd ${raw} is outside this daemon's work tree ${daemon.root}.`);
  return real;
}

export function contextRoutes(services: Services): Route[] {
  const { daemon } = services;
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/context',
      // ?cwd=<absolute dir> picks the session directory (the AGENTS chain runs from the root down to it).
      handler: ({ query }) => services.prompt.report({ cwd: cwdOf(daemon, query.get('cwd')) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/context/authority',
      // The files in force, each as the prompt carries it: `path` from the work tree root, `label` from cwd.
      handler: async ({ query }) => {
        const a = await services.prompt.authority(cwdOf(daemon, query.get('cwd')));
        return {
          source: a.source ?? null,
          files: a.files.map((f) => ({
            path: relative(daemon.root, f.path).split(sep).join('/'),
            label: f.label,
            text: f.text,
            sha256: f.sha256,
            truncated: f.truncated,
            blocked: f.blocked.map((h) => h.id),
          })),
          text: a.text,
          warnings: a.warnings,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/context/agents',
      // Per agent: what it reads on its own, how the authority reaches it, and where what it reads disagrees with the authority.
      handler: async ({ query }) => {
        const cwd = cwdOf(daemon, query.get('cwd'));
        const { config, broken } = services.config.forJudging();
        const report = await agentsReport(daemon.root, await services.prompt.authority(cwd), config, cwd);
        if (broken) report.warnings.push(`The config files do not load (${broken}); protect rules were compared as last judged.`);
        return report;
      },
    }),
  ];
}
