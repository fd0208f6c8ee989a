/**
 * Reads the user and repository config files, validates each against the one schema
 * (errors name the file, line and key), merges them (repository over user), applies the
 * environment (over both), and records where every effective value came from.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document, LineCounter, Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { configSchema, type HermesConfig } from './schema.js';
import { repoConfigPath, userConfigPath } from '../paths/index.js';

export type ConfigScope = 'user' | 'repository';
export type ConfigFile = { scope: ConfigScope; file: string; exists: boolean };
/** Where an effective value came from. */
export type Origin = 'default' | ConfigScope | `env:${string}`;
export type LoadedConfig = {
  config: HermesConfig;
  files: ConfigFile[];
  /** Dotted key path of each effective value (rules and checks by id: `rules.no-aws-keys`) → origin. */
  origins: Record<string, Origin>;
};
export type ConfigIssue = { file: string; line: number; column: number; key: string; message: string };

/** Environment variables that override config keys (DESIGN.md §2). */
export const ENV_OVERRIDES = [
  { env: 'OPENAI_BASE_URL', key: ['model', 'baseUrl'] },
  { env: 'OPENAI_API_KEY', key: ['model', 'apiKey'] },
  { env: 'HERMESD_MODEL', key: ['model', 'name'] },
  { env: 'HERMESD_BWRAP', key: ['guard', 'sandbox', 'bwrap'] },
] as const;

/** Lists merged by `id` (user entries first, a repository entry replaces the user's of the same id). */
const LISTS_BY_ID = ['rules', 'checks'] as const;
/** More issues than this in one file are summarised: the first ones are what to fix. */
const MAX_REPORTED_ISSUES = 20;

/**
 * What a config file's text parsed to, and what the files' texts were validated to, kept by the
 * daemon (parse-cache.ts): a file whose text is as last parsed is not parsed again, and its YAML
 * parser need not load; files whose texts were validated together before are not validated
 * again, and the schemas need not be built. Each answers only for those exact texts.
 */
export type ParseCache = {
  get(file: string, text: string): Record<string, unknown> | undefined;
  set(file: string, text: string, raw: Record<string, unknown>): void;
  /** The effective config the files' texts (`key`) were validated to, with no environment variable setting a key. */
  getValid(key: string): HermesConfig | undefined;
  setValid(key: string, config: HermesConfig): void;
};

export type LoadOptions = { root?: string; home: string; env?: NodeJS.ProcessEnv; cache?: ParseCache };

let yamlModule: typeof Yaml | undefined;

/**
 * The YAML parser: the daemon imports it ahead (preloadYaml) unless each config file's text is in
 * its parse cache, so that a cold daemon's first verdict does not wait for it; loaded here, at
 * once, by whoever parses before that (the CLI, a daemon whose file changed meanwhile).
 */
function yaml(): typeof Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

/** Imports the YAML parser (in the daemon's bundle, its own chunk) for the parses to come. */
export async function preloadYaml(): Promise<void> {
  const loaded = await import('yaml');
  yamlModule ??= loaded;
}

/** The effective configuration; throws ConfigError naming file, line and key. */
export function loadConfig(opts: LoadOptions): HermesConfig {
  return loadConfigWithOrigins(opts).config;
}

export function loadConfigWithOrigins({ root, home, env = process.env, cache }: LoadOptions): LoadedConfig {
  const files: ConfigFile[] = [{ scope: 'user', file: userConfigPath(home), exists: false }];
  if (root) files.push({ scope: 'repository', file: repoConfigPath(root), exists: false });

  const layers: Array<{ source: ConfigFile; raw: Record<string, unknown>; parsed: ParsedFile }> = [];
  for (const source of files) {
    const parsed = readConfigFile(source.file, cache);
    if (!parsed) continue;
    source.exists = true;
    layers.push({ source, raw: parsed.raw, parsed });
  }

  let merged: Record<string, unknown> = {};
  for (const layer of layers) merged = mergeLayers(merged, layer.raw);

  const fromEnv = new Map<string, string>();
  for (const { env: name, key } of ENV_OVERRIDES) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setIn(merged, key, value);
    fromEnv.set(key.join('.'), name);
  }

  // The files' texts as validated before, when no environment variable sets a key (the cache
  // never holds the environment's values): the schemas are not even built.
  const key = cache && fromEnv.size === 0 ? JSON.stringify(layers.map((l) => [l.source.file, l.parsed.text])) : undefined;
  const known = key ? cache?.getValid(key) : undefined;
  let config = known;
  if (!config) {
    const valid = layers.map((l) => validateFile(l.parsed));
    // One file and no environment: the file's own validation is the result.
    const only = layers.length === 1 && fromEnv.size === 0 ? valid[0] : undefined;
    const result = only ? ({ success: true, data: only } as const) : configSchema().safeParse(merged);
    if (!result.success) {
      // Each file passed on its own, so what fails now came from the environment.
      const lines = result.error.issues.map((issue) => {
        const key = formatKey(issue.path);
        const name = fromEnv.get(issue.path.join('.'));
        return name ? `environment variable ${name} (sets ${key}): ${issue.message}` : `${key}: ${issue.message}`;
      });
      throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
    }
    config = result.data;
  }
  checkReferences(config, layers);
  if (key && !known) cache?.setValid(key, config);
  return { config, files, origins: originsOf(config, layers, fromEnv) };
}

/** A file's text and what it parsed to; `tree`, the YAML document (positions for errors), parsed when first needed. */
type ParsedFile = { file: string; text: string; raw: Record<string, unknown>; tree?: { doc: Document; lines: LineCounter } };

function readConfigFile(file: string, cache?: ParseCache): ParsedFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(`${file}: cannot read the config file (${code ?? (err as Error).message}).`);
  }
  const raw = cache?.get(file, text);
  if (raw) return { file, text, raw };
  const parsed = parseConfigText(file, text);
  cache?.set(file, text, parsed.raw);
  return parsed;
}

/** The YAML document of a parsed file, for the positions of its problems. */
function treeOf(parsed: ParsedFile): { doc: Document; lines: LineCounter } {
  if (!parsed.tree) {
    const lines = new (yaml().LineCounter)();
    parsed.tree = { doc: yaml().parseDocument(parsed.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true }), lines };
  }
  return parsed.tree;
}

/**
 * A repository config as committed (the text of `<commit>:.hermes/config.yaml`), alone: no user
 * config, no environment. What judges a range of commits (docs/ci.md). `file` names it in errors,
 * e.g. `<commit>:.hermes/config.yaml`; throws ConfigError naming file, line and key.
 */
export function loadCommittedConfig(file: string, text: string): HermesConfig {
  const parsed = parseConfigText(file, text);
  const config = validateFile(parsed);
  checkReferences(config, [{ raw: parsed.raw, parsed }]);
  return config;
}

function parseConfigText(file: string, text: string): ParsedFile {
  const parsed: ParsedFile = { file, text, raw: {} };
  const { doc, lines } = treeOf(parsed);
  const syntax = doc.errors[0];
  if (syntax) {
    let pos = syntax.linePos?.[0] ?? lines.linePos(syntax.pos[0]);
    let reason = syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const quote = syntax.code === 'MISSING_CHAR' ? /closing (["'])quote/.exec(reason)?.[1] : undefined;
    const bracket = quote
      ? undefined
      : /\bflow (sequence|mapping|collection)\b|end with an? [\]}]/i.test(reason)
        ? unclosedBracket(text, syntax.pos[0])
        : undefined;
    if (quote) {
      // The parser stops at the end of the file; the useful place is where the string opened.
      const opened = text.lastIndexOf(quote, syntax.pos[0] - 1);
      if (opened >= 0) {
        pos = lines.linePos(opened);
        reason = `string opened here is missing its closing ${quote}`;
      }
    } else if (bracket) {
      // The parser notices where the next line begins; the mistake is the bracket left open.
      pos = lines.linePos(bracket.at);
      reason = `\`${bracket.open}\` opened here is never closed with \`${bracket.open === '[' ? ']' : '}'}\``;
    }
    throw new ConfigError(`${file}:${pos.line}:${pos.col}: YAML syntax error: ${reason}`, {
      issues: [{ file, line: pos.line, column: pos.col, key: '', message: `YAML syntax error: ${reason}` }],
    });
  }
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  if (value === null || value === undefined) return parsed;
  if (!isPlainObject(value)) {
    throw new ConfigError(
      `${file}:1:1: the top level must be a mapping of keys (rules:, checks:, hooks:, model:, …), not a ${Array.isArray(value) ? 'list' : typeof value}.`,
    );
  }
  parsed.raw = dropNulls(value) as Record<string, unknown>;
  return parsed;
}

/** `key:` with nothing after it (common after commenting out a block) means "not set". */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v);
  return out;
}

/** The file's config as the schema reads it alone; throws ConfigError naming each problem's line. */
function validateFile(parsed: ParsedFile): HermesConfig {
  const issues: ConfigIssue[] = [];
  const result = configSchema().safeParse(parsed.raw);
  if (!result.success) {
    for (const issue of result.error.issues) issues.push(...describeIssue(parsed, issue));
  }
  for (const list of LISTS_BY_ID) {
    const items = parsed.raw[list];
    if (!Array.isArray(items)) continue;
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const id = isPlainObject(item) ? item.id : undefined;
      if (typeof id !== 'string') return;
      if (seen.has(id)) {
        issues.push(issueAt(parsed, [list, i, 'id'], `duplicate ${list === 'rules' ? 'rule' : 'check'} id "${id}" (first used at ${list}[${seen.get(id)}])`));
      } else seen.set(id, i);
    });
  }
  if (issues.length > 0 || !result.success) throw configErrorOf(issues);
  return result.data;
}

function configErrorOf(issues: ConfigIssue[]): ConfigError {
  issues.sort((a, b) => a.line - b.line || a.column - b.column);
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).map((i) => `${i.file}:${i.line}:${i.column}: ${i.key ? `${i.key}: ` : ''}${i.message}`);
  if (issues.length > MAX_REPORTED_ISSUES) shown.push(`… and ${issues.length - MAX_REPORTED_ISSUES} more`);
  const head = issues.length === 1 ? 'Invalid configuration: ' : `Invalid configuration, ${issues.length} problems:\n`;
  return new ConfigError(head + shown.join('\n'), { issues });
}

function describeIssue(parsed: ParsedFile, issue: z.core.$ZodIssue): ConfigIssue[] {
  const path = issue.path as Array<string | number>;
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeys(path);
    return issue.keys.map((key) => issueAt(parsed, [...path, key], `unknown key "${key}"${allowed ? ` (allowed here: ${allowed.join(', ')})` : ''}`, true));
  }
  return [issueAt(parsed, path, simplify(issue))];
}

function simplify(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `missing required key (expected ${issue.expected})`;
  return issue.message.replace(/^Invalid input: /, '');
}

function issueAt(parsed: ParsedFile, path: Array<string | number>, message: string, atKey = false): ConfigIssue {
  const { doc, lines } = treeOf(parsed);
  const offset = offsetOf(doc, path, atKey);
  const pos = lines.linePos(offset);
  return { file: parsed.file, line: pos.line, column: pos.col, key: formatKey(path), message };
}

/** Source offset of the deepest node on `path` (of the key itself when `atKey`). */
function offsetOf(doc: Document, path: Array<string | number>, atKey: boolean): number {
  const { isMap, isScalar, isSeq } = yaml();
  let node: unknown = doc.contents;
  let offset = (doc.contents as YamlNode | null)?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (!pair) break;
      const keyNode = pair.key as YamlNode | null;
      const valueNode = pair.value as YamlNode | null;
      if (last && atKey && keyNode?.range) return keyNode.range[0];
      const target = valueNode?.range ? valueNode : keyNode;
      if (target?.range) offset = target.range[0];
      node = valueNode;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as YamlNode | undefined;
      if (!item?.range) break;
      offset = item.range[0];
      node = item;
    } else break;
  }
  return offset;
}

export function formatKey(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** The keys the schema allows at `path`, to suggest the right spelling of an unknown key. */
function allowedKeys(path: Array<string | number>): string[] | undefined {
  let schema: unknown = configSchema();
  const unwrap = (s: unknown): unknown => {
    let cur = s as { def?: { type?: string; innerType?: unknown; out?: unknown } } | undefined;
    // Wrappers around the schema that reads the value: defaults, optionals, and a preprocess step (a pipe into it).
    for (;;) {
      if (cur?.def && (cur.def.type === 'default' || cur.def.type === 'prefault' || cur.def.type === 'optional')) cur = cur.def.innerType as typeof cur;
      else if (cur?.def?.type === 'pipe') cur = cur.def.out as typeof cur;
      else return cur;
    }
  };
  for (const seg of path) {
    const s = unwrap(schema) as { def?: { type?: string; element?: unknown }; shape?: Record<string, unknown> } | undefined;
    if (s?.def?.type === 'array' && typeof seg === 'number') schema = s.def.element;
    else if (s?.def?.type === 'object' && typeof seg === 'string') schema = s.shape?.[seg];
    else return undefined;
  }
  const obj = unwrap(schema) as { def?: { type?: string }; shape?: Record<string, unknown> } | undefined;
  return obj?.def?.type === 'object' && obj.shape ? Object.keys(obj.shape) : undefined;
}

/** The last `[` or `{` before `end` that nothing closes (quotes and comments skipped), if any. */
function unclosedBracket(text: string, end: number): { open: '[' | '{'; at: number } | undefined {
  const open: Array<{ open: '[' | '{'; at: number }> = [];
  for (let i = 0; i < end && i < text.length; i++) {
    const c = text[i]!;
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i < end && text[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      for (i++; i < end && text[i] !== c; i++) if (c === '"' && text[i] === '\\') i++;
    } else if (c === '[' || c === '{') open.push({ open: c, at: i });
    else if ((c === ']' || c === '}') && open.length > 0) open.pop();
  }
  return open.at(-1);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge: objects key by key, `rules`/`checks` by id, everything else `over` wins. */
export function mergeLayers(base: Record<string, unknown>, over: Record<string, unknown>, top = true): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    if (top && (LISTS_BY_ID as readonly string[]).includes(key) && Array.isArray(prev) && Array.isArray(value)) {
      const overIds = new Set(value.map((item) => (isPlainObject(item) ? item.id : undefined)));
      out[key] = [...prev.filter((item) => !(isPlainObject(item) && overIds.has(item.id))), ...value];
    } else if (isPlainObject(prev) && isPlainObject(value)) {
      out[key] = mergeLayers(prev, value, false);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function setIn(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = target;
  for (const seg of path.slice(0, -1)) {
    if (!isPlainObject(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

function hasIn(target: unknown, path: readonly string[]): boolean {
  let cur = target;
  for (const seg of path) {
    if (!isPlainObject(cur) || !(seg in cur)) return false;
    cur = cur[seg];
  }
  return true;
}

/** Cross-file references: a check named by the pre-commit hook must exist once merged. */
function checkReferences(config: HermesConfig, layers: Array<{ raw: Record<string, unknown>; parsed: ParsedFile }>): void {
  const known = new Set(config.checks.map((c) => c.id));
  const path = ['hooks', 'pre-commit', 'checks'];
  const setter = [...layers].reverse().find((l) => hasIn(l.raw, path));
  if (!setter) return;
  const issues: ConfigIssue[] = [];
  config.hooks['pre-commit'].checks.forEach((id, i) => {
    if (!known.has(id)) {
      const defined = known.size ? `defined checks: ${[...known].join(', ')}` : 'no checks are defined under `checks:`';
      issues.push(issueAt(setter.parsed, [...path, i], `unknown check "${id}" (${defined})`));
    }
  });
  if (issues.length) throw configErrorOf(issues);
}

function originsOf(
  config: HermesConfig,
  layers: Array<{ source: ConfigFile; raw: Record<string, unknown> }>,
  fromEnv: Map<string, string>,
): Record<string, Origin> {
  const origins: Record<string, Origin> = {};
  const originOf = (path: string[]): Origin => {
    const env = fromEnv.get(path.join('.'));
    if (env) return `env:${env}`;
    for (const layer of [...layers].reverse()) if (hasIn(layer.raw, path)) return layer.source.scope;
    return 'default';
  };
  const walk = (value: unknown, path: string[]) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    } else origins[path.join('.')] = originOf(path);
  };
  for (const [key, value] of Object.entries(config)) {
    if ((LISTS_BY_ID as readonly string[]).includes(key)) {
      for (const item of value as Array<{ id: string }>) {
        const layer = [...layers]
          .reverse()
          .find((l) => Array.isArray(l.raw[key]) && (l.raw[key] as Array<{ id?: unknown }>).some((r) => isPlainObject(r) && r.id === item.id));
        origins[`${key}.${item.id}`] = layer?.source.scope ?? 'default';
      }
    } else walk(value, [key]);
  }
  return origins;
}

/** The config as shown to clients: secrets replaced by a marker that says one is set. */
export function redacted(config: HermesConfig): HermesConfig {
  return { ...config, model: { ...config.model, apiKey: config.model.apiKey ? '<redacted>' : undefined } };
}
