/**
 * MemoryStore: the two bounded files of built-in memory (seed 004), MEMORY.md for
 * environment and agent facts, USER.md for the user's preferences. Disk is the live state:
 * every read goes to the file, every mutation takes the cross-process lock, re-reads the
 * file under it, and replaces it atomically — several daemons share one $HERMES_HOME.
 *
 * Operations answer with a result object, never by throwing, mirroring the seed's tool
 * results: the caller (API, CLI, the model's memory tool) decides how a refusal surfaces.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
// The default budgets are the config's defaults (seed 004: memory_char_limit=2200, user_char_limit=1375).
import { MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT } from '../config/schema.js';
import { MemoryRefused } from '../errors/index.js';
import { redactSecrets } from '../security/redact.js';
import { REMEDY, scanText } from '../security/scan.js';
import { isTempOf, writeFileAtomicSync } from '../storage/atomic.js';
import { withLockSync } from '../storage/lock.js';
import {
  charCount,
  containsSeparatorLine,
  decodeFile,
  dedupe,
  ENTRY_SEPARATOR,
  formatCount,
  parseEntries,
  preview,
  roundTrips,
  serializeEntries,
  usageOf,
} from './entries.js';
import { FILE_OF, kindOf, NAME_OF, renderBlock, sanitizeEntries, type MemoryScope, type MemoryTarget, type StoreKind } from './snapshot.js';

export type { MemoryScope, MemoryTarget } from './snapshot.js';

/** How long a mutation waits for another process's lock before giving up; critical sections take milliseconds. */
export const MEMORY_LOCK_TIMEOUT_MS = 10_000;

export type MemoryLimits = { memoryCharLimit: number; userCharLimit: number };
export const DEFAULT_MEMORY_LIMITS: MemoryLimits = { memoryCharLimit: MEMORY_CHAR_LIMIT, userCharLimit: USER_CHAR_LIMIT };

export type MemoryUsage = { chars: number; limit: number };

/** Why a write was refused; the API sends it as `details.reason`. */
export type MemoryRefusal = 'empty' | 'invalid' | 'threat' | 'over-budget' | 'no-match' | 'ambiguous' | 'drift' | 'would-empty';

/**
 * Options of a batch. `allowEmpty`: the caller means to leave the store with no entries (the
 * API's allow_empty); without it a batch that would empty a non-empty store is refused, because
 * that is how a consolidation pass silently wipes a profile (the reference's #103419). A single
 * `remove` names the one entry it deletes, so it needs no flag, even for the last entry.
 */
export type MemoryWriteOptions = { allowEmpty?: boolean };

/** One operation; loose on purpose (tool calls and API bodies arrive with fields missing), checked by the store. */
export type MemoryOp = { action: string; content?: string | null; old_text?: string | null };

/**
 * A write's (or a listing's) result. A refused write throws MemoryRefused instead; its details
 * are a MemoryRefusalDetails (the store as it is, so the caller can consolidate and retry).
 */
export type MemoryResult = {
  success: true;
  target: MemoryTarget;
  /** Which MEMORY.md: the global one or this repository's. */
  scope: MemoryScope;
  /** On success: what happened ("Entry added.", "Entry already exists (no duplicate added)."). */
  message?: string;
  /** On refusal: the reason, a sentence the caller can act on. */
  error?: string;
  reason?: MemoryRefusal;
  /** The store's entries after the operation (on refusal: unchanged, as on disk). */
  entries: string[];
  usage: MemoryUsage;
  /** Previews of the entries an ambiguous old_text matched. */
  matches?: string[];
  /** Ids of the threat patterns that refused the content. */
  threats?: string[];
  /** Where the hand-edited file was copied when a replace/remove refused to rewrite it. */
  backup?: string;
};

/** What a MemoryRefused carries as `details`. */
export type MemoryRefusalDetails = Pick<MemoryResult, 'target' | 'scope' | 'entries' | 'usage' | 'matches' | 'threats' | 'backup'> & { reason: MemoryRefusal };

const refusal = (error: string, details: MemoryRefusalDetails) => new MemoryRefused(error, details);

type Outcome = { refuse: { reason: MemoryRefusal; error: string; matches?: string[] } } | { entries: string[]; message: string };

const refuse = (reason: MemoryRefusal, error: string, matches?: string[]): Outcome => ({ refuse: { reason, error, matches } });

/** Returns the refusal message for content that fails the strict scan, naming the pattern. */
function threatRefusal(content: string): { error: string; threats: string[] } | undefined {
  // hermesd guard: a secret-shaped value never lands in a store shown in every prompt.
  const secrets = redactSecrets(content).redactions;
  if (secrets.length > 0) {
    const kinds = [...new Set(secrets.map((r) => r.kind))];
    return {
      error: `Blocked: content contains a secret-shaped value (${kinds.join(', ')}). Memory is stored in plain text and shown in every prompt; keep secrets out of it.`,
      threats: kinds.map((k) => `secret:${k}`),
    };
  }
  const hits = scanText(content, 'memory');
  if (hits.length === 0) return undefined;
  const first = hits[0]!;
  const error =
    first.category === 'invisible-unicode'
      ? `Blocked: content ${first.description} (possible injection); ${REMEDY[first.category]}.`
      : `Blocked: content matches threat pattern '${first.id}' (${first.description}). ` +
        `Memory is shown in the system prompt and must not contain injection or exfiltration payloads; ${REMEDY[first.category]}.`;
  return { error, threats: [...new Set(hits.map((h) => h.id))] };
}

/** Whether a new usage is refused: over the limit, unless it shrinks a store a hand edit already put over it. */
function overBudget(next: number, current: number, limit: number): boolean {
  return next > limit && next > current;
}

/** Finds the single entry old_text names: an exact whole-entry match wins, else a unique substring match. */
function locate(entries: readonly string[], oldText: string): { index: number } | { none: true } | { several: string[] } {
  const exact = entries.indexOf(oldText);
  if (exact >= 0) return { index: exact };
  const hits = entries.flatMap((e, i) => (e.includes(oldText) ? [i] : []));
  if (hits.length === 0) return { none: true };
  if (hits.length > 1) return { several: hits.map((i) => preview(entries[i]!)) };
  return { index: hits[0]! };
}

/** The refusal of a batch that would leave a non-empty store with no entries, unless asked for. */
function emptiesStore(before: readonly string[], after: readonly string[], kind: StoreKind, opts: MemoryWriteOptions): Outcome | undefined {
  if (after.length > 0 || before.length === 0 || opts.allowEmpty) return undefined;
  return refuse(
    'would-empty',
    `This batch would remove every entry of ${NAME_OF[kind]}, leaving it empty. A batch empties a store only on purpose: ` +
      'send it again with "allow_empty": true, or remove the entries one at a time (a single remove of the last entry is allowed). ' +
      'To change what an entry says, use replace instead.',
  );
}

function checkContent(content: string, what = 'Content'): Outcome | undefined {
  if (!content) return refuse('empty', `${what} cannot be empty.`);
  if (containsSeparatorLine(content)) {
    return refuse('invalid', `${what} cannot contain a line holding only "§": that line separates entries in the file.`);
  }
  return undefined;
}

/** Why a file on disk may not be rewritten from its parsed entries. */
type Drift = 'encoding' | 'shape' | { entry: string };

/**
 * Bytes that are not UTF-8 would be lost by any rewrite. A replace/remove rewrites the whole
 * file, so it also needs the file to round-trip through the parser within the store's budget:
 * an entry longer than the whole budget is not one the store wrote, but hand-appended text
 * that lacks its "§" line (the reference implementation's drift guard, #26045).
 */
function driftOf(file: { text: string; validUtf8: boolean }, entries: readonly string[], limit: number, rewrites: boolean): Drift | undefined {
  if (!file.validUtf8) return 'encoding';
  if (!rewrites) return undefined;
  if (!roundTrips(file.text)) return 'shape';
  const long = entries.find((e) => charCount(e) > limit);
  return long === undefined ? undefined : { entry: long };
}

export class MemoryStore {
  private readonly limitsOf: () => MemoryLimits;

  /**
   * @param dir the memories folder (`$HERMES_HOME/memories`); created 0700 on the first write.
   * @param limits budgets in characters, or a function read at every operation (config reloads).
   */
  constructor(
    readonly dir: string,
    limits: Partial<MemoryLimits> | (() => MemoryLimits) = DEFAULT_MEMORY_LIMITS,
    /** `repo`: the store of one repository ($HERMES_HOME/projects/<id>/), labelled as such in its block and messages; it has no USER.md. */
    readonly scope: MemoryScope = 'global',
  ) {
    this.limitsOf = typeof limits === 'function' ? limits : () => ({ ...DEFAULT_MEMORY_LIMITS, ...limits });
  }

  private kind(target: MemoryTarget): StoreKind {
    return kindOf(target, this.scope);
  }

  pathOf(target: MemoryTarget): string {
    return join(this.dir, FILE_OF[target]);
  }

  limitOf(target: MemoryTarget): number {
    const l = this.limitsOf();
    return target === 'user' ? l.userCharLimit : l.memoryCharLimit;
  }

  /** The live entries, read from disk now (a reader needs no lock: files are replaced by rename). */
  entries(target: MemoryTarget): string[] {
    return parseEntries(this.read(target)?.text ?? '');
  }

  list(target: MemoryTarget): MemoryResult {
    const entries = this.entries(target);
    return { success: true, target, scope: this.scope, entries, usage: { chars: usageOf(entries), limit: this.limitOf(target) } };
  }

  /** The system-prompt block of one store, rendered from disk now (`''` when it is empty). */
  block(target: MemoryTarget): string {
    return renderBlock(this.kind(target), this.entries(target), this.limitOf(target));
  }

  /**
   * The system-prompt blocks, rendered from disk at call time: `''` for an empty store. They
   * are plain strings: a session that keeps them is unaffected by later writes (the seed's
   * frozen snapshot); the next session takes a new one.
   */
  snapshot(): { memory: string; user: string } {
    return {
      memory: this.block('memory'),
      user: this.block('user'),
    };
  }

  add(target: MemoryTarget, content: string): MemoryResult {
    const text = (content ?? '').trim();
    const bad = checkContent(text);
    if (bad) throw this.refusedNow(target, bad);
    const threat = threatRefusal(text);
    if (threat) throw this.refusedNow(target, refuse('threat', threat.error), threat.threats);
    // Appending rewrites no entry, so a hand-edited file does not stop an add (as in the seed).
    return this.mutate(target, false, (entries, limit) => {
      if (entries.includes(text)) return { entries, message: 'Entry already exists (no duplicate added).' };
      const next = [...entries, text];
      const current = usageOf(entries);
      if (overBudget(usageOf(next), current, limit)) {
        return refuse(
          'over-budget',
          `Memory at ${formatCount(current)}/${formatCount(limit)} chars. ` +
            `Adding this entry (${charCount(text)} chars) would exceed the limit. Replace or remove existing entries first.`,
        );
      }
      return { entries: next, message: 'Entry added.' };
    });
  }

  replace(target: MemoryTarget, oldText: string, content: string): MemoryResult {
    const old = (oldText ?? '').trim();
    const text = (content ?? '').trim();
    if (!old) throw this.refusedNow(target, refuse('empty', 'old_text cannot be empty.'));
    if (!text) throw this.refusedNow(target, refuse('empty', "New content cannot be empty. Use 'remove' to delete an entry."));
    const bad = checkContent(text);
    if (bad) throw this.refusedNow(target, bad);
    const threat = threatRefusal(text);
    if (threat) throw this.refusedNow(target, refuse('threat', threat.error), threat.threats);
    return this.mutate(target, true, (entries, limit) => {
      const found = locate(entries, old);
      if ('none' in found)
        return refuse('no-match', `No entry matched '${old}'. Check the current entries and retry with the exact text of the entry you want to replace.`);
      if ('several' in found) return refuse('ambiguous', `Multiple entries matched '${old}'. Be more specific.`, found.several);
      const next = dedupe(entries.map((e, i) => (i === found.index ? text : e)));
      const current = usageOf(entries);
      const total = usageOf(next);
      if (overBudget(total, current, limit)) {
        return refuse(
          'over-budget',
          `Replacement would put memory at ${formatCount(total)}/${formatCount(limit)} chars. ` +
            `Shorten the new content, or remove other entries to make room, then retry.`,
        );
      }
      return { entries: next, message: 'Entry replaced.' };
    });
  }

  /** Removes the one entry `oldText` names, the last one included: the caller named it. */
  remove(target: MemoryTarget, oldText: string): MemoryResult {
    const old = (oldText ?? '').trim();
    if (!old) throw this.refusedNow(target, refuse('empty', 'old_text cannot be empty.'));
    return this.mutate(target, true, (entries) => {
      const found = locate(entries, old);
      if ('none' in found)
        return refuse('no-match', `No entry matched '${old}'. Check the current entries and retry with the exact text of the entry you want to remove.`);
      if ('several' in found) return refuse('ambiguous', `Multiple entries matched '${old}'. Be more specific.`, found.several);
      return { entries: entries.filter((_, i) => i !== found.index), message: 'Entry removed.' };
    });
  }

  /** One write by its action: what the memory tool, POST /v1/memory and `hermesd memory` without a daemon each run. */
  write(target: MemoryTarget, op: { action: 'add' | 'replace' | 'remove'; content?: string | null; old_text?: string | null }): MemoryResult {
    if (op.action === 'add') return this.add(target, op.content ?? '');
    if (op.action === 'replace') return this.replace(target, op.old_text ?? '', op.content ?? '');
    return this.remove(target, op.old_text ?? '');
  }

  /**
   * Applies a batch of operations all-or-nothing: each is checked against the state the
   * earlier ones left, the budget only against the final state (so one call can free room and
   * add), and nothing is written unless every operation succeeds.
   */
  apply(target: MemoryTarget, operations: readonly MemoryOp[], opts: MemoryWriteOptions = {}): MemoryResult {
    if (!Array.isArray(operations) || operations.length === 0) throw this.refusedNow(target, refuse('empty', 'The operations list is empty.'));
    const batch = (msg: string) => `${msg} No operations were applied (a batch is all-or-nothing).`;
    for (const [i, op] of operations.entries()) {
      const content = (op?.content ?? '').trim();
      if ((op?.action === 'add' || op?.action === 'replace') && content) {
        const threat = threatRefusal(content);
        if (threat) throw this.refusedNow(target, refuse('threat', batch(`Operation ${i + 1}: ${threat.error}`)), threat.threats);
      }
    }
    const rewrites = operations.some((op) => op?.action !== 'add');
    return this.mutate(target, rewrites, (entries, limit) => {
      let working = [...entries];
      for (const [i, op] of operations.entries()) {
        const action = op?.action;
        const content = (op?.content ?? '').trim();
        const old = (op?.old_text ?? '').trim();
        const pos = `Operation ${i + 1} (${action || 'unknown'})`;
        if (action === 'add' || action === 'replace') {
          const bad = checkContent(content, `${pos}: content`);
          if (bad && 'refuse' in bad) return refuse(bad.refuse.reason, batch(bad.refuse.error));
        }
        if (action === 'add') {
          if (!working.includes(content)) working.push(content);
        } else if (action === 'replace' || action === 'remove') {
          if (!old) return refuse('empty', batch(`${pos}: old_text is required.`));
          const found = locate(working, old);
          if ('none' in found) return refuse('no-match', batch(`${pos}: no entry matched '${old}'.`));
          if ('several' in found) return refuse('ambiguous', batch(`${pos}: '${old}' matched several entries. Be more specific.`), found.several);
          working = action === 'remove' ? working.filter((_, j) => j !== found.index) : dedupe(working.map((e, j) => (j === found.index ? content : e)));
        } else {
          return refuse('invalid', batch(`${pos}: unknown action. Use add, replace or remove.`));
        }
      }
      const emptied = emptiesStore(entries, working, this.kind(target), opts);
      if (emptied && 'refuse' in emptied) return refuse(emptied.refuse.reason, batch(emptied.refuse.error));
      const total = usageOf(working);
      if (overBudget(total, usageOf(entries), limit)) {
        return refuse(
          'over-budget',
          `After applying all ${operations.length} operations, memory would be at ${formatCount(total)}/${formatCount(limit)} chars, over the limit. ` +
            `Remove or shorten more entries in the same batch, then retry.`,
        );
      }
      return { entries: working, message: `Applied ${operations.length} operation(s).` };
    });
  }

  private read(target: MemoryTarget): { bytes: Buffer; text: string; validUtf8: boolean } | undefined {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.pathOf(target));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return { bytes, ...decodeFile(bytes) };
  }

  private usage(target: MemoryTarget, entries: readonly string[]): MemoryUsage {
    return { chars: usageOf(entries), limit: this.limitOf(target) };
  }

  /** A refusal decided before touching the lock (bad input): reports the store as it is now. */
  private refusedNow(target: MemoryTarget, outcome: Outcome, threats?: string[]): MemoryRefused {
    const entries = this.entries(target);
    const r = (outcome as { refuse: { reason: MemoryRefusal; error: string; matches?: string[] } }).refuse;
    return refusal(r.error, {
      target,
      scope: this.scope,
      reason: r.reason,
      ...(r.matches ? { matches: r.matches } : {}),
      ...(threats ? { threats } : {}),
      entries,
      usage: this.usage(target, entries),
    });
  }

  /**
   * The one write path: lock, re-read, optionally require a round-tripping file, compute the
   * next entries, check nothing, write atomically. `change` sees the entries on disk now.
   */
  private mutate(target: MemoryTarget, needsRoundTrip: boolean, change: (entries: string[], limit: number) => Outcome): MemoryResult {
    this.ensureDir();
    const path = this.pathOf(target);
    return withLockSync(
      `${path}.lock`,
      () => {
        const file = this.read(target);
        const entries = parseEntries(file?.text ?? '');
        const limit = this.limitOf(target);
        const drift = file ? driftOf(file, entries, limit, needsRoundTrip) : undefined;
        if (drift) throw this.refuseDrift(target, file!.bytes, drift, entries, limit);
        const outcome = change(entries, limit);
        if ('refuse' in outcome) {
          const { reason, error, matches } = outcome.refuse;
          throw refusal(error, { target, scope: this.scope, reason, ...(matches ? { matches } : {}), entries, usage: { chars: usageOf(entries), limit } });
        }
        const next = dedupe(outcome.entries);
        let text = serializeEntries(next);
        if (file && !needsRoundTrip && !roundTrips(file.text)) {
          // An add to a file this store did not write appends to its bytes instead of rewriting
          // them from the parsed entries, so whitespace and blank entries edited by hand stay.
          const appended = next.slice(entries.length);
          const raw = file.text.replace(/\n+$/, '');
          text = appended.length ? [raw, ...appended].join(ENTRY_SEPARATOR) : file.text;
          const reread = parseEntries(text);
          if (reread.length !== next.length || reread.some((e, i) => e !== next[i])) {
            throw this.refuseDrift(target, file.bytes, 'shape', entries, limit);
          }
        }
        // A no-op (duplicate add) leaves the file alone, whatever its shape.
        if (next.length !== entries.length || next.some((e, i) => e !== entries[i])) {
          this.removeStaleTemps(target);
          writeFileAtomicSync(path, text, 0o600);
        }
        return {
          success: true,
          target,
          scope: this.scope,
          message: outcome.message,
          entries: next,
          usage: { chars: usageOf(next), limit },
        } satisfies MemoryResult;
      },
      MEMORY_LOCK_TIMEOUT_MS,
    );
  }

  private refuseDrift(target: MemoryTarget, bytes: Buffer, drift: Drift, entries: string[], limit: number): MemoryRefused {
    const backup = this.backup(target, bytes);
    const name = NAME_OF[this.kind(target)];
    const how =
      `A copy was saved to ${backup}. Rewrite the file as a clean §-separated list of entries ` +
      `(a line holding only "§" between two facts, each entry under ${formatCount(limit)} characters; ` +
      `longer notes belong in a skill or a file of the repository), then retry. \`hermesd memory list\` shows how it reads now.`;
    let why: string;
    if (drift === 'encoding') why = 'its bytes are not UTF-8, so any rewrite would change them';
    else if (drift === 'shape') {
      why =
        'the file on disk is not in the shape the memory store writes (entries separated by a line holding only "§", ' +
        'no blank or duplicate entries), so rewriting it could lose what was edited by hand';
    } else {
      why =
        `one entry (${preview(drift.entry, 40)}) is ${formatCount(charCount(drift.entry))} characters, over the store's whole budget of ${formatCount(limit)}: ` +
        'text added by hand without a "§" line reads as part of one entry, and rewriting that entry would lose it';
    }
    return refusal(`Refusing to rewrite ${name}: ${why}. ${how}`, {
      target,
      scope: this.scope,
      reason: 'drift',
      backup,
      entries,
      usage: { chars: usageOf(entries), limit },
    });
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  /**
   * Copies a file that does not round-trip to `<file>.bak-<iso time>` (0600), reusing an
   * earlier backup with the same bytes so that retrying does not pile up copies.
   */
  private backup(target: MemoryTarget, bytes: Buffer): string {
    const name = FILE_OF[target];
    for (const f of readdirSync(this.dir)) {
      if (!f.startsWith(`${name}.bak-`)) continue;
      try {
        if (readFileSync(join(this.dir, f)).equals(bytes)) return join(this.dir, f);
      } catch {
        // unreadable or vanished: write a fresh one
      }
    }
    const path = join(this.dir, `${name}.bak-${new Date().toISOString().replace(/:/g, '-')}`);
    writeFileAtomicSync(path, bytes, 0o600);
    return path;
  }

  /**
   * Removes temp files a writer killed between write and rename left behind. Only the lock
   * holder writes `<file>.<n>` temps, so under the lock every one of them is stale.
   */
  private removeStaleTemps(target: MemoryTarget): void {
    for (const f of readdirSync(this.dir)) {
      if (!isTempOf(FILE_OF[target], f)) continue;
      try {
        unlinkSync(join(this.dir, f));
      } catch {
        // already gone
      }
    }
  }
}

/**
 * A result as the model should see it (the memory tool): on success the entries are left out,
 * as in the seed, so the model is not invited to "tidy up" again after a write that is done.
 */
export type ModelMemoryResult = Omit<MemoryResult, 'entries'> & { entryCount: number };

export function forModel(result: MemoryResult): ModelMemoryResult {
  const { entries, ...rest } = result;
  return { ...rest, entryCount: entries.length };
}

/**
 * A refusal as the model should see it, in the tool result's shape (`success: false`, the
 * error, the entries so it can consolidate): entries that fail the strict scan appear as their
 * [BLOCKED: …] notice, so a poisoned entry the snapshot hid cannot re-enter the conversation
 * through a refusal.
 */
export function refusalForModel(err: MemoryRefused): MemoryRefusalDetails & { success: false; error: string } {
  const d = err.details as MemoryRefusalDetails;
  return { success: false, error: err.message, ...d, entries: sanitizeEntries(kindOf(d.target, d.scope), d.entries) };
}
