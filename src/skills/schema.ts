/** The skill tools' parameters (DESIGN.md §6), declared once for the agent tools, the MCP tools, the API and the store. */
import { z } from 'zod';

export const SKILL_MANAGE_ACTIONS = ['create', 'edit', 'patch', 'delete', 'write_file', 'remove_file'] as const;

export const skillManageArgs = z.strictObject({
  action: z.enum(SKILL_MANAGE_ACTIONS),
  name: z.string().describe('Skill name: lower case, digits, . _ -; at most 64 characters.'),
  content: z.string().optional().describe('create/edit: the full SKILL.md (YAML front matter with name and description, then the body).'),
  category: z.string().optional().describe('create: one folder name to group the skill under, e.g. devops.'),
  file_path: z
    .string()
    .optional()
    .describe('write_file/remove_file, and patch of a supporting file: a path under references/, templates/, scripts/ or assets/.'),
  file_content: z.string().optional().describe('write_file: the full content of the supporting file.'),
  old_string: z.string().optional().describe('patch: the text to find (fuzzy matching tolerates whitespace and quoting differences).'),
  new_string: z.string().optional().describe('patch: the replacement text (may be empty to delete).'),
  replace_all: z.boolean().optional().describe('patch: replace every match instead of requiring a unique one.'),
});

export type SkillManageArgs = z.infer<typeof skillManageArgs>;

export const skillsListArgs = z.strictObject({});

export const skillViewArgs = z.strictObject({
  name: z.string().min(1),
  file_path: z.string().optional().describe('a supporting file of the skill, relative to its folder'),
});
