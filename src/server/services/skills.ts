/**
 * The daemon's skills: one SkillStore (user skills of this home, project skills of this work
 * tree), its index cache dropped on the watcher's 'skills-changed', and its warnings (skills
 * kept out of the index) in status and doctor.
 */
import type { DaemonContext } from '../daemon-context.js';
import { SkillStore } from '../../skills/store.js';
import type { Built } from './built.js';

export function openSkills(ctx: DaemonContext): Built<SkillStore> {
  const store = new SkillStore({ home: ctx.home, repoRoot: ctx.root });
  const onChange = () => store.invalidate();
  ctx.events.on('skills-changed', onChange);

  const skillWarnings = ctx.oncePerStatus(() => {
    try {
      return store.warnings();
    } catch (err) {
      return [`skills index could not be built: ${(err as Error).message}`];
    }
  });
  ctx.report('skillWarnings', skillWarnings);
  ctx.warningSources.push(() => skillWarnings().map((w) => `skills: ${w}`));
  return { value: store, close: () => ctx.events.off('skills-changed', onChange) };
}
