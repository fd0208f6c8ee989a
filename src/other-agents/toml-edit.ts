/**
 * hermesd's part of a TOML config (`.codex/config.toml`): one marked block appended at the
 * end of the file, which TOML allows for new tables and array-of-tables entries. Nothing
 * before it changes. Removal takes the block out again, found by its exact text or, after
 * the user edited inside it, by its marker lines. `smol-toml` parses before and after, so a
 * merge that would change or break the user's document is refused instead of written.
 */
import { parse } from 'smol-toml';
import { ConfigError } from '../errors/index.js';
import { markedSpan } from '../text/marked.js';

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

const MAIN: Markers = [TOML_BEGIN, TOML_END];
const TOP: Markers = [TOML_TOP_BEGIN, TOML_TOP_END];
type Markers = [begin: string, end: string];

/** `body` between the two marker lines, in the file's line ends. */
function marked(text: string, [begin, end]: Markers, body: string): { eol: string; block: string } {
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  return { eol, block: [begin, ...body.split('\n').filter((l, i, a) => !(i === a.length - 1 && l === '')), end].join(eol) + eol };
}

/**
 * Where hermesd's block is: the exact text it put there (`inserted`, found where it put it), or
 * (edited since) from its first marker to the end of its second marker's line; undefined when
 * neither is there.
 */
function blockAt(text: string, inserted: string | undefined, [begin, end]: Markers, last: boolean): { from: number; to: number; exact: boolean } | undefined {
  if (inserted && text.includes(inserted)) {
    const at = last ? text.lastIndexOf(inserted) : text.indexOf(inserted);
    return { from: at, to: at + inserted.length, exact: true };
  }
  const span = markedSpan(text, begin, end);
  return span && { ...span, exact: false };
}

/** The block as appended: a blank line before it (a newline first when the file does not end with one). */
export function withBlock(text: string, body: string): { text: string; inserted: string } {
  const { eol, block } = marked(text, MAIN, body);
  const lead = text === '' ? '' : (text.endsWith('\n') ? '' : eol) + eol;
  return { text: text + lead + block, inserted: lead + block };
}

/** The text without hermesd's block: the exact text appended, or (edited since) everything from the first marker to the second. */
export function withoutBlock(text: string, inserted: string | undefined): string | undefined {
  const at = blockAt(text, inserted, MAIN, true);
  if (!at) return undefined;
  let start = at.from;
  // The blank line hermesd put before its block goes too.
  const m = at.exact ? null : /(\r?\n)(\r?\n)$/.exec(text.slice(0, start));
  if (m) start -= m[2]!.length;
  return text.slice(0, start) + text.slice(at.to);
}

/** Appends `body` (TOML) in a marked block, checking that the user's document is unchanged and the result parses. */
export function appendBlock(text: string, body: string, file: string): { text: string; inserted: string } {
  return checked(text, withBlock(text, body), file, { what: 'entries', as: ' as a new table' });
}

/** `r`, the text with one of hermesd's blocks in it, if it parses and holds the user's document unchanged. */
function checked(text: string, r: { text: string; inserted: string }, file: string, o: { what: string; as: string }): { text: string; inserted: string } {
  const before = parseToml(text, file);
  let after: Record<string, unknown>;
  try {
    after = parse(r.text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(
      `hermesd's ${o.what} cannot be added to ${file}${o.as} (${(err as Error).message.split('\n')[0]}); add them by hand (docs/agents.md shows them).`,
    );
  }
  if (!userDataKept(before, after))
    throw new ConfigError(`adding hermesd's ${o.what} to ${file} would change settings of yours; add them by hand (docs/agents.md shows them).`);
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
  const { eol, block } = marked(text, TOP, body);
  const inserted = text === '' ? block : block + eol;
  return { text: inserted + text, inserted };
}

/** The text without hermesd's top block: the exact text put first, or (edited since) everything from its first marker to its second. */
export function withoutTopBlock(text: string, inserted: string | undefined): string | undefined {
  const at = blockAt(text, inserted, TOP, false);
  if (!at) return undefined;
  let end = at.to;
  // The blank line hermesd put after its block goes too.
  if (!at.exact && text[end] === '\r') end++;
  if (!at.exact && text[end] === '\n') end++;
  return text.slice(0, at.from) + text.slice(end);
}

/** Puts `body` (top-level keys) first in a marked block, checking that the user's document is unchanged and the result parses. */
export function prependBlock(text: string, body: string, file: string): { text: string; inserted: string } {
  return checked(text, withTopBlock(text, body), file, { what: 'top-level keys', as: '' });
}
