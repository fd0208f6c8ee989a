/**
 * The daemon's parse cache of its config files (load.ts's ParseCache): each file's text as last
 * parsed and what it parsed to, in one JSON file under `$HERMES_HOME/projects/<id>/` (the user's
 * own folder, as private as the user config it may copy from; never in the repository or its git
 * dir). A cold daemon whose files are unchanged judges without loading the YAML parser.
 *
 * An entry answers only for the exact text it was made from, and only under the hermesd version
 * that made it (another version may parse differently); anything else in the file — another
 * version, a torn or hand-edited file, an entry of the wrong shape — is a miss, and the text is
 * parsed. A cache that cannot be written is left as it is: the next start parses again.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ParseCache } from './load.js';
import { writeRuntimeFileSync } from '../storage/atomic.js';

type Entry = { text: string; raw: Record<string, unknown> };
type Stored = { version: string; files: Record<string, Entry> };

/** Whether `v` comes back from JSON as it went in (YAML may give Infinity, NaN, or a tag's objects). */
function jsonSafe(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(jsonSafe);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v as object).every(jsonSafe);
  return false;
}

function isEntry(v: unknown): v is Entry {
  if (!v || typeof v !== 'object') return false;
  const e = v as Partial<Entry>;
  return typeof e.text === 'string' && !!e.raw && typeof e.raw === 'object' && !Array.isArray(e.raw);
}

/** What `path` holds for `version`, as stored; empty when it holds nothing usable. */
function readStored(path: string, version: string): Record<string, Entry> {
  try {
    const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Stored>;
    if (stored.version !== version || !stored.files || typeof stored.files !== 'object') return {};
    return Object.fromEntries(Object.entries(stored.files).filter(([, e]) => isEntry(e)));
  } catch {
    return {};
  }
}

/** The parse cache kept in `path` for this hermesd `version`; `onWriteError` hears once why it could not be saved. */
export function fileParseCache(path: string, version: string, onWriteError: (err: unknown) => void = () => undefined): ParseCache & { covers(texts: Array<{ file: string; text: string | undefined }>): boolean } {
  let files: Record<string, Entry> | undefined;
  let told = false;
  const stored = () => (files ??= readStored(path, version));
  return {
    get(file, text) {
      const e = stored()[file];
      // A copy: the loader's callers may change what they get.
      return e && e.text === text ? (structuredClone(e.raw) as Record<string, unknown>) : undefined;
    },
    set(file, text, raw) {
      if (!jsonSafe(raw)) return;
      const all = stored();
      all[file] = { text, raw: structuredClone(raw) };
      try {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        writeRuntimeFileSync(path, JSON.stringify({ version, files: all } satisfies Stored) + '\n');
      } catch (err) {
        if (!told) onWriteError(err);
        told = true;
      }
    },
    /** Whether every file's text (undefined: no file) is answered without a parse. */
    covers(texts) {
      return texts.every(({ file, text }) => text === undefined || stored()[file]?.text === text);
    },
  };
}
