import { skillManageArgs, skillsListArgs, skillViewArgs } from '../../skills/schema.js';
import { defineTool } from './types.js';

export const skillsList = defineTool({
  name: 'skills_list',
  description: 'List the available skills (reusable procedures): name, category, description, scope (user or project).',
  parameters: skillsListArgs,
  execute(_args, ctx) {
    return ctx.services.skills.list();
  },
});

export const skillView = defineTool({
  name: 'skill_view',
  description:
    'Load a skill: its SKILL.md body, or with `file_path` one of its supporting files (references/, templates/, ' +
    'scripts/). Load the skill whose description matches the task before starting it.',
  parameters: skillViewArgs,
  execute(args, ctx) {
    return ctx.services.skills.view(args.name, args.file_path);
  },
});

export const skillManage = defineTool({
  name: 'skill_manage',
  description:
    'Create or update a user skill (a reusable procedure). Create when a complex task succeeded (5+ calls), ' +
    'errors were overcome, the user corrected your approach and it worked, or the user asks you to remember ' +
    'a procedure. Patch a skill you used when it was stale, wrong or missing a pitfall. Actions: create ' +
    '(content = full SKILL.md with front matter name/description; category optional), edit (content), patch ' +
    '(old_string, new_string, replace_all?, file_path? for a supporting file), delete, write_file ' +
    '(file_path, file_content), remove_file (file_path). Every accepted change is scanned for threats and ' +
    'committed; project skills are read-only.',
  parameters: skillManageArgs,
  execute(args, ctx) {
    return ctx.services.skills.manage(args, { sessionId: ctx.sessionId });
  },
});
