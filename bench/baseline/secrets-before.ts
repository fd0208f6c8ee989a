/**
 * FROZEN COPY, for comparison only: the secret-pattern part of the secrets module and the
 * SessionDB pre-test of the prefilter, both then in src/guard (now src/security/secrets.ts and
 * src/security/prefilter.ts), as they were before (commit decb608).
 * `npm run bench -- detectors` measures it beside the current detector on the same inputs.
 * Not used by hermesd itself.
 */
export type Redaction = { kind: string };
export type RedactResult = { text: string; redactions: Redaction[] };

/** Bits per character: random base64 sits near 6, hex near 4, English words near 2.5–3. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** An assigned secret value must be at least this long to be judged by entropy. */
const ASSIGNMENT_MIN_CHARS = 12;
/** Below this many bits/char a value is a word or placeholder, not a generated secret. */
const ASSIGNMENT_MIN_ENTROPY = 3.0;
/** Passwords are chosen by people: shorter and lower entropy than generated tokens. */
const PASSWORD_MIN_CHARS = 8;
const PASSWORD_MIN_ENTROPY = 2.5;

const PLACEHOLDER =
  /^(x+|\*+|\.+|-+|0+|changeme|change_me|password|secret|token|null|none|nil|undefined|true|false|todo|tbd|redacted|example|dummy|placeholder)$|your[_-]?|<[^>]*>|\{\{|\$\{|^\$[A-Za-z_]|xxxx|example|placeholder|redacted|dummy|changeme|replace[_-]?me|insert[_-]|fake|sample/i;

function classes(s: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(s)).length;
}

function looksGenerated(value: string, password: boolean): boolean {
  if (PLACEHOLDER.test(value)) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return password ? value.length >= 12 && shannonEntropy(value) >= 3.5 && classes(value) >= 2 : false;
  if (password) return value.length >= PASSWORD_MIN_CHARS && shannonEntropy(value) >= PASSWORD_MIN_ENTROPY && classes(value) >= 2;
  return value.length >= ASSIGNMENT_MIN_CHARS && shannonEntropy(value) >= ASSIGNMENT_MIN_ENTROPY && classes(value) >= 2;
}

type Pattern = { kind: string; re: RegExp; accept?: (m: RegExpExecArray) => boolean; group?: number };

/** OpenAI keys: `sk-` + ≥20 chars with letters and digits, so `sk-learn` or `sk-some-words` stay. */
function openAiAccept(m: RegExpExecArray): boolean {
  const body = m[0].replace(/^sk-(proj-|svcacct-|admin-|ant-(api\d+-)?)?/, '');
  return body.length >= 20 && /[0-9]/.test(body) && /[A-Za-z]/.test(body) && shannonEntropy(body) >= 3.5;
}

const PATTERNS: Pattern[] = [
  // An unterminated block (cut-off output) is redacted up to the end, or to a quote when it sits inside a JSON string.
  { kind: 'private-key', re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----(?:[^"]*?-----END \1PRIVATE KEY( BLOCK)?-----|(?:[^"\\]|\\[^"])*)/g },
  { kind: 'aws-access-key', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: 'github-token', re: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g },
  { kind: 'github-token', re: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: 'openai-key', re: /\bsk-[A-Za-z0-9_-]{20,}/g, accept: openAiAccept },
  { kind: 'slack-token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, accept: (m) => /[0-9]/.test(m[0]) },
  { kind: 'stripe-key', re: /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: 'google-api-key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: 'bearer-token', re: /\b(?:Bearer|token)\s+([A-Za-z0-9._~+/-]{20,}=*)/g, group: 1, accept: (m) => looksGenerated(m[1]!, false) },
  {
    kind: 'url-credentials',
    re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]+:([^\s@/'"]+)@/gi,
    group: 1,
    accept: (m) => !PLACEHOLDER.test(m[1]!) && !/^\$/.test(m[1]!),
  },
];

/**
 * `NAME = value`, `NAME: value`, `"name": "value"`, `--name=value` where NAME ends in
 * key/token/secret/password… (case-insensitive). Group 2 is the value.
 */
const ASSIGNMENT =
  /([A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|passwd|passphrase|pwd|credentials?|auth))["']?\s*(?::=|=>|[:=])\s*["'`]?([A-Za-z0-9_\-+/=.~!@#$%^&*?]+)/gi;

/**
 * Replaces secret-shaped values with `[REDACTED:<kind>]`. `known` adds exact values to
 * remove wherever they appear (e.g. the values of the repository's .env files).
 */
export function redactSecrets(text: string): RedactResult {
  const redactions: Redaction[] = [];
  if (!text) return { text, redactions };
  let out = text;
  for (const p of PATTERNS) {
    out = out.replace(p.re, (...args) => {
      const m = args.slice(0, -2) as unknown as RegExpExecArray;
      if (p.accept && !p.accept(m)) return m[0];
      redactions.push({ kind: p.kind });
      if (p.group === undefined) return `[REDACTED:${p.kind}]`;
      const value = m[p.group]!;
      const at = m[0].lastIndexOf(value);
      return m[0].slice(0, at) + `[REDACTED:${p.kind}]` + m[0].slice(at + value.length);
    });
  }
  out = out.replace(ASSIGNMENT, (whole, name: string, value: string) => {
    if (value.startsWith('[REDACTED')) return whole;
    const password = /pass|pwd/i.test(name);
    if (!looksGenerated(value, password)) return whole;
    redactions.push({ kind: 'secret-assignment' });
    const at = whole.lastIndexOf(value);
    return whole.slice(0, at) + '[REDACTED:secret-assignment]' + whole.slice(at + value.length);
  });
  return { text: out, redactions };
}

export const SECRET_CANDIDATE = new RegExp(
  [
    '-----BEGIN',
    'A(?:KI|SI|BI|CC)A',
    'gh[pousr]_',
    'github_pat_',
    'sk-',
    'xox[abposr]-',
    'k_(?:live|test)_',
    'AIza',
    'eyJ',
    '(?:Bearer|token)\\s',
    ':\\/\\/[^\\s:\\/@\'"]+:[^\\s@\\/\'"]+@',
    '(?:key|token|secret|passw(?:or)?d|passwd|passphrase|pwd|credentials?|auth)["\']?\\s*[:=]',
  ].join('|'),
  'i',
);

export function redactForStorage(text: string): string {
  return text && SECRET_CANDIDATE.test(text) ? redactSecrets(text).text : text;
}
