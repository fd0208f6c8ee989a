/**
 * The daemon's parse cache of its config files (load.ts's ParseCache): each file's text as last
 * parsed and what it parsed to, in one JSON file under `$HERMES_HOME/projects/<id>/` (the user's
 * own folder, as private as the user config it may copy from; never in the repository or its git
 * dir). A cold daemon whose files are unchanged judges without loading the YAML parser.
 *
 * An entry answers only for the exact text it was made from, and only under the hermesd version
 * that made it (another version may parse differently); anything else in the file — another
 * version, a torn or hand-edited file, an entry of the wrong shape — is a miss, and the text is
 * parsed. What a load adds is written once, by `flush()` after it. A cache that cannot be written
 * is left as it is: the next start parses again.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ParseCache } from './load.js';
import type { HermesConfig } from './schema.js';
import { writeRuntimeFileSync } from '../storage/atomic.js';

type Entry = { text: string; raw: Record<string, unknown> };
/** `valid`: the effective config by the files' texts it was validated from (load.ts's key). */
type Stored = { version: string; files: Record<string, Entry>; valid: Record<string, HermesConfig> };

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

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** What `path` holds for `version`, as stored; empty when it holds nothing usable. */
function readStored(path: string, version: string): Omit<Stored, 'version'> {
  try {
    const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Stored>;
    if (stored.version !== version || !isObject(stored.files)) return { files: {}, valid: {} };
    return {
      files: Object.fromEntries(Object.entries(stored.files).filter(([, e]) => isEntry(e))),
      valid: isObject(stored.valid) ? (Object.fromEntries(Object.entries(stored.valid).filter(([, c]) => isObject(c))) as Record<string, HermesConfig>) : {},
    };
  } catch {
    return { files: {}, valid: {} };
  }
}

export type FileParseCache = ParseCache & {
  /** Whether every file's text (undefined: no file) is answered without a parse. */
  covers(texts: Array<{ file: string; text: string | undefined }>): boolean;
  /** Writes what was added since the last flush, if anything. */
  flush(): void;
};

/** The parse cache kept in `path` for this hermesd `version`; `onWriteError` hears once why it could not be saved. */
export function fileParseCache(path: string, version: string, onWriteError: (err: unknown) => void = () => undefined): FileParseCache {
  let kept: Omit<Stored, 'version'> | undefined;
  let told = false;
  let dirty = false;
  const stored = () => (kept ??= readStored(path, version));
  const flush = () => {
    if (!dirty) return;
    dirty = false;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeRuntimeFileSync(path, JSON.stringify({ version, ...stored() } satisfies Stored) + '\n');
    } catch (err) {
      if (!told) onWriteError(err);
      told = true;
    }
  };
  return {
    get(file, text) {
      const e = stored().files[file];
      // Copies, in and out: the loader's callers may change what they get.
      return e && e.text === text ? (structuredClone(e.raw) as Record<string, unknown>) : undefined;
    },
    set(file, text, raw) {
      if (!jsonSafe(raw)) return;
      stored().files[file] = { text, raw: structuredClone(raw) };
      dirty = true;
    },
    getValid(key) {
      const c = stored().valid[key];
      return c ? structuredClone(c) : undefined;
    },
    setValid(key, config) {
      if (!jsonSafe(config)) return;
      // Only the files' current texts are worth keeping: an edited file's old validation goes.
      const current = new Set(Object.entries(stored().files).map(([file, e]) => JSON.stringify([file, e.text])));
      const valid = stored().valid;
      for (const k of Object.keys(valid)) {
        const pairs = JSON.parse(k) as Array<[string, string]>;
        if (!pairs.every((p) => current.has(JSON.stringify(p)))) delete valid[k];
      }
      valid[key] = structuredClone(config);
      dirty = true;
    },
    covers(texts) {
      return texts.every(({ file, text }) => text === undefined || stored().files[file]?.text === text);
    },
    flush,
  };
}
