/**
 * gitleaks' rules evaluated the way gitleaks v8.30.0 evaluates them (detect/detect.go,
 * config/allowlist.go): a rule runs only when one of its keywords occurs in the lower-cased
 * text; each match, trimmed of newlines, is run through the rule's regex again and yields a
 * secret (the rule's secret group, else the first non-empty group, else the whole match) that
 * must be above the rule's entropy threshold and must not be allowed by the global or the
 * rule's allowlists (regexes against the secret, the match or the match's lines; stopwords in
 * the secret; file paths; AND or OR). Text without a path (a tool result) skips the rules scoped to file paths; a
 * file's text (the `secrets` rule of a commit) is judged with them and with the path
 * allowlists, and a rule that is only a path (a `.p12` file) names the file itself. After
 * gitleaks' allowlists come hermesd's few own (./allowances.ts: public identifiers gitleaks
 * reports, seen in real histories).
 *
 * Where gitleaks differs and hermesd does not follow: gitleaks also decodes base64, hex and
 * percent-encoded text and scans it again (`--max-decode-depth`, 5 by default), and keeps a
 * generic finding only where no other rule found the same secret on its line (detect/utils.go
 * `filter`; the commit judge keeps the other rule's finding where their spans overlap).
 *
 * This is the rule engine under hermesd's redaction (src/security/secrets.ts), under the
 * `secrets` rule kind that judges commits (src/rules/secrets-judge.ts), and the "gitleaks"
 * reference the detector benchmark compares against (hermesd's allowances change none of its
 * samples; `compileRuleSet` without them is gitleaks alone, as the conformance test uses it).
 */
import { HERMESD_ALLOWANCES, type Allowance } from './allowances.js';
import { GITLEAKS_GLOBAL_ALLOWLIST, GITLEAKS_RULES } from './gitleaks-rules.js';
import { buildKeywordMatcher, scanKeywords, type KeywordMatcher } from './keywords.js';
import type { AllowlistData, RegexData, SecretRuleData } from './secret-rule-types.js';

export type RuleFinding = {
  ruleId: string;
  /** Offsets of the secret in the text. */
  start: number;
  end: number;
  secret: string;
  /** The whole match, e.g. `api_token = "…"` for an assignment rule. */
  match: string;
};

/**
 * Bits per character: random base64 sits near 6, hex near 4, English words near 2.5–3.
 * Computed as gitleaks does (detect/utils.go): characters counted, divided by the UTF-8 length,
 * so a value with non-ASCII characters scores what it scores in gitleaks.
 */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const length = Buffer.byteLength(s, 'utf8');
  let h = 0;
  for (const n of counts.values()) {
    const p = n / length;
    h -= p * Math.log2(p);
  }
  return h;
}

type Allowlist = { and: boolean; target: 'secret' | 'match' | 'line'; regexes: RegExp[]; stopwords: string[]; paths: RegExp[] };
type Rule = {
  id: string;
  /** Undefined for a rule that is only a path (its finding is the file). */
  re?: RegExp;
  /** `re` without the global flag: run again on a match alone, as gitleaks takes the secret from it. */
  reOnce?: RegExp;
  /** The files the rule applies to (gitleaks' `path`). */
  path?: RegExp;
  keywords: string[];
  /** Its place in the rule set (filled in by compileRuleSet). */
  index: number;
  secretGroup: number;
  entropy: number;
  allowlists: Allowlist[];
  /** hermesd's own allowlists for this rule (./allowances.ts). */
  allowances: Allowance[];
  /** The leading `[\w.-]{0,50}?` was cut for speed: the match start is found again by hand. */
  identifierPrefix: boolean;
};

/**
 * Most assignment rules start with a lazy identifier prefix, `[\w.-]{0,50}?`, that V8's
 * backtracking engine retries at every position of the text (RE2, gitleaks' engine, is linear).
 * It can only widen the match leftwards, never decide one, so it is cut and the identifier
 * characters before the match are added back to `match` for the allowlists that read it.
 */
const IDENTIFIER_PREFIX = '[\\w.\\-]{0,50}?';
const IDENTIFIER_CHAR = /[\w.-]/;
const IDENTIFIER_PREFIX_MAX = 50;

function compileRegex(r: RegexData, extraFlags = ''): RegExp {
  return new RegExp(r.source, (r.flags ?? '') + extraFlags);
}

function compileAllowlist(a: AllowlistData): Allowlist {
  return {
    and: a.condition === 'AND',
    target: a.regexTarget ?? 'secret',
    regexes: (a.regexes ?? []).map((r) => compileRegex(r)),
    stopwords: (a.stopwords ?? []).map((w) => w.toLowerCase()),
    paths: (a.paths ?? []).map((r) => compileRegex(r)),
  };
}

function compileRule(r: SecretRuleData, withPaths: boolean, allowances: readonly Allowance[]): Rule | undefined {
  if (!withPaths && (!r.regex || r.path)) return undefined;
  let source = r.regex?.source;
  const identifierPrefix = source?.startsWith(IDENTIFIER_PREFIX) ?? false;
  if (source && identifierPrefix) source = source.slice(IDENTIFIER_PREFIX.length);
  return {
    id: r.id,
    re: source !== undefined ? new RegExp(source, (r.regex!.flags ?? '') + 'gd') : undefined,
    reOnce: source !== undefined ? new RegExp(source, (r.regex!.flags ?? '') + 'd') : undefined,
    path: r.path ? compileRegex(r.path) : undefined,
    keywords: r.keywords,
    index: 0,
    secretGroup: r.secretGroup ?? 0,
    entropy: r.entropy ?? 0,
    allowlists: (r.allowlists ?? []).map(compileAllowlist),
    allowances: allowances.filter((a) => a.rules.includes(r.id)),
    identifierPrefix,
  };
}

export type RuleSet = {
  rules: Rule[];
  global: Allowlist;
  /** Every rule keyword, found in one pass. */
  keywords: KeywordMatcher;
  /** Per keyword index: whether a rule holding it is pre-tested by its regex (COMMON_KEYWORDS). */
  common: boolean[];
  /** `couldMatch`: for rules with a common keyword, the rule's own regex decides. */
  commonKeywordTests: Array<{ keywords: string[]; re: RegExp }>;
  /** Per keyword index: the rules that hold it (their indices). */
  rulesOfKeyword: number[][];
  /** The rules without keywords (their indices): they run on any text. */
  keywordless: number[];
  /** The rules with a regex and no path, in order: what judges text without a path, or a file no path-scoped rule names. */
  unscoped: Rule[];
  /** The rules with a regex and a path (they judge only the files it names), and those that are only a path. */
  scoped: Rule[];
  pathOnly: Rule[];
};

/**
 * Keywords present in most code and prose (`ey` of every "key", `s.` of every sentence): a
 * rule with one of them is pre-tested by its own regex instead. The others (`ghp_`, `xoxb`,
 * `glpat-`, service names) rarely occur outside a secret's neighbourhood.
 */
const COMMON_KEYWORDS = new Set([
  'ey',
  'sk',
  's.',
  'a3t',
  'a3-',
  'q~',
  'api',
  'key',
  'auth',
  'token',
  'access',
  'secret',
  'passwd',
  'password',
  'credential',
  'creds',
  'curl',
  'pat.',
  'sat.',
  'test_',
  'live_',
  'linear',
  'intra',
  'ext_',
]);

/**
 * Compiles rule data once; `withPaths`: also the rules scoped to file paths (for files' text);
 * `allowances`: hermesd's own allowlists to apply after gitleaks' (none: gitleaks alone).
 */
export function compileRuleSet(
  data: readonly SecretRuleData[],
  global: AllowlistData,
  opts: { withPaths?: boolean; allowances?: readonly Allowance[] } = {},
): RuleSet {
  const rules = data.map((r) => compileRule(r, opts.withPaths === true, opts.allowances ?? [])).filter((r): r is Rule => r !== undefined);
  const keywords = [...new Set(rules.flatMap((r) => r.keywords))];
  rules.forEach((r, i) => (r.index = i));
  const common = rules.filter((r) => r.keywords.length === 0 || r.keywords.some((k) => COMMON_KEYWORDS.has(k)));
  return {
    rules,
    global: compileAllowlist(global),
    keywords: buildKeywordMatcher(keywords),
    common: keywords.map((k) => common.some((r) => r.keywords.includes(k))),
    commonKeywordTests: common.filter((r) => r.re).map((r) => ({ keywords: r.keywords, re: new RegExp(r.re!.source, r.re!.flags.replace(/[gd]/g, '')) })),
    rulesOfKeyword: keywords.map((k) => rules.flatMap((r, i) => (r.keywords.includes(k) ? [i] : []))),
    keywordless: rules.flatMap((r, i) => (r.keywords.length === 0 ? [i] : [])),
    unscoped: rules.filter((r) => r.re && !r.path),
    scoped: rules.filter((r) => r.re && r.path),
    pathOnly: rules.filter((r) => !r.re && r.path),
  };
}

let defaultSet: RuleSet | undefined;
/** gitleaks' default rules for text without a path (tool results), with hermesd's allowances, compiled on first use. */
export function gitleaksRuleSet(): RuleSet {
  return (defaultSet ??= compileRuleSet(GITLEAKS_RULES, GITLEAKS_GLOBAL_ALLOWLIST, { allowances: HERMESD_ALLOWANCES }));
}

let fileSet: RuleSet | undefined;
/** gitleaks' default rules for a file's text: the path-scoped rules and path allowlists too. */
export function gitleaksFileRuleSet(): RuleSet {
  return (fileSet ??= compileRuleSet(GITLEAKS_RULES, GITLEAKS_GLOBAL_ALLOWLIST, { withPaths: true, allowances: HERMESD_ALLOWANCES }));
}

/** Whether gitleaks' global allowlist leaves a file out altogether (lock files, images, vendored code…). */
export function pathAllowed(set: RuleSet, path: string): boolean {
  return set.global.paths.some((r) => r.test(path));
}

/** The rules that are only a path (a PKCS #12 file) and name this file. */
export function pathFindings(path: string, set: RuleSet): string[] {
  if (pathAllowed(set, path)) return [];
  return set.pathOnly.filter((r) => r.path!.test(path) && !r.allowlists.some((a) => a.paths.some((p) => p.test(path)))).map((r) => r.id);
}

/** The whole lines a span touches (gitleaks' `Line`: the lines of the match). */
function linesAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf('\n', start - 1) + 1;
  const nl = text.indexOf('\n', end);
  return text.slice(from, nl < 0 ? text.length : nl);
}

/** A finding and where its match lies (the lines a `line` allowlist reads). */
type Candidate = RuleFinding & { matchStart: number; matchEnd: number };

function allowed(a: Allowlist, f: Candidate, text: string, path: string | undefined): boolean {
  const target = a.target === 'match' ? f.match : a.target === 'line' ? linesAround(text, f.matchStart, f.matchEnd) : f.secret;
  const regexHit = a.regexes.length > 0 && target !== '' && a.regexes.some((r) => r.test(target));
  const lower = f.secret.toLowerCase();
  const stopHit = a.stopwords.length > 0 && a.stopwords.some((w) => lower.includes(w));
  // Text without a path never matches a path.
  const pathHit = path !== undefined && a.paths.some((r) => r.test(path));
  if (!a.and) return regexHit || stopHit || pathHit;
  const checks: boolean[] = [];
  if (a.paths.length) checks.push(pathHit);
  if (a.regexes.length) checks.push(regexHit);
  if (a.stopwords.length) checks.push(stopHit);
  return checks.length > 0 && checks.every(Boolean);
}

function runRule(rule: Rule, set: RuleSet, text: string, out: RuleFinding[], path: string | undefined): void {
  const re = rule.re!;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    let rawStart = m.index;
    if (rule.identifierPrefix) {
      const floor = Math.max(0, m.index - IDENTIFIER_PREFIX_MAX);
      while (rawStart > floor && IDENTIFIER_CHAR.test(text[rawStart - 1]!)) rawStart--;
    }
    // gitleaks trims newlines off the match (detect.go: strings.Trim(match, "\n")) …
    const raw = text.slice(rawStart, m.index + m[0].length);
    const matchStart = rawStart + raw.length - raw.replace(/^\n+/, '').length;
    const match = raw.replace(/^\n+|\n+$/g, '');
    const matchEnd = matchStart + match.length;
    // … and takes the secret from the rule's regex run again on the match alone (FindStringSubmatch):
    // the rule's secret group, else the first non-empty group, else the whole match.
    let secret = match;
    let start = matchStart;
    const g = rule.reOnce!.exec(match);
    if (g && g.length > 1) {
      let group = 0;
      if (rule.secretGroup > 0) {
        if (g.length <= rule.secretGroup) continue;
        group = rule.secretGroup;
      } else group = g.findIndex((v, i) => i > 0 && !!v);
      if (group > 0) {
        // a group that took no part is gitleaks' empty string
        secret = g[group] ?? '';
        start = matchStart + (g.indices![group]?.[0] ?? 0);
      }
    }
    if (rule.entropy > 0 && shannonEntropy(secret) <= rule.entropy) continue;
    const finding: Candidate = { ruleId: rule.id, start, end: start + secret.length, secret, match, matchStart, matchEnd };
    if (allowed(set.global, finding, text, path)) continue;
    if (rule.allowlists.some((a) => allowed(a, finding, text, path))) continue;
    if (rule.allowances.some((a) => allowedByHermesd(a, finding, text))) continue;
    out.push({ ruleId: finding.ruleId, start: finding.start, end: finding.end, secret, match });
  }
}

/** hermesd's own allowlists (./allowances.ts): the secret's shape, and its line up to it. */
function allowedByHermesd(a: Allowance, f: Candidate, text: string): boolean {
  return a.secret.test(f.secret) && a.before.test(text.slice(text.lastIndexOf('\n', f.start - 1) + 1, f.start));
}

/**
 * What of a rule set applies to the text of one file (or, without a path, to text from no file),
 * worked out once for all the text judged as that file's: whether gitleaks' global allowlist
 * leaves the file out, and the rules with a regex whose path, if they have one, names the file.
 */
export type FileScope = { allowed: boolean; rules: readonly Rule[] };

/** Which rules of `set` a scope holds, by index (one array per list of rules, kept with it). */
const membership = new WeakMap<readonly Rule[], Uint8Array>();
function membersOf(set: RuleSet, rules: readonly Rule[]): Uint8Array {
  let m = membership.get(rules);
  if (!m) {
    m = new Uint8Array(set.rules.length);
    for (const r of rules) m[r.index] = 1;
    membership.set(rules, m);
  }
  return m;
}

export function fileScope(set: RuleSet, path: string | undefined): FileScope {
  if (path === undefined) return { allowed: false, rules: set.unscoped };
  if (pathAllowed(set, path)) return { allowed: true, rules: [] };
  // (Almost every file: no path-scoped rule names it, and the rules are the unscoped ones.)
  if (!set.scoped.some((r) => r.path!.test(path))) return { allowed: false, rules: set.unscoped };
  return { allowed: false, rules: set.rules.filter((r) => r.re && (!r.path || r.path.test(path))) };
}

/**
 * Every finding of `set`'s rules in `text`, in rule order. `path`: the file the text is from
 * (its path-scoped rules and path allowlists apply); without it, only rules that need none.
 * `scope`: fileScope(set, path), when the caller judges many texts of one file.
 */
export function findWithRules(text: string, set: RuleSet = gitleaksRuleSet(), path?: string, scope?: FileScope): RuleFinding[] {
  const out: RuleFinding[] = [];
  if (!text) return out;
  const { allowed, rules } = scope ?? fileScope(set, path);
  if (allowed) return out;
  // The rules to run: those of the scope with a keyword found (or none at all), in the set's order.
  const picked = [...set.keywordless];
  for (const k of scanKeywords(set.keywords, text)) picked.push(...set.rulesOfKeyword[k]!);
  if (picked.length === 0) return out;
  picked.sort((a, b) => a - b);
  const members = membersOf(set, rules);
  let last = -1;
  for (const i of picked) {
    if (i === last || !members[i]) continue;
    last = i;
    runRule(set.rules[i]!, set, text, out, path);
  }
  return out;
}

/**
 * Whether any rule of `set` could find something in `text`: a cheap superset of
 * `findWithRules`. A rare keyword settles it; a rule with a common keyword is asked directly.
 */
export function couldMatch(text: string, set: RuleSet = gitleaksRuleSet()): boolean {
  let rare = false;
  const present = scanKeywords(set.keywords, text, (k) => (rare = !set.common[k]!));
  if (rare) return true;
  const words = new Set([...present].map((k) => set.keywords.keywords[k]!));
  return set.commonKeywordTests.some((t) => (t.keywords.length === 0 || t.keywords.some((k) => words.has(k))) && t.re.test(text));
}
