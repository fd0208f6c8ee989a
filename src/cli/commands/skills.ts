/** `hermesd skills list|view|history|revert`: a client of /v1/skills. */
import type { Command } from 'commander';
import type { SkillFileView, SkillSummary, SkillView } from '../../skills/store.js';
import type { Commit } from '../../skills/git.js';
import { DaemonClient } from '../../client/daemon-client.js';
import { probe } from '../../client/lifecycle.js';
import { action, color, daemon, globals, output, repo } from '../runtime.js';
import type { DoctorCheck as Check } from '../runtime.js';

/** doctor's skills line: skills a hand edit made dangerous (or unparseable) are kept out of the index. */
export async function skillsCheck(): Promise<Check> {
  const status = await probe(repo());
  if (!status) return { name: 'skills', status: 'ok', detail: 'daemon not running; skills are checked when it starts' };
  const r = await new DaemonClient(String(status.socket)).call<{ warnings: string[] }>('GET', '/v1/skills-index');
  return r.warnings.length
    ? {
        name: 'skills',
        status: 'warn',
        detail: r.warnings.join('; '),
        fix: 'Fix or delete the skill files named above (hermesd skills history <name> / revert <name> <rev>).',
      }
    : { name: 'skills', status: 'ok', detail: 'every skill parses and scans clean' };
}

type ListAnswer = { skills: SkillSummary[] };

function humanList(r: ListAnswer): string {
  if (r.skills.length === 0) return 'no skills (the agent creates them with skill_manage; project skills live in .hermes/skills/)';
  const width = Math.max(...r.skills.map((s) => s.name.length + (s.scope === 'project' ? 10 : 0)));
  const lines: string[] = [];
  let category: string | null | undefined;
  for (const s of r.skills) {
    if (s.category !== category) {
      category = s.category;
      lines.push(color.bold(category ?? '(no category)'));
    }
    const label = s.name + (s.scope === 'project' ? ' [project]' : '');
    lines.push(`  ${label.padEnd(width)}  ${s.description.replace(/\s+/g, ' ')}`);
  }
  return lines.join('\n');
}

function humanView(v: SkillView | SkillFileView): string {
  if ('filePath' in v) return v.binary ? `${v.filePath}: binary file, ${v.bytes} bytes` : (v.content ?? '');
  const head = [
    `${color.bold(v.name)}${v.scope === 'project' ? ' [project]' : ''}${v.category ? `  (${v.category})` : ''}`,
    v.description,
    '',
    v.body.trimEnd(),
  ];
  const files = Object.values(v.files).flat();
  if (files.length) head.push('', color.dim('files:'), ...files.map((f) => `  ${f}`));
  return head.join('\n');
}

export function register(program: Command): void {
  const skills = program.command('skills').description('procedures the agent keeps: list, view, history, revert');

  skills
    .command('list')
    .description('list user and project skills')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const r = await (await daemon()).call<ListAnswer>('GET', '/v1/skills');
        output(globals(cmd), r, () => humanList(r));
      }),
    );

  skills
    .command('view <name>')
    .description("show a skill's SKILL.md (body, front matter, files) or one of its files")
    .option('--file <path>', 'a supporting file, e.g. references/notes.md')
    .action(
      action(async (name: string, opts: { file?: string }, cmd: Command) => {
        const q = opts.file ? `?file=${encodeURIComponent(opts.file)}` : '';
        const r = await (await daemon()).call<SkillView | SkillFileView>('GET', `/v1/skills/${encodeURIComponent(name)}${q}`);
        output(globals(cmd), r, () => humanView(r));
      }),
    );

  skills
    .command('history <name>')
    .description('list the commits that changed a user skill, newest first')
    .action(
      action(async (name: string, _opts: unknown, cmd: Command) => {
        const r = await (await daemon()).call<{ commits: Commit[] }>('GET', `/v1/skills/${encodeURIComponent(name)}/history`);
        output(globals(cmd), r, () =>
          r.commits.length
            ? r.commits.map((c) => `${c.rev.slice(0, 12)}  ${c.date}  ${c.message}`).join('\n')
            : `${name}: no commit yet (a user skill not yet changed through hermesd)`,
        );
      }),
    );

  skills
    .command('revert <name> <rev>')
    .description('restore a user skill as it was at <rev>, as a new commit (scanned first; exit 1 when refused)')
    .action(
      action(async (name: string, rev: string, _opts: unknown, cmd: Command) => {
        const r = await (
          await daemon()
        ).call<{ message: string; commit: string | null }>('POST', `/v1/skills/${encodeURIComponent(name)}/revert`, {
          rev,
          session_id: 'cli',
        });
        output(globals(cmd), r, () => r.message);
      }),
    );
}
