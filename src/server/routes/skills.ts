/** Skills over the local API: list, view, raw files, history, revert, skill_manage, and the prompt index. */
import { z } from 'zod';
import { UsageError } from '../../errors/index.js';
import { skillManageArgs } from '../../skills/schema.js';
import { SkillValidationError } from '../../skills/validate.js';
import type { ManageResult } from '../../skills/store.js';
import { skillAnswer } from '../refusals.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/** A skill that scans dangerous lists no files (none of it is served). */
function withFiles(files: string[] | { success: false }): string[] {
  return Array.isArray(files) ? files : [];
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
        return { skills: skills.map((s) => ({ ...s, files: withFiles(store.files(s.name)) })) };
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
        return skillAnswer<ManageResult>(await services.skills.manage(args, { sessionId: session_id ?? 'api' }));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name',
      handler: ({ params, query }) => skillAnswer(services.skills.view(params.name!, query.get('file') ?? undefined)),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name/file',
      handler: ({ params, query }) => {
        const path = query.get('path');
        if (!path) throw new UsageError('Give the file as path, e.g. /v1/skills/<name>/file?path=SKILL.md or ?path=references/api.md');
        // ?encoding=base64 also sends a binary file's bytes (an asset); text always comes as content.
        return skillAnswer(services.skills.readFile(params.name!, path, { base64: query.get('encoding') === 'base64' }));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/skills/:name/history',
      handler: async ({ params }) => {
        try {
          return await services.skills.history(params.name!);
        } catch (err) {
          if (err instanceof SkillValidationError) throw new UsageError(err.message);
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/skills/:name/revert',
      body: revertBody,
      handler: async ({ params, body }) => {
        const { rev, session_id } = body;
        return skillAnswer<ManageResult>(await services.skills.revert(params.name!, rev, { sessionId: session_id ?? 'api' }));
      },
    }),
  ];
}
