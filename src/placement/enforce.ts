/**
 * Whether a repository rule can be enforced by the daemon rather than only asked of the
 * model: a prohibition on editing named paths becomes `protect:` globs, a prohibition on
 * committing a known kind of content becomes a `forbid:` regex. Deterministic on purpose:
 * a rule the guard enforces must say exactly what the sentence said, or nothing.
 */
import { ruleSchema, type Rule } from '../config/schema.js';

export type EnforceableRule = Pick<Rule, 'id' | 'message'> & { protect?: string[]; forbid?: string };

/** Content a sentence can forbid by name, with the regex that finds it on an added line. */
const KNOWN_CONTENT: Array<{ names: RegExp; id: string; forbid: string }> = [
  { names: /\bconsole\.log\b/i, id: 'no-console-log', forbid: 'console\\.log\\(' },
  { names: /\bdebugger( statements?)?\b/i, id: 'no-debugger', forbid: '\\bdebugger\\b' },
  { names: /(\.only\b|\bfocused tests?\b)/i, id: 'no-focused-tests', forbid: '\\b(it|describe|test)\\.only\\(' },
  { names: /\baws (access )?keys?\b|\baws credentials\b/i, id: 'no-aws-keys', forbid: 'AKIA[0-9A-Z]{16}' },
  { names: /\bprivate keys?\b/i, id: 'no-private-keys', forbid: '-----BEGIN [A-Z ]*PRIVATE KEY-----' },
];

const PROHIBITION = /\b(never|do not|don't|dont|must not|mustn't|must never|may not|should never|shouldn't|should not|no one may|not to be|not be)\b/i;
const EDIT_VERB =
  /\b(edit(ed|s|ing)?|modif(y|ied|ies|ying)|chang(e|ed|es|ing)|touch(ed|es|ing)?|writ(e|ten|es|ing)|alter(ed|s)?|hand-edit(ed)?|add(ed)? files?)\b/i;
const READ_ONLY = /\bread-only\b/i;
const COMMIT_VERB = /\b(commit(ted|s)?|push(ed)?|check(ed)? in|leave|left|add(ed)?|use|ship)\b/i;
const PRONOUN = /\b(them|it|these|those|there)\b/i;

/**
 * Path-like tokens: something with a slash (`src/generated/`, `__tests__/fixtures/*\/modules/`,
 * `./src`) or a file name with an extension (`CHANGELOG.md`, `package-lock.json`). URLs and
 * version-like tokens are not paths.
 */
const PATH_TOKEN =
  /(?<![\w@:/])(`?)((?:\.{0,2}\/)?(?:[\w@*.-]+\/)+(?:[\w@*.-]+)?|[\w*-][\w.*-]*\.(?:json|lock|md|mdx|ya?ml|toml|ts|tsx|js|jsx|mjs|cjs|py|go|rs|rb|java|kt|txt|cfg|ini|proto|sql|graphql|css|scss|html|xml|csv|sh))\1(?=$|[\s,.;:)!?'"`])/g;

function pathsIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PATH_TOKEN)) {
    // A sentence's full stop is not part of the path ("… in src/generated/.").
    const token = m[2]!.replace(/(?<=\/)\.+$|\.+$(?<!\/\.+)/, '');
    if (!token) continue;
    if (/^https?:|^\d+(\.\d+)+$/.test(token) || token.includes('//')) continue;
    out.push(token);
  }
  return out;
}

/** A path as the sentence wrote it → a glob of what it names (a directory covers everything under it). */
export function globOf(token: string, sentence: string): string | undefined {
  let p = token.replace(/^`|`$/g, '').replace(/^\.\//, '').replace(/^\/+/, '');
  if (!p || p === '.' || p.startsWith('..')) return undefined;
  const last = p.replace(/\/+$/, '').split('/').pop() ?? '';
  const dirWord = new RegExp(`${escapeRegex(token)}\`?\\s+(directory|folder|dir)\\b`, 'i').test(sentence);
  const isDir = p.endsWith('/') || dirWord || !/\.[A-Za-z0-9]+$/.test(last);
  if (isDir) return `${p.replace(/\/+$/, '')}/**`;
  return p;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Clauses of a sentence: a prohibition and the paths it names are usually in one. */
function clausesOf(sentence: string): string[] {
  return sentence
    .split(/;|:|,(?=\s*(?:never|do not|don't|edit|change|instead|but|and)\b)|\s+—\s+|\s+-\s+|\.\s+/i)
    .map((c) => c.trim())
    .filter(Boolean);
}

function kebab(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/\*+/g, '')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48)
      .replace(/-+$/, '') || 'rule'
  );
}

/** The paths a prohibition on editing names, or none (the clause, or the one before it for "never edit them"). */
function protectedPaths(sentence: string): string[] {
  const clauses = clausesOf(sentence);
  for (const [i, clause] of clauses.entries()) {
    const prohibits = (PROHIBITION.test(clause) && EDIT_VERB.test(clause)) || READ_ONLY.test(clause);
    if (!prohibits) continue;
    let paths = pathsIn(clause);
    // "The files in public/ are build output; never edit them" names its paths one clause before.
    if (paths.length === 0 && PRONOUN.test(clause)) paths = i > 0 ? pathsIn(clauses[i - 1]!) : [];
    // "X is read-only for agents: do not write there" names them in the first clause.
    if (paths.length === 0 && i > 0 && READ_ONLY.test(clauses[i - 1]!)) paths = pathsIn(clauses[i - 1]!);
    if (paths.length === 0 && READ_ONLY.test(clause) && i + 1 < clauses.length) continue;
    const globs = paths.map((p) => globOf(p, sentence)).filter((g): g is string => g !== undefined);
    if (globs.length > 0) return [...new Set(globs)];
  }
  return [];
}

/** A forbid rule for content the sentence forbids by a name we know, or by a `backticked` literal. */
function forbiddenContent(sentence: string): { id: string; forbid: string } | undefined {
  if (!PROHIBITION.test(sentence) && !/^\s*no\b/i.test(sentence)) return undefined;
  for (const k of KNOWN_CONTENT) if (k.names.test(sentence)) return { id: k.id, forbid: k.forbid };
  if (!COMMIT_VERB.test(sentence)) return undefined;
  // Only content someone would commit by mistake ("never commit `fdescribe`"), not a construct to use.
  const literal = /(?:commit|push|leave|check in)\w*\s+(?:any\s+)?`([^`]{3,60})`/i.exec(sentence)?.[1];
  return literal ? { id: `no-${kebab(literal)}`, forbid: escapeRegex(literal) } : undefined;
}

/**
 * The rule `.hermes/config.yaml` would need to enforce `sentence`, or undefined when the
 * sentence is not mechanically enforceable (then it belongs in the authority file).
 */
export function enforceableRule(sentence: string): EnforceableRule | undefined {
  const message = sentence.trim();
  const protect = protectedPaths(message);
  if (protect.length > 0) return checked({ id: `protect-${kebab(protect[0]!)}`, message, protect });
  const content = forbiddenContent(message);
  if (content) return checked({ id: content.id, message, forbid: content.forbid });
  return undefined;
}

/** A rule the config schema accepts (globs compile, the regex compiles), else none. */
export function checked(rule: EnforceableRule): EnforceableRule | undefined {
  return ruleSchema().safeParse(rule).success ? rule : undefined;
}
