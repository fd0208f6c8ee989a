/**
 * Secret values in text: what redaction removes from tool output, SessionDB rows and
 * recalled snippets, and what memory and skill writes are refused for.
 *
 * Three sources, merged into non-overlapping spans:
 * 1. gitleaks' maintained rule set (src/security/gitleaks-rules.ts, ~220 token shapes and
 *    service-specific assignments), evaluated as gitleaks does (./gitleaks.ts);
 * 2. a few shapes gitleaks leaves to context: private-key blocks cut off mid-output,
 *    OpenAI-style `sk-…` keys, `Bearer …` headers, passwords in URLs;
 * 3. the variable-name heuristic: a value assigned to a name ending in key/token/secret/
 *    password/… in any of the forms code and config use (see ASSIGNMENT_FORMS), judged by
 *    length, character classes and entropy.
 * Every candidate then passes the same filters: placeholders (`changeme`, `xxxx…`,
 * `<your-key>`, `${VAR}`, AWS's documented EXAMPLE keys, the alphabet) and public identifiers
 * (Stripe publishable keys) are left alone; the heuristic's values also lose long runs of one
 * character.
 */
import { couldMatch, findWithRules, gitleaksRuleSet, shannonEntropy, type RuleFinding } from './gitleaks.js';
import { GITLEAKS_GLOBAL_ALLOWLIST, GITLEAKS_RULES } from './gitleaks-rules.js';

export { shannonEntropy };

export type SecretSpan = { kind: string; start: number; end: number };

/**
 * Words and shapes that mark a value as a stand-in. Substrings count (`your-api-key-here`,
 * `sk_test_EXAMPLE…`), so random tokens, which almost never hold an English word this long,
 * are unaffected.
 */
const PLACEHOLDER =
  /^(x+|\*+|\.+|-+|0+|changeme|change_me|password|secret|token|null|none|nil|undefined|true|false|todo|tbd|redacted|example|dummy|placeholder)$|your[_-]?|<[^>]*>|\{\{|\$\{|^\$[A-Za-z_]|^%[A-Za-z_]+%$|xxxx|example|placeholder|redacted|dummy|changeme|replace[_-]?me|insert[_-]|fake|sample/i;

/**
 * Six of one character in a row (`0000000…`, `******`): a stand-in where a person typed the
 * value. Only judged for the variable-name heuristic: real token formats hold runs (Twitter
 * bearer tokens start with twenty `A`s).
 */
const REPEATED_RUN = /(.)\1{5,}/;

/** Public by design: Stripe publishable keys are embedded in web pages. */
const PUBLIC_IDENTIFIER = /^pk_(?:live|test)_/;

/** gitleaks' global stopwords (the alphabet, a well-known UUID): placeholders in any rule. */
const GLOBAL_STOPWORDS = GITLEAKS_GLOBAL_ALLOWLIST.stopwords ?? [];

export function isPlaceholder(value: string): boolean {
  if (PLACEHOLDER.test(value)) return true;
  const lower = value.toLowerCase();
  return GLOBAL_STOPWORDS.some((w) => lower.includes(w));
}

/** gitleaks ids shown under the names hermesd used before (refusal messages, docs). */
const KIND_ALIAS: Record<string, string> = {
  'github-pat': 'github-token',
  'github-oauth': 'github-token',
  'github-app-token': 'github-token',
  'github-refresh-token': 'github-token',
  'github-fine-grained-pat': 'github-token',
  'aws-access-token': 'aws-access-key',
  'stripe-access-token': 'stripe-key',
  'gcp-api-key': 'google-api-key',
  'openai-api-key': 'openai-key',
  'generic-api-key': 'secret-assignment',
};
function kindOf(ruleId: string): string {
  if (KIND_ALIAS[ruleId]) return KIND_ALIAS[ruleId]!;
  if (ruleId.startsWith('slack-') && ruleId !== 'slack-webhook-url') return 'slack-token';
  return ruleId;
}

/** Spans of the most specific source win where two overlap. */
const PRIORITY = { rule: 3, shape: 2, assignment: 1 } as const;
type Candidate = SecretSpan & { priority: number };

// --- 2. shapes gitleaks leaves to context ---------------------------------------------

/**
 * A key block's body: at least this many base64 characters of two classes or more, so
 * `-----BEGIN PRIVATE KEY----- anything` and empty or elided blocks stay, while a block cut
 * off after its first line (`MIIEvQIBADANBg…`) is still removed.
 */
const PRIVATE_KEY_MIN_BODY = 12;
const PRIVATE_KEY_BODY_START = /^(?:\s|\\+[nr])*(?:[A-Za-z-]+:[^\n\\]*(?:\n|\\+n))*(?:\s|\\+[nr])*[A-Za-z0-9+/=]{12}/;
/** Through END, or (cut-off output) to the end, or to a closing quote inside a JSON string. */
const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----(?:[^"]*?-----END \1PRIVATE KEY( BLOCK)?-----|(?:[^"\\]|\\[^"])*)/g;
const OPENAI_KEY = /\bsk-[A-Za-z0-9_-]{20,}/g;
const BEARER = /\b(?:Bearer|token)\s+([A-Za-z0-9._~+/-]{20,}=*)/g;
/** `://user:password@`; the scheme before it is checked by hand (a leading `[a-z]…` is retried at every word). */
const URL_CREDENTIALS = /:\/\/[^\s:/@'"]+:([^\s@/'"]+)@/g;
const URL_SCHEME_END = /[a-z][a-z0-9+.-]*$/i;
/** `scheme://user:pass@host` in documentation names the slot, not a password. */
const URL_PASSWORD_WORD = /^(?:pass|passwd|password|pwd|secret|token|user|username|\*+)$/i;
/** `https://abc:xyz@example.com`, `https://a:b@host` in API docs: too short to be a real password. */
const URL_PASSWORD_MIN_CHARS = 6;

/** OpenAI keys: `sk-` + ≥20 chars with letters and digits, so `sk-learn` or `sk-some-words` stay. */
function openAiKey(match: string): boolean {
  // Anthropic keys (`sk-ant-…`) have exact formats gitleaks' own rules know.
  if (match.startsWith('sk-ant-')) return false;
  const body = match.replace(/^sk-(proj-|svcacct-|admin-|ant-(api\d+-)?)?/, '');
  return body.length >= 20 && /[0-9]/.test(body) && /[A-Za-z]/.test(body) && shannonEntropy(body) >= 3.5;
}

function shapes(text: string, out: Candidate[]): void {
  for (const m of text.matchAll(PRIVATE_KEY)) {
    const after = m[0].replace(/^-----BEGIN [A-Z0-9 ]*-----/, '');
    // The body starts with base64 (after PEM headers such as `Proc-Type: 4,ENCRYPTED`), not prose.
    if (!PRIVATE_KEY_BODY_START.test(after)) continue;
    const body = after
      .replace(/-----END [A-Z0-9 ]*-----/g, '')
      .replace(/\\[nr]/g, '')
      .replace(/[^A-Za-z0-9+/=]/g, '');
    // Real key bodies hold runs of `A` (length fields), so only the placeholder words count here.
    if (body.length < PRIVATE_KEY_MIN_BODY || classes(body.replace(/[+/=]/g, '')) < 2 || PLACEHOLDER.test(body)) continue;
    out.push({ kind: 'private-key', start: m.index!, end: m.index! + m[0].length, priority: PRIORITY.rule });
  }
  for (const m of text.matchAll(OPENAI_KEY)) {
    if (!openAiKey(m[0]) || isPlaceholder(m[0])) continue;
    out.push({ kind: 'openai-key', start: m.index!, end: m.index! + m[0].length, priority: PRIORITY.shape });
  }
  for (const m of text.matchAll(BEARER)) {
    const value = m[1]!;
    if (!looksGenerated(value, 'token')) continue;
    const start = m.index! + m[0].lastIndexOf(value);
    out.push({ kind: 'bearer-token', start, end: start + value.length, priority: PRIORITY.shape });
  }
  for (const m of text.matchAll(URL_CREDENTIALS)) {
    const value = m[1]!;
    if (!URL_SCHEME_END.test(text.slice(Math.max(0, m.index! - 32), m.index!))) continue;
    if (value.length < URL_PASSWORD_MIN_CHARS || isPlaceholder(value) || value.startsWith('$') || URL_PASSWORD_WORD.test(value)) continue;
    const start = m.index! + m[0].length - 1 - value.length;
    out.push({ kind: 'url-credentials', start, end: start + value.length, priority: PRIORITY.shape });
  }
}

// --- 3. the variable-name heuristic ----------------------------------------------------

/** The word a secret-holding name ends in (case-insensitive): …key, …token, …secret, …password and kin. */
const SECRET_WORD = String.raw`(?:key|token|secret|passw(?:or)?d|passwd|passphrase|pwd|credentials?|creds|auth)`;
/** Characters of a name before its secret word (`AWS_SECRET_ACCESS_` of `AWS_SECRET_ACCESS_KEY`). */
const NAME_CHAR = /[A-Za-z0-9_.$-]/;
/** How far back a name is followed; real names are shorter. */
const NAME_MAX_CHARS = 80;
/** Names of public material that ends in a secret word or sits before one: public keys, pins, hashes. */
const PUBLIC_NAME = /\b(?:public|pub)[\s_.-]*key|fingerprint|checksum|\bpin(?:ning)?\b|sha-?(?:1|256|384|512)\b|digest|integrity/i;
/** Names ending in `key` that name something else: sort keys, cache keys, primary keys… */
const NOT_SECRET_NAME =
  /(?:^|[^a-z])(?:sort|cache|primary|foreign|partition|hash|range|row|group|map|dict|object|schema|bucket|index|idempotency|public|pub|lookup|unique|composite|natural|surrogate|react|i18n|translation|storage|query|cursor|route|shortcut|hot|keyboard|api_?key_?(?:id|name|header|env|var|file|path))[_.-]?key$|token[_.-]?(?:type|count|limit|url|uri|endpoint|length|ttl|expiry|expires?(?:_at|_in)?|path|file|name|id|usage|budget)$|auth[_.-]?(?:type|method|mode|url|uri|endpoint|provider|header|domain|scheme|flow|path)$|secret[_.-]?(?:name|ref|id|arn|path|manager|store)$|password[_.-]?(?:field|input|label|hint|policy|length|reset|prompt|file|manager|hash)$/i;

const QUOTED_VALUE = String.raw`"([^"\n]{1,400})"|'([^'\n]{1,400})'|\x60([^\x60\n]{1,400})\x60`;
const BARE_VALUE = String.raw`([A-Za-z0-9_\-+/=.~!@#$%^&*?]{1,400})`;
const VALUE = `(?:${QUOTED_VALUE}|${BARE_VALUE})`;

/**
 * The assignment forms of code and configuration, each starting at the secret word that ends
 * the name (the rest of the name is read backwards by hand: a leading `[\w.-]*?` would be
 * retried at every position of the text): `NAME = v`, `NAME: v`, `"name": "v"`, `NAME := v`,
 * `::=`, `:::=`, `?=`, `.=`, `+=`, `=>`, typed declarations (`val token: String = "v"`,
 * `var apiToken string = "v"`, `String apiToken = "v"`), call arguments
 * (`setProperty("X_TOKEN", "v")`, `environ["X_TOKEN"] = "v"`), XML elements
 * (`<apiToken>v</apiToken>`, also multi-line) and command-line flags (`--token v`).
 */
const ASSIGNMENT_FORMS: Array<{ form: 'op' | 'typed' | 'xml' | 'flag'; source: string }> = [
  // (a comma only after a quoted name: `setProperty("X_TOKEN", v)`; `(key, value)` is a parameter list)
  {
    form: 'op',
    source: String.raw`(?:["'\]]{0,2}(?:\s*:\s*[A-Za-z][\w.<>\[\]?]*(?=\s*=))?\s*(?::{1,3}=|\?=|\.=|\+=|=>|=(?!=)|:(?!:))|["']\]?\s*,)\s*${VALUE}`,
  },
  { form: 'typed', source: String.raw`\s+[A-Za-z][\w.\[\]*]*\s*:?=\s*${VALUE}` },
  { form: 'xml', source: String.raw`(?:\s[^>]*)?>\s*${BARE_VALUE}\s*</` },
  { form: 'flag', source: String.raw`(?:=|\s+)${VALUE}` },
];
/** The secret word once, then the forms; one named empty group per form marks which matched. */
const ASSIGNMENT = new RegExp(`${SECRET_WORD}(?:${ASSIGNMENT_FORMS.map((f) => `(?<${f.form}>)${f.source}`).join('|')})`, 'gid');

type NameClass = 'password' | 'key' | 'token';

/** An assigned secret value must be at least this long to be judged by entropy. */
const ASSIGNMENT_MIN_CHARS = 12;
/** Below this many bits/char a value is a word or placeholder, not a generated secret. */
const ASSIGNMENT_MIN_ENTROPY = 3.0;
/** Passwords are chosen by people: shorter and lower entropy than generated tokens. */
const PASSWORD_MIN_CHARS = 8;
const PASSWORD_MIN_ENTROPY = 2.5;
/** A value of letters only, or digits only, needs more evidence: identifiers and numbers look alike. */
const SINGLE_CLASS_MIN_CHARS = 20;
const SINGLE_CLASS_MIN_ENTROPY = 3.5;
/** Ten symbols top out at 3.32 bits/char; 20 random digits sit near 3.0, a timestamp's digits lower. */
const DIGITS_MIN_ENTROPY = 2.9;

/**
 * camelCase, PascalCase or snake_case made of words (`getApiKeyFromEnvironment`): every piece
 * is a lower-case run or a capital followed by two or more lower-case letters. Random mixed-case
 * letters almost always hold a lone capital or a one-letter piece.
 */
function identifierLike(value: string): boolean {
  if (/[0-9]/.test(value)) return false;
  // words: an acronym (`API` of `APIKeys`), a capitalised word, a lower-case run
  const pieces = value.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+/g) ?? [];
  return pieces.length > 1 && pieces.every((p) => /^[a-z]{2,}$|^[A-Z][a-z]{2,}$|^[A-Z]{2,5}$/.test(p));
}

function classes(s: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(s)).length;
}

/** Case changes per letter pair: random mixed case ~0.5, camelCase identifiers ~0.2. */
function caseFlips(s: string): number {
  const letters = s.replace(/[^A-Za-z]/g, '');
  let flips = 0;
  for (let i = 1; i < letters.length; i++) {
    if (letters[i]! <= 'Z' !== letters[i - 1]! <= 'Z') flips++;
  }
  return letters.length > 1 ? flips / (letters.length - 1) : 0;
}

function looksGenerated(value: string, name: NameClass, quoted = false): boolean {
  if (isPlaceholder(value) || REPEATED_RUN.test(value) || PUBLIC_IDENTIFIER.test(value)) return false;
  const h = shannonEntropy(value);
  const hasDigit = /[0-9]/.test(value);
  const hasLetter = /[A-Za-z]/.test(value);
  if (quoted && /\s/.test(value)) {
    // A quoted password with spaces is a passphrase only when it is not a sentence.
    return name === 'password' && value.length >= 12 && classes(value) >= 3 && h >= 3.5 && !/^[A-Z]?[a-z]+(?: [a-z]+){2,}[.!?]?$/.test(value);
  }
  if (!hasLetter) return /^\d+$/.test(value) && value.length >= SINGLE_CLASS_MIN_CHARS && h >= DIGITS_MIN_ENTROPY;
  if (!hasDigit) {
    // Letters (and separators) only: a generated value when long, varied and not made of words.
    return (
      value.length >= SINGLE_CLASS_MIN_CHARS &&
      h >= SINGLE_CLASS_MIN_ENTROPY &&
      /[a-z]/.test(value) &&
      /[A-Z]/.test(value) &&
      caseFlips(value) >= 0.3 &&
      !identifierLike(value)
    );
  }
  if (name === 'password') return value.length >= PASSWORD_MIN_CHARS && h >= PASSWORD_MIN_ENTROPY && classes(value) >= 2;
  return value.length >= ASSIGNMENT_MIN_CHARS && h >= ASSIGNMENT_MIN_ENTROPY && classes(value) >= 2;
}

const GENERIC_STOPWORDS = new Set(GITLEAKS_RULES.find((r) => r.id === 'generic-api-key')?.allowlists?.flatMap((a) => a.stopwords ?? []) ?? []);
/** gitleaks' generic stopwords judge only long lower-case words: `act_`, `add-` would hit random tokens. */
const STOPWORD_MIN_CHARS = 5;
const STOPWORDS = [...GENERIC_STOPWORDS].filter((w) => w.length >= STOPWORD_MIN_CHARS && /^[a-z]+$/.test(w));

/** A value made of words from gitleaks' generic stopword list (`DOC_Vector_5_32`, `SalesResults-1.2`). */
function wordy(value: string): boolean {
  const parts = value
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((p) => p.length >= STOPWORD_MIN_CHARS);
  return parts.some((p) => STOPWORDS.some((w) => p.includes(w))) && /[_.\-]/.test(value) && caseFlips(value) < 0.3;
}

/**
 * A name from code rather than a value: pieces (split at `.` and `_`, trailing digits
 * dropped) that are all words or camelCase of words — `api_keys_1.APIKeys`, `contextToken2`,
 * `self.auth_token`. A generated token has pieces with digits inside, or one-letter pieces.
 */
function codeName(value: string): boolean {
  const pieces = value.split(/[._]+/).filter(Boolean);
  if (pieces.length === 0 || !/[A-Za-z]/.test(value)) return false;
  return pieces.every((p) => {
    const bare = p.replace(/\d{1,3}$/, '');
    return bare === '' ? /^\d{1,3}$/.test(p) : /^[a-z]{2,}$|^[A-Z]{2,5}$|^[A-Z][a-z]{2,}$/.test(bare) || identifierLike(bare);
  });
}

/** Dotted names with optional indices, the segments letters only (a token's segments hold digits). */
const DATA_PATH = /^[A-Za-z_$]+(?:\[\d+\])?(?:\.[A-Za-z_$]+(?:\[\d+\])?)+$/;

/** The name a secret word ends, read backwards from `wordStart`. */
function nameBefore(text: string, wordStart: number, wordEnd: number): { name: string; start: number } {
  let start = wordStart;
  const floor = Math.max(0, wordStart - NAME_MAX_CHARS);
  while (start > floor && NAME_CHAR.test(text[start - 1]!)) start--;
  return { name: text.slice(start, wordEnd), start };
}

function assignments(text: string, out: Candidate[]): void {
  ASSIGNMENT.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ASSIGNMENT.exec(text))) {
    const groups = m.groups!;
    const form = ASSIGNMENT_FORMS.find((f) => groups[f.form] !== undefined)!.form;
    // the value: the first defined capture group (the form markers are empty and named)
    let vi = -1;
    for (let g = 1; g < m.length; g++) {
      if (m[g]) {
        vi = g;
        break;
      }
    }
    if (vi < 0) continue;
    const word = /^[A-Za-z]+/.exec(m[0])![0];
    const { name, start: nameStart } = nameBefore(text, m.index, m.index + word.length);
    if (form === 'xml' && text[nameStart - 1] !== '<') continue;
    if (form === 'flag' && !(/^--?[A-Za-z]/.test(name) && (nameStart === 0 || /\s/.test(text[nameStart - 1]!)))) continue;
    if (NOT_SECRET_NAME.test(name.replace(/^-+/, '')) || PUBLIC_NAME.test(name)) continue;
    const value = m[vi]!;
    const [start, end] = m.indices![vi]!;
    // `cacheKey = computeCacheKey(input)`, `token = self.token`: code, not a value.
    const after = text[end];
    const quoted = text[start - 1] === '"' || text[start - 1] === "'" || text[start - 1] === '`';
    if (!quoted && (after === '(' || after === '[' || /^[A-Za-z_$][\w$]*\.[A-Za-z_$]/.test(value))) continue;
    // `key: 'rules[0].protects'`, `contextToken: contextToken2`: a name, quoted or not.
    if (DATA_PATH.test(value) || codeName(value)) continue;
    const cls: NameClass = /pass|pwd/i.test(name) ? 'password' : /key$/i.test(name) ? 'key' : 'token';
    if (!looksGenerated(value, cls, quoted)) continue;
    if (wordy(value)) continue;
    out.push({ kind: 'secret-assignment', start, end, priority: PRIORITY.assignment });
  }
}

// --- merging -----------------------------------------------------------------------------

function fromRule(f: RuleFinding): Candidate | undefined {
  if (isPlaceholder(f.secret) || PUBLIC_IDENTIFIER.test(f.secret)) return undefined;
  // gitleaks' generic rule takes any 10+ word characters after `key =`; a name is not a secret.
  if (f.ruleId === 'generic-api-key' && (codeName(f.secret) || DATA_PATH.test(f.secret) || PUBLIC_NAME.test(f.match.slice(0, f.match.lastIndexOf(f.secret)))))
    return undefined;
  const kind = kindOf(f.ruleId);
  return { kind, start: f.start, end: f.end, priority: kind === 'secret-assignment' ? PRIORITY.assignment : PRIORITY.rule };
}

/** Overlapping candidates become one span, named after the most specific source. */
function merge(cands: Candidate[]): SecretSpan[] {
  cands.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Candidate[] = [];
  for (const c of cands) {
    const last = out[out.length - 1];
    if (last && c.start < last.end) {
      last.end = Math.max(last.end, c.end);
      if (c.priority > last.priority) {
        last.kind = c.kind;
        last.priority = c.priority;
      }
      continue;
    }
    out.push({ ...c });
  }
  return out.map(({ kind, start, end }) => ({ kind, start, end }));
}

/** Every secret in `text` as non-overlapping spans, in order. */
export function findSecrets(text: string): SecretSpan[] {
  if (!text) return [];
  const cands: Candidate[] = [];
  for (const f of findWithRules(text)) {
    const c = fromRule(f);
    if (c) cands.push(c);
  }
  shapes(text, cands);
  assignments(text, cands);
  return merge(cands);
}

/** Replaces each span with `[REDACTED:<kind>]`. */
export function redactSpans(text: string, spans: readonly SecretSpan[]): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + `[REDACTED:${s.kind}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * Whether `findSecrets` could find anything: a superset test, cheap enough to run on every
 * SessionDB write. It holds when a gitleaks rule could match (./gitleaks.ts `couldMatch`), a
 * shape's anchor occurs, or a secret word is followed by what one of the assignment forms needs.
 */
const CANDIDATE_ANCHORS = new RegExp(
  [
    '-----BEGIN', // private-key blocks
    'sk-', // OpenAI keys
    '(?:Bearer|token)\\s+[A-Za-z0-9._~+/-]{20}', // bearer tokens
    ':\\/\\/[^\\s:\\/@\'"]+:[^\\s@\\/\'"]+@', // credentials in URLs
    // what the assignment forms need after the secret word: an operator (or a quoted name and a
    // comma), a type and `=`, the end of an XML tag, a flag's value
    `${SECRET_WORD}(?:["'\\]]{0,2}\\s*(?:[:=]|[.?+]=)|["']\\]?\\s*,|\\s+[A-Za-z][\\w.\\[\\]*]*\\s*:?=)`,
    `<[\\w.$-]*${SECRET_WORD}[\\s>]`, // <NAME>v</NAME>
    `(?:^|\\s)--?[\\w.$-]*${SECRET_WORD}[=\\s]`, // --NAME v
  ].join('|'),
  'i',
);

export function mightHoldSecret(text: string): boolean {
  if (!text) return false;
  return CANDIDATE_ANCHORS.test(text) || couldMatch(text, gitleaksRuleSet());
}
