/**
 * The on-disk format of a memory store, as pure functions: a file is a list of entries
 * joined by a line holding only `§`. A `§` anywhere else is ordinary content.
 */

/** The entry separator of Hermes' MEMORY.md / USER.md (seed 004: ENTRY_DELIMITER). */
export const ENTRY_SEPARATOR = '\n§\n';

const BOM = '\uFEFF';

/** Drops a leading byte-order mark: editors on some systems add one; it is not content. */
export function stripBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/**
 * File bytes → text. `validUtf8` is false when the bytes are not UTF-8: the text then holds
 * U+FFFD replacements, and rewriting the file from it would change bytes the user wrote.
 */
export function decodeFile(bytes: Uint8Array): { text: string; validUtf8: boolean } {
  try {
    return { text: stripBom(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)), validUtf8: true };
  } catch {
    return { text: stripBom(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)), validUtf8: false };
  }
}

/** Keeps the first occurrence of each entry, in order. */
export function dedupe(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

/**
 * File text → entries: BOM stripped, split on the separator, each entry trimmed, empty
 * entries and duplicates dropped.
 */
export function parseEntries(raw: string): string[] {
  const text = stripBom(raw);
  if (!text.trim()) return [];
  return dedupe(
    text
      .split(ENTRY_SEPARATOR)
      .map((e) => e.trim())
      .filter((e) => e.length > 0),
  );
}

/** Entries → file text (no trailing newline, no BOM: exactly what the seed writes). */
export function serializeEntries(entries: readonly string[]): string {
  return entries.join(ENTRY_SEPARATOR);
}

/**
 * Whether the file text is exactly what this module would have written for its own
 * entries. Precisely: after dropping one leading BOM and any trailing newlines (an editor
 * adding a final newline is harmless), the text must equal serializeEntries(parseEntries(text)),
 * and no parsed entry may hold a separator-like line (see containsSeparatorLine). A file of
 * only whitespace round-trips (there is nothing to lose). It fails for whitespace around an
 * entry, empty or duplicate entries, CRLF separators, a `§` line with spaces — any shape
 * where rewriting the file from its parsed entries could change or merge what the user wrote.
 */
export function roundTrips(raw: string): boolean {
  const text = stripBom(raw);
  if (!text.trim()) return true;
  const entries = parseEntries(text);
  return serializeEntries(entries) === text.replace(/\n+$/, '') && !entries.some(containsSeparatorLine);
}

/**
 * Characters as the seed counts them (Python `len`: code points, so an emoji is one
 * character, not two UTF-16 units).
 */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The usage of a store: the length of its entries joined by the separator. */
export function usageOf(entries: readonly string[]): number {
  return entries.length === 0 ? 0 : charCount(serializeEntries(entries));
}

/**
 * Whether `content` holds a line that is only `§` (give or take spaces or a CR): written
 * as is it would split into two entries on the next read, and inside a parsed entry it means
 * the file's separators were mangled (e.g. CRLF line ends), so the "entry" is several.
 */
export function containsSeparatorLine(content: string): boolean {
  return /(^|\n)[ \t\r]*§[ \t\r]*(\n|$)/.test(content);
}

/** One-line preview of an entry for "be more specific" answers. */
export function preview(entry: string, width = 80): string {
  const flat = entry.replace(/\s+/g, ' ');
  return charCount(flat) > width ? [...flat].slice(0, width).join('') + '...' : flat;
}

/**
 * 2200 → "2,200", as the seed's `{:,}` prints it. Grouped here, not by `toLocaleString`: a
 * process's first call of that loads ICU's locale data, most of a `hermesd memory list`.
 */
export function formatCount(n: number): string {
  const [whole, fraction] = String(Math.abs(n)).split('.');
  return (n < 0 ? '-' : '') + whole!.replace(/\B(?=(\d{3})+$)/g, ',') + (fraction ? `.${fraction}` : '');
}
