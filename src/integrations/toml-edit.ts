/**
 * hermesd's part of a TOML config (`.codex/config.toml`): one marked block appended at the
 * end of the file, which TOML allows for new tables and array-of-tables entries. Nothing
 * before it changes. Removal takes the block out again, found by its exact text or, after
 * the user edited inside it, by its marker lines. `smol-toml` parses before and after, so a
 * merge that would change or break the user's document is refused instead of written.
 */
import { parse } from 'smol-toml';
import { ConfigError } from '../errors/index.js';

export const TOML_BEGIN = '# >>> hermesd (added by `hermesd init --agents`; `hermesd init --uninstall` removes it) >>>';
export const TOML_END = '# <<< hermesd <<<';
/** The block at the top, for keys TOML takes only before the first table (Codex's `default_permissions`). */
export const TOML_TOP_BEGIN = '# >>> hermesd, top-level keys (added by `hermesd init --agents`; `hermesd init --uninstall` removes it) >>>';
export const TOML_TOP_END = '# <<< hermesd, top-level keys <<<';

export function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}. Fix it, then run hermesd init --agents again.`);
  }
}

/** A TOML basic string (JSON's escapes are TOML's). */
export const tomlString = (s: string): string => JSON.stringify(s);
export const tomlArray = (xs: readonly string[]): string => `[${xs.map(tomlString).join(', ')}]`;
/** A bare key when it can be one, else quoted. */
export const tomlKey = (k: string): string => (/^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k));

/** The block as appended: a blank line before it (a newline first when the file does not end with one). */
export function withBlock(text: string, body: string): { text: string; inserted: string } {
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  const block = [TOML_BEGIN, ...body.split('\n').filter((l, i, a) => !(i === a.length - 1 && l === '')), TOML_END].join(eol) + eol;
  const lead = text === '' ? '' : (text.endsWith('\n') ? '' : eol) + eol;
  return { text: text + lead + block, inserted: lead + block };
}

/** The text without hermesd's block: the exact text appended, or (edited since) everything from the first marker to the second. */
export function withoutBlock(text: string, inserted: string | undefined): string | undefined {
  if (inserted && text.includes(inserted)) {
    const at = text.lastIndexOf(inserted);
    return text.slice(0, at) + text.slice(at + inserted.length);
  }
  const begin = text.indexOf(TOML_BEGIN);
  if (begin < 0) return undefined;
  const endAt = text.indexOf(TOML_END, begin);
  if (endAt < 0) return undefined;
  let end = endAt + TOML_END.length;
  if (text[end] === '\r') end++;
  if (text[end] === '\n') end++;
  // The blank line hermesd put before its block goes too.
  let start = begin;
  const before = text.slice(0, start);
  const m = /(\r?\n)(\r?\n)$/.exec(before);
  if (m) start -= m[2]!.length;
  return text.slice(0, start) + text.slice(end);
}

/** Appends `body` (TOML) in a marked block, checking that the user's document is unchanged and the result parses. */
export function appendBlock(text: string, body: string, file: string): { text: string; inserted: string } {
  const before = parseToml(text, file);
  const r = withBlock(text, body);
  let after: Record<string, unknown>;
  try {
    after = parse(r.text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`hermesd's entries cannot be added to ${file} as a new table (${(err as Error).message.split('\n')[0]}); add them by hand (docs/agents.md shows them).`);
  }
  if (!userDataKept(before, after)) throw new ConfigError(`adding hermesd's entries to ${file} would change settings of yours; add them by hand (docs/agents.md shows them).`);
  return r;
}

/** Every value of `before` is in `after` unchanged (arrays may have grown at the end, tables gained keys). */
export function userDataKept(before: unknown, after: unknown): boolean {
  if (Array.isArray(before)) return Array.isArray(after) && after.length >= before.length && before.every((v, i) => userDataKept(v, after[i]));
  if (before && typeof before === 'object' && !(before instanceof Date)) {
    if (!after || typeof after !== 'object' || Array.isArray(after)) return false;
    return Object.entries(before).every(([k, v]) => k in after && userDataKept(v, (after as Record<string, unknown>)[k]));
  }
  if (before instanceof Date) return after instanceof Date && before.getTime() === after.getTime();
  return Object.is(before, after) || (typeof before === 'number' && before === after);
}

/** The block as put first in the file: a blank line after it when the file goes on. */
export function withTopBlock(text: string, body: string): { text: string; inserted: string } {
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  const block = [TOML_TOP_BEGIN, ...body.split('\n').filter((l, i, a) => !(i === a.length - 1 && l === '')), TOML_TOP_END].join(eol) + eol;
  const inserted = text === '' ? block : block + eol;
  return { text: inserted + text, inserted };
}

/** The text without hermesd's top block: the exact text put first, or (edited since) everything from its first marker to its second. */
export function withoutTopBlock(text: string, inserted: string | undefined): string | undefined {
  if (inserted && text.includes(inserted)) {
    const at = text.indexOf(inserted);
    return text.slice(0, at) + text.slice(at + inserted.length);
  }
  const begin = text.indexOf(TOML_TOP_BEGIN);
  if (begin < 0) return undefined;
  const endAt = text.indexOf(TOML_TOP_END, begin);
  if (endAt < 0) return undefined;
  let end = endAt + TOML_TOP_END.length;
  for (let i = 0; i < 2; i++) {
    // The marker's line end, then the blank line hermesd put after its block.
    if (text[end] === '\r') end++;
    if (text[end] === '\n') end++;
  }
  return text.slice(0, begin) + text.slice(end);
}

/** Puts `body` (top-level keys) first in a marked block, checking that the user's document is unchanged and the result parses. */
export function prependBlock(text: string, body: string, file: string): { text: string; inserted: string } {
  const before = parseToml(text, file);
  const r = withTopBlock(text, body);
  let after: Record<string, unknown>;
  try {
    after = parse(r.text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`hermesd's top-level keys cannot be added to ${file} (${(err as Error).message.split('\n')[0]}); add them by hand (docs/agents.md shows them).`);
  }
  if (!userDataKept(before, after)) throw new ConfigError(`adding hermesd's top-level keys to ${file} would change settings of yours; add them by hand (docs/agents.md shows them).`);
  return r;
}
