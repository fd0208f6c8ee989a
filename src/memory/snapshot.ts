/**
 * The prompt block of a memory store: a header naming the store and its usage, then the
 * entries. An entry that fails the strict threat scan is shown as a one-line notice, never
 * as its text; the file keeps it so the user can see and remove it.
 */
import { scanText } from '../security/scan.js';
import { charCount, ENTRY_SEPARATOR, formatCount, usageOf } from './entries.js';

export type MemoryTarget = 'memory' | 'user';
/** Which MEMORY.md: the global one (every repository) or this repository's ($HERMES_HOME/projects/<id>/). USER.md is always global. */
export type MemoryScope = 'global' | 'repo';
/** A store as its prompt block and messages name it. */
export type StoreKind = 'memory' | 'user' | 'repo';

export const FILE_OF: Record<MemoryTarget, string> = { memory: 'MEMORY.md', user: 'USER.md' };
const TITLE_OF: Record<StoreKind, string> = { memory: 'MEMORY', user: 'USER', repo: 'REPOSITORY MEMORY' };
/** How messages name a store's file. */
export const NAME_OF: Record<StoreKind, string> = { memory: 'MEMORY.md', user: 'USER.md', repo: "this repository's MEMORY.md" };
/** The CLI flags that address a store. */
const FLAGS_OF: Record<StoreKind, string> = { memory: '', user: ' --target user', repo: ' --scope repo' };

export function kindOf(target: MemoryTarget, scope: MemoryScope = 'global'): StoreKind {
  return target === 'user' ? 'user' : scope === 'repo' ? 'repo' : 'memory';
}

/** The rule line around the header, as the seed renders it (46 × U+2550). */
const RULE = '═'.repeat(46);

/**
 * A block is never longer than this many characters, however large a hand-edited file grew:
 * twice the budget, at least 4,000 (the seed's render-side cap), cut head 70% / tail 20%.
 */
export function renderCap(limit: number): number {
  return Math.max(limit * 2, 4000);
}

/** The one-line notice that stands in for a blocked entry. */
export function blockedEntryNotice(kind: StoreKind, ids: string[]): string {
  return (
    `[BLOCKED: ${NAME_OF[kind]} entry contained threat pattern(s): ${ids.join(', ')}. ` +
    `Removed from the system prompt; the file keeps it — delete it with hermesd memory remove${FLAGS_OF[kind]}.]`
  );
}

/** Entries as the model may see them: any entry failing the strict scan replaced by its notice. */
export function sanitizeEntries(kind: StoreKind, entries: readonly string[]): string[] {
  return entries.map((entry) => {
    const hits = scanText(entry, 'memory');
    return hits.length ? blockedEntryNotice(kind, [...new Set(hits.map((h) => h.id))]) : entry;
  });
}

/** `MEMORY [41% — 902/2,200 chars]`; the percentage is floored and capped at 100, as in the seed. */
export function usageHeader(kind: StoreKind, chars: number, limit: number): string {
  const pct = limit > 0 ? Math.min(100, Math.floor((chars / limit) * 100)) : 0;
  const over = chars > limit ? ' ⚠ OVER BUDGET' : '';
  return `${TITLE_OF[kind]} [${pct}% — ${formatCount(chars)}/${formatCount(limit)} chars${over}]`;
}

/**
 * The block for the system prompt, or '' for an empty store. Usage counts the real entries
 * (what the budget is checked against), even where the block shows a notice instead.
 */
export function renderBlock(kind: StoreKind, entries: readonly string[], limit: number): string {
  if (entries.length === 0) return '';
  const chars = usageOf(entries);
  let body = sanitizeEntries(kind, entries).join(ENTRY_SEPARATOR);
  const cap = renderCap(limit);
  const bodyChars = charCount(body);
  if (bodyChars > cap) {
    const points = [...body];
    const head = Math.floor(cap * 0.7);
    const tail = Math.floor(cap * 0.2);
    body =
      points.slice(0, head).join('') +
      `\n\n[... ${formatCount(bodyChars - head - tail)} chars truncated — memory over budget (${formatCount(chars)}/${formatCount(limit)}); consolidate with the memory tool's remove/replace ...]\n\n` +
      points.slice(points.length - tail).join('');
  }
  return `${RULE}\n${usageHeader(kind, chars, limit)}\n${RULE}\n${body}`;
}
