import { memoryToolArgs } from '../../memory/schema.js';
import { MemoryRefused } from '../../errors/index.js';
import { forModel, refusalForModel } from '../../memory/store.js';
import { defineTool } from './types.js';

export const memory = defineTool({
  name: 'memory',
  description:
    'Save durable facts across sessions. Choose the store by who the fact is about: ' +
    '`target: memory, scope: repo` for facts about THIS repository\'s environment ("tests need `make db` first", ' +
    '"the API server listens on :8080"); `target: user` for the user\'s preferences and style, which follow them into every ' +
    'project ("User prefers concise answers"); `target: memory` without a scope for general agent notes that hold in every ' +
    'repository (tool quirks of this machine). Rules every contributor of the repository must follow belong in its ' +
    'authority file (AGENTS.md), procedures in a skill, and one-off task details nowhere: use `remember` when unsure. ' +
    'Write declarative facts, not instructions ("Project uses pytest with xdist", not "Run tests with pytest -n 4"). Actions: add ' +
    '(content), replace (old_text names one entry, content replaces it), remove (old_text). Every store ' +
    'has a small character budget; a write over budget, a duplicate or suspicious content is refused ' +
    'with the reason. Writes reach ' +
    'disk now and appear in the system prompt of the NEXT session, not this one.',
  parameters: memoryToolArgs,
  summarize: (r) => {
    const m = r as { success?: boolean; message?: string; error?: string; usage?: { chars: number; limit: number } };
    return m.success ? `${m.message ?? 'ok'} (${m.usage?.chars}/${m.usage?.limit} chars)` : (m.error ?? 'refused');
  },
  execute(args, ctx) {
    try {
      return forModel(ctx.services.memory.on(args.target, args.scope, (store) => store.write(args.target, args)));
    } catch (err) {
      // The model reads a refusal as a result it can act on (consolidate, retry), as in the seed;
      // refusalForModel hides entries that failed the threat scan.
      if (err instanceof MemoryRefused) return refusalForModel(err);
      throw err;
    }
  },
});
