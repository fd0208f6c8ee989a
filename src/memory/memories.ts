/**
 * The memory a session in one repository sees: the global MEMORY.md and USER.md
 * ($HERMES_HOME/memories/), and the repository's own MEMORY.md ($HERMES_HOME/projects/<id>/),
 * each a MemoryStore with the same limits, scan, lock, atomic writes and frozen snapshot.
 * USER.md has one scope: the user's preferences follow them into every repository.
 */
import { MemoryRefused } from '../errors/index.js';
import { MemoryStore, type MemoryLimits, type MemoryRefusalDetails, type MemoryResult, type MemoryScope, type MemoryTarget } from './store.js';
import { usageOf } from './entries.js';

export type MemorySnapshot = { memory: string; user: string; repo: string };

/** Limits of the three stores; the repository's MEMORY.md has its own budget. */
export type AllMemoryLimits = MemoryLimits & { repoCharLimit: number };

export class Memories {
  readonly global: MemoryStore;
  /** Absent where there is no repository (a standalone run outside one). */
  readonly repo: MemoryStore | undefined;

  constructor(opts: { globalDir: string; repoDir?: string; limits: () => AllMemoryLimits }) {
    this.global = new MemoryStore(opts.globalDir, opts.limits);
    this.repo = opts.repoDir
      ? new MemoryStore(
          opts.repoDir,
          () => {
            const l = opts.limits();
            return { memoryCharLimit: l.repoCharLimit, userCharLimit: l.userCharLimit };
          },
          'repo',
        )
      : undefined;
  }

  /**
   * The store a (target, scope) pair names, or the refusal that says why there is none:
   * USER.md is never per repository, and a repository scope needs a repository.
   */
  store(target: MemoryTarget, scope: MemoryScope = 'global'): MemoryStore | MemoryRefused {
    if (scope === 'global') return this.global;
    const refusal = (error: string) =>
      new MemoryRefused(error, { target, scope, reason: 'invalid', entries: [], usage: { chars: 0, limit: 0 } } satisfies MemoryRefusalDetails);
    if (target === 'user') {
      return refusal(
        "USER.md has no repository scope: the user's preferences follow them into every repository. Use target user without a scope, " +
          'or target memory with scope repo for a fact about this repository.',
      );
    }
    if (!this.repo) return refusal('There is no repository here, so there is no repository memory; use the global MEMORY.md.');
    return this.repo;
  }

  /** Runs `op` on the store (target, scope) names; throws that pair's MemoryRefused when there is none. */
  on(target: MemoryTarget, scope: MemoryScope | undefined, op: (store: MemoryStore) => MemoryResult): MemoryResult {
    const store = this.store(target, scope);
    if (store instanceof MemoryRefused) throw store;
    return op(store);
  }

  /** The prompt blocks, as frozen at session start: global MEMORY.md, this repository's MEMORY.md, USER.md. */
  snapshot(): MemorySnapshot {
    return { ...this.global.snapshot(), repo: this.repo?.block('memory') ?? '' };
  }

  /** Every entry of the three stores (duplicate checks across scopes). */
  allEntries(): { memory: string[]; user: string[]; repo: string[] } {
    return { memory: this.global.entries('memory'), user: this.global.entries('user'), repo: this.repo?.entries('memory') ?? [] };
  }

  /** Chars used and the limit of the store (target, scope) names. */
  usage(target: MemoryTarget, scope: MemoryScope = 'global'): { chars: number; limit: number } | undefined {
    const store = this.store(target, scope);
    if (!(store instanceof MemoryStore)) return undefined;
    return { chars: usageOf(store.entries(target)), limit: store.limitOf(target) };
  }
}
