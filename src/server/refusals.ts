/**
 * A store's refusal on the wire. The stores answer a refused change with `{success: false, …}`
 * (the agent's tools hand that object to the model as it is); the API answers with the named
 * error it stands for, its message the store's. This is the one place that mapping is made.
 */
import { Conflict, MemoryRefused, NotFound, Refused, UsageError } from '../errors/index.js';
import type { MemoryResult } from '../memory/store.js';
import type { ManageFailure } from '../skills/store.js';

/** A skill operation's result, or the error its failure `kind` names (findings in the details). */
export function skillAnswer<T extends { success: boolean }>(r: T | ManageFailure): T {
  if (r.success) return r as T;
  const f = r as ManageFailure;
  const details = f.findings ? { findings: f.findings } : undefined;
  switch (f.kind) {
    case 'invalid':
      throw new UsageError(f.error, details);
    case 'not-found':
      throw new NotFound(f.error, details);
    case 'conflict':
      throw new Conflict(f.error, details);
    default:
      throw new Refused(f.error, details);
  }
}

/** A memory write's result, or a MemoryRefused carrying the store as it is, so the caller can consolidate and retry. */
export function memoryAnswer(result: MemoryResult): Record<string, unknown> {
  if (!result.success) {
    const { error, success: _s, ...details } = result;
    throw new MemoryRefused(error ?? 'The memory write was refused.', details);
  }
  return { ...result };
}
