import { memoryToolArgs } from '../../memory/schema.js';
import { MemoryRefused } from '../../errors/index.js';
import { forModel, refusalForModel } from '../../memory/store.js';
import { defineTool } from './types.js';

export const memory = defineTool({
  name: 'memory',
  description:
    'Save durable facts across sessions: `target: memory` for environment facts, project conventions and ' +
    'tool quirks; `target: user` for the user\'s preferences and style. Write declarative facts, not ' +
    'instructions ("Project uses pytest with xdist", not "Run tests with pytest -n 4"). Actions: add ' +
    '(content), replace (old_text names one entry, content replaces it), remove (old_text). Both stores ' +
    'have a small character budget; a write over budget, a duplicate or suspicious content is refused ' +
    'with the reason; so is removing the last entry of a store (only the user empties a store). Writes reach ' +
    'disk now and appear in the system prompt of the NEXT session, not this one.',
  parameters: memoryToolArgs,
  summarize: (r) => {
    const m = r as { success?: boolean; message?: string; error?: string; usage?: { chars: number; limit: number } };
    return m.success ? `${m.message ?? 'ok'} (${m.usage?.chars}/${m.usage?.limit} chars)` : (m.error ?? 'refused');
  },
  execute(args, ctx) {
    const store = ctx.services.memory;
    try {
      if (args.action === 'add') return forModel(store.add(args.target, args.content ?? ''));
      if (args.action === 'replace') return forModel(store.replace(args.target, args.old_text ?? '', args.content ?? ''));
      return forModel(store.remove(args.target, args.old_text ?? ''));
    } catch (err) {
      // The model reads a refusal as a result it can act on (consolidate, retry), as in the seed.
      if (err instanceof MemoryRefused) return refusalForModel(err);
      throw err;
    }
  },
});
