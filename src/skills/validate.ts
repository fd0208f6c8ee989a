/**
 * What a skill may look like. Every message names the field and says what was expected,
 * because the reader is often a model that will retry with the message as its only guide.
 */
import { isAbsolute, posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../errors/index.js';

/** Names are directory names and index keys: lower case, no spaces, no leading dot. */
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const SKILL_NAME_MAX_CHARS = 64;
/** The index shows a cut description; the full one must still fit one short paragraph (Hermes' limit). */
export const SKILL_DESCRIPTION_MAX_CHARS = 1024;
/** SKILL.md is loaded whole into the context by skill_view; bigger belongs in references/. */
export const SKILL_MD_MAX_CHARS = 100_000;
/** Supporting files are templates and scripts, not data sets. */
export const SUPPORTING_FILE_MAX_BYTES = 1024 * 1024;
/** The only folders a skill may hold besides SKILL.md (Hermes' layout). */
export const SUPPORTING_DIRS = ['references', 'templates', 'scripts', 'assets'] as const;

export type FrontMatter = { name: string; description: string; [key: string]: unknown };
export type ParsedSkill = { frontMatter: FrontMatter; body: string };

/** A validation failure: the message is what the model or user is shown (a bad request: 400, exit 2). */
export class SkillValidationError extends UsageError {}

export function checkName(name: unknown, what = 'name'): string {
  if (typeof name !== 'string' || name.length === 0) throw new SkillValidationError(`${what} is required.`);
  if (name.length > SKILL_NAME_MAX_CHARS) {
    throw new SkillValidationError(`${what} "${name.slice(0, 20)}…" is ${name.length} characters; the limit is ${SKILL_NAME_MAX_CHARS}.`);
  }
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new SkillValidationError(
      `${what} "${name}" is not allowed: use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit (pattern ${SKILL_NAME_PATTERN.source}).`,
    );
  }
  return name;
}

export function checkCategory(category: unknown): string | undefined {
  if (category === undefined || category === null || category === '') return undefined;
  if (typeof category !== 'string') throw new SkillValidationError('category must be a string.');
  if (category.includes('/') || category.includes('\\')) {
    throw new SkillValidationError(`category "${category}" must be a single folder name (no '/'): skills are laid out as [category/]name/SKILL.md.`);
  }
  return checkName(category, 'category');
}

const SIMPLE_LINE = /^([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*))?$/;
/** Values YAML would not read as a plain string: quoted, flow, anchors, block scalars, numbers, booleans, null. */
const NOT_PLAIN = /^(['"\[\]{}&*!|>%@`#,?:-]|[.+-]?\d|\.(inf|nan)$|(true|false|yes|no|on|off|null|~)$)/i;

/**
 * Front matter of the common shape — one `key: plain text` per line — read without the YAML
 * parser, whose cost per document adds up over a large skill index (docs/benchmarks.md#skills). Anything else
 * (quotes, lists, nesting, comments, numbers, booleans) returns undefined and goes to YAML,
 * so both paths read the same strings.
 */
function simpleMapping(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const m = SIMPLE_LINE.exec(line);
    if (!m || m[2] === undefined) return undefined;
    const value = m[2].trim();
    if (!value || NOT_PLAIN.test(value) || value.includes(': ') || value.includes(' #') || value.includes('\t#') || Object.hasOwn(out, m[1]!)) return undefined;
    out[m[1]!] = value;
  }
  return out;
}

/**
 * Parses SKILL.md: YAML front matter between `---` lines that is a mapping with `name` and
 * `description`, then a non-empty body. Throws a SkillValidationError saying what is wrong.
 */
export function parseSkillMd(text: string, where = 'SKILL.md'): ParsedSkill {
  if (text.length > SKILL_MD_MAX_CHARS) {
    throw new SkillValidationError(`${where} is ${text.length} characters; the limit is ${SKILL_MD_MAX_CHARS}. Move long material into references/.`);
  }
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (!/^---\r?\n/.test(src)) {
    throw new SkillValidationError(
      `${where} must start with YAML front matter: a line '---', then 'name:' and 'description:', then a line '---', then the body.`,
    );
  }
  const close = /\r?\n---[ \t]*(\r?\n|$)/.exec(src.slice(3));
  if (!close) throw new SkillValidationError(`${where} front matter is not closed: add a line '---' after the description.`);
  const yamlText = src.slice(src.indexOf('\n') + 1, 3 + close.index);
  const body = src.slice(3 + close.index + close[0].length);
  let data: unknown = simpleMapping(yamlText);
  if (data === undefined) {
    try {
      data = parseYaml(yamlText);
    } catch (err) {
      throw new SkillValidationError(`${where} front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new SkillValidationError(`${where} front matter must be a YAML mapping with 'name' and 'description' keys.`);
  }
  const fm = data as Record<string, unknown>;
  if (typeof fm.name !== 'string' || !fm.name.trim()) throw new SkillValidationError(`${where} front matter needs a 'name' (a string).`);
  if (typeof fm.description !== 'string' || !fm.description.trim()) {
    throw new SkillValidationError(`${where} front matter needs a 'description' (a string saying when to use the skill).`);
  }
  if (fm.description.length > SKILL_DESCRIPTION_MAX_CHARS) {
    throw new SkillValidationError(`${where} description is ${fm.description.length} characters; the limit is ${SKILL_DESCRIPTION_MAX_CHARS}.`);
  }
  if (!body.trim()) throw new SkillValidationError(`${where} has no body after the front matter: write the procedure below the closing '---'.`);
  return { frontMatter: fm as FrontMatter, body };
}

/** Validates SKILL.md for the skill `name` (its front matter must carry that same name). */
export function checkSkillMd(text: unknown, name: string): ParsedSkill {
  if (typeof text !== 'string' || text.length === 0) throw new SkillValidationError('content is required: the full text of SKILL.md.');
  const parsed = parseSkillMd(text);
  if (parsed.frontMatter.name !== name) {
    throw new SkillValidationError(`SKILL.md front matter name "${parsed.frontMatter.name}" does not match the skill name "${name}".`);
  }
  return parsed;
}

/**
 * Checks a supporting-file path given by the caller and returns it normalised
 * (`references/x.md`). Only relative paths inside the four supporting folders.
 */
export function checkSupportingPath(filePath: unknown): string {
  if (typeof filePath !== 'string' || filePath.length === 0) throw new SkillValidationError('file_path is required.');
  if (filePath.includes('\0')) throw new SkillValidationError('file_path contains a NUL byte.');
  if (isAbsolute(filePath) || filePath.startsWith('~') || /^[a-zA-Z]:[\\/]/.test(filePath)) {
    throw new SkillValidationError(`file_path "${filePath}" is absolute; give a path relative to the skill folder, e.g. references/notes.md.`);
  }
  const parts = filePath.replace(/\\/g, '/').split('/');
  if (parts.includes('..')) throw new SkillValidationError(`file_path "${filePath}" contains '..'; paths must stay inside the skill folder.`);
  const norm = posix.normalize(parts.join('/')).replace(/^\.\//, '');
  const [top, ...rest] = norm.split('/');
  if (!(SUPPORTING_DIRS as readonly string[]).includes(top!) || rest.length === 0 || rest.some((p) => p === '' || p === '.')) {
    throw new SkillValidationError(
      `file_path "${filePath}" must be a file under ${SUPPORTING_DIRS.map((d) => d + '/').join(', ')} (SKILL.md itself is changed with edit or patch).`,
    );
  }
  return norm;
}

export function checkSupportingContent(content: unknown, filePath: string): string {
  if (typeof content !== 'string') throw new SkillValidationError('file_content is required (a string).');
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > SUPPORTING_FILE_MAX_BYTES) {
    throw new SkillValidationError(`${filePath} would be ${bytes} bytes; supporting files are limited to ${SUPPORTING_FILE_MAX_BYTES} bytes (1 MiB).`);
  }
  return content;
}
