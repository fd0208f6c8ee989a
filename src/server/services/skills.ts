/**
 * Daemon glue for skills: one SkillStore per daemon (user skills of this home, project
 * skills of this work tree), its index cache dropped on the watcher's 'skills-changed',
 * and its warnings (skills kept out of the index) in status and doctor.
 */
import type { DaemonContext } from '../context.js';
import { SkillStore } from '../../skills/store.js';

export function skillsOf(ctx: DaemonContext): SkillStore {
  return ctx.service('skills', () => {
    const store = new SkillStore({ home: ctx.home, repoRoot: ctx.root });
    const onChange = () => store.invalidate();
    ctx.events.on('skills-changed', onChange);
    ctx.onClose(() => ctx.events.off('skills-changed', onChange));

    const skillWarnings = () => {
      try {
        return store.warnings();
      } catch (err) {
        return [`skills index could not be built: ${(err as Error).message}`];
      }
    };
    ctx.statusExtras.set('skillWarnings', skillWarnings);
    ctx.warningSources.push(() => skillWarnings().map((w) => `skills: ${w}`));
    return store;
  });
}
