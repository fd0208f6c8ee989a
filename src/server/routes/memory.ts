/**
 * The memory stores over the API: `target` memory|user, `scope` global|repo (repo: this
 * repository's MEMORY.md; USER.md has no repository scope). A refused write (empty, threat, budget, no/ambiguous
 * match, hand-edited file, a batch emptying a store without allow_empty) is a 409 `memory-refused` whose message is the reason and whose
 * details carry the store as it is, so the caller can consolidate and retry.
 */
import { z } from 'zod';
import { UsageError } from '../../errors/index.js';
import { parseWith } from '../http.js';
import { memoryOperationSchema, memoryScopeSchema, memoryTargetSchema } from '../../memory/schema.js';
import { MemoryStore, type MemoryScope, type MemoryTarget } from '../../memory/store.js';
import { defineRoute, type Route } from '../route.js';
import type { Services } from '../services/index.js';

/**
 * A batch that would leave a non-empty store with no entries is refused unless this is true. A
 * single remove names the entry it deletes and needs no flag; the field is accepted there too
 * (and changes nothing), so a client can send one body shape.
 */
const AllowEmpty = z.boolean().default(false);

const SingleBody = memoryOperationSchema.extend({
  target: memoryTargetSchema.default('memory'),
  scope: memoryScopeSchema.default('global'),
  allow_empty: AllowEmpty,
});
const BatchBody = z.strictObject({
  target: memoryTargetSchema.default('memory'),
  scope: memoryScopeSchema.default('global'),
  operations: z.array(memoryOperationSchema).min(1),
  allow_empty: AllowEmpty,
});

export type MemoryWriteBody = z.infer<typeof SingleBody> | z.infer<typeof BatchBody>;

/** Picks the schema by shape first, so a bad field gets its own message rather than a union's "Invalid input". */
function parseWriteBody(body: unknown): MemoryWriteBody {
  const batch = typeof body === 'object' && body !== null && 'operations' in body;
  return batch ? parseWith(BatchBody, body) : parseWith(SingleBody, body ?? {});
}

function targetOf(query: URLSearchParams): MemoryTarget {
  const raw = query.get('target') ?? 'memory';
  const parsed = memoryTargetSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`Unknown memory target '${raw}'. Use target=memory or target=user.`);
  return parsed.data;
}

function scopeOf(query: URLSearchParams): MemoryScope {
  const raw = query.get('scope') ?? 'global';
  const parsed = memoryScopeSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`Unknown memory scope '${raw}'. Use scope=global or scope=repo.`);
  return parsed.data;
}

export function memoryRoutes(services: Services): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/memory',
      handler: ({ query }) => {
        const scope = scopeOf(query);
        const store = services.memory.store(targetOf(query), scope);
        if (!(store instanceof MemoryStore)) throw new UsageError(store.message);
        const { target, entries, usage } = store.list(targetOf(query));
        // The global listing keeps its documented shape; a repository's names its scope and where it lives.
        return scope === 'repo' ? { target, scope, entries, usage, path: services.memory.repo?.pathOf('memory') } : { target, entries, usage };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/memory',
      handler: ({ body }) => {
        const req = parseWriteBody(body);
        return services.memory.on(req.target, req.scope, (store) =>
          'operations' in req ? store.apply(req.target, req.operations, { allowEmpty: req.allow_empty }) : store.write(req.target, req),
        );
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/memory/snapshot',
      handler: () => services.memory.snapshot(),
    }),
  ];
}
