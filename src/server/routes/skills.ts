/** Skills over the local API: list, view, raw files, history, revert, skill_manage, and the prompt index. */
import { z } from 'zod';
import { Refused, UsageError } from '../../errors/index.js';
import { skillManageArgs } from '../../skills/schema.js';
import type { SkillStore } from '../../skills/store.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/** A skill's files; one that scans dangerous lists none (none of it is served). */
function filesOf(store: SkillStore, name: string): string[] {
  try {
    return store.files(name);
  } catch (err) {
    if (err instanceof Refused) return [];
    throw err;
  }
}

const manageBody = skillManageArgs.extend({ session_id: z.string().optional() });
const revertBody = z.object({ rev: z.string().min(1), session_id: z.string().optional() });

export function skillsRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/skills',
      // ?files=1 adds each skill's files (SKILL.md first), the paths GET /v1/skills/:name/file serves.
      handler: ({ query }) => {
        const store = services.skills;
        const skills = store.list();
        if (query.get('files') !== '1') return { skills };
        return { skills: skills.map((s) => ({ ...s, files: filesOf(store, s.name) })) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills-index',
      handler: () => {
        const store = services.skills;
        return { text: store.indexText(), warnings: store.warnings() };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/skills/manage',
      body: manageBody,
      handler: async ({ body }) => {
        const { session_id, ...args } = body;
        return await services.skills.manage(args, { sessionId: session_id ?? 'api' });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name',
      handler: ({ params, query }) => services.skills.view(params.name!, query.get('file') ?? undefined),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name/file',
      handler: ({ params, query }) => {
        const path = query.get('path');
        if (!path) throw new UsageError('Give the file as path, e.g. /v1/skills/<name>/file?path=SKILL.md or ?path=references/api.md');
        // ?encoding=base64 also sends a binary file's bytes (an asset); text always comes as content.
        return services.skills.readFile(params.name!, path, { base64: query.get('encoding') === 'base64' });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name/history',
      handler: async ({ params }) => {
        return await services.skills.history(params.name!);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/skills/:name/revert',
      body: revertBody,
      handler: async ({ params, body }) => {
        const { rev, session_id } = body;
        return await services.skills.revert(params.name!, rev, { sessionId: session_id ?? 'api' });
      },
    }),
  ];
}
