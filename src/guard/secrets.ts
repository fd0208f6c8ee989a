/**
 * Secret files and secret values. `isSecretPath` says which files no tool reads (and why);
 * `redactSecrets` replaces secret-shaped values in text before it reaches the model or a
 * store. Matching is by shape (fixed token formats, key blocks) plus Shannon entropy for
 * assignments, so look-alikes in prose and placeholders such as `API_KEY=changeme` survive.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { GLOB_OPTIONS } from '../config/schema.js';
import type { GuardConfig } from './config.js';

export type SecretPathHit = { kind: string; reason: string };

/** Committed templates of .env files: they exist to be read and hold placeholders. */
const ENV_TEMPLATE = /^\.env\.(example|sample|template|dist|defaults)$/i;

const BUILTIN_SECRET_PATHS: Array<{ kind: string; test: (rel: string, base: string) => boolean; reason: string }> = [
  { kind: 'env-file', test: (_r, b) => (b === '.env' || b === '.envrc' || b.startsWith('.env.')) && !ENV_TEMPLATE.test(b), reason: '.env files hold credentials' },
  { kind: 'netrc', test: (_r, b) => b === '.netrc' || b === '_netrc', reason: '.netrc holds login passwords' },
  { kind: 'git-credentials', test: (_r, b) => b === '.git-credentials', reason: '.git-credentials holds tokens' },
  { kind: 'ssh', test: (r) => /(^|\/)\.ssh\//.test(r), reason: '.ssh/ holds SSH keys' },
  { kind: 'ssh-key', test: (_r, b) => /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(b), reason: 'SSH private keys are secret' },
  { kind: 'private-key', test: (_r, b) => /\.(pem|key|p12|pfx|jks|keystore)$/i.test(b), reason: 'key and certificate stores hold private keys' },
  { kind: 'aws', test: (r) => /(^|\/)\.aws\/(credentials|config)$/.test(r), reason: 'AWS credential files hold access keys' },
  { kind: 'gcloud', test: (r, b) => /(^|\/)(\.config\/)?gcloud\//.test(r) || b === 'application_default_credentials.json', reason: 'gcloud credential files hold tokens' },
  { kind: 'kube', test: (r) => /(^|\/)\.kube\/config$/.test(r), reason: 'kubeconfig holds cluster credentials' },
  { kind: 'docker', test: (r) => /(^|\/)\.docker\/config\.json$/.test(r), reason: 'Docker config holds registry auth' },
  { kind: 'pypirc', test: (_r, b) => b === '.pypirc', reason: '.pypirc holds package index passwords' },
];

/** `.npmrc` is only secret when it carries auth; a registry URL alone is fine to read. */
const NPMRC_AUTH = /(_authToken|_auth|_password)\s*=|\/\/[^\s]*:_/;

const matchers = new Map<string, (p: string) => boolean>();
function globMatcher(g: string): (p: string) => boolean {
  let m = matchers.get(g);
  if (!m) matchers.set(g, (m = picomatch(g, GLOB_OPTIONS)));
  return m;
}

function normalise(rel: string): string {
  return rel.replace(/\\/g, '/').replace(/^\.\//, '');
}

/**
 * Whether a repository-relative path is a secret file no tool may read, and why.
 * `root` lets `.npmrc` be judged on its content (auth tokens or not).
 */
export function isSecretPath(rel: string, config?: GuardConfig, opts: { root?: string } = {}): SecretPathHit | undefined {
  const path = normalise(rel);
  const base = path.slice(path.lastIndexOf('/') + 1);
  for (const p of BUILTIN_SECRET_PATHS) {
    if (p.test(path, base)) return { kind: p.kind, reason: p.reason };
  }
  if (base === '.npmrc') {
    if (!opts.root) return { kind: 'npmrc', reason: '.npmrc may hold registry tokens' };
    try {
      if (NPMRC_AUTH.test(readFileSync(join(opts.root, path), 'utf8'))) return { kind: 'npmrc', reason: '.npmrc holds registry auth tokens' };
    } catch {
      // unreadable or missing: nothing secret to protect
    }
  }
  const extra = config?.guard?.secretPaths ?? [];
  if (extra.length > 0) {
    for (const g of extra) {
      // `.npmrc` in the config defaults is content-checked above, not refused outright.
      if (base === '.npmrc' && /(^|\/)\.npmrc$/.test(g)) continue;
      if (globMatcher(g)(path)) return { kind: 'config', reason: `listed in guard.secretPaths (${g})` };
    }
  }
  return undefined;
}

/** The sentence a file tool answers with when it refuses a secret path. */
export function secretPathMessage(rel: string, hit: SecretPathHit): string {
  return `Refused: ${rel} is a secret file (${hit.reason}); hermesd tools do not read secret files. ` +
    `Ask the user for the value you need, or read a template such as .env.example. ` +
    `(Loosen with guard.secretPaths in .hermes/config.yaml for configured paths.)`;
}

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

const PLACEHOLDER = /^(x+|\*+|\.+|-+|0+|changeme|change_me|password|secret|token|null|none|nil|undefined|true|false|todo|tbd|redacted|example|dummy|placeholder)$|your[_-]?|<[^>]*>|\{\{|\$\{|^\$[A-Za-z_]|xxxx|example|placeholder|redacted|dummy|changeme|replace[_-]?me|insert[_-]|fake|sample/i;

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
  { kind: 'url-credentials', re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]+:([^\s@/'"]+)@/gi, group: 1, accept: (m) => !PLACEHOLDER.test(m[1]!) && !/^\$/.test(m[1]!) },
];

/**
 * `NAME = value`, `NAME: value`, `"name": "value"`, `--name=value` where NAME ends in
 * key/token/secret/password… (case-insensitive). Group 2 is the value.
 */
const ASSIGNMENT =
  /([A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|passwd|passphrase|pwd|credentials?|auth))["']?\s*(?::=|=>|[:=])\s*["'`]?([A-Za-z0-9_\-+/=.~!@#$%^&*?]+)/gi;

function redactKnown(text: string, known: readonly string[], redactions: Redaction[]): string {
  let out = text;
  for (const value of [...known].sort((a, b) => b.length - a.length)) {
    if (value.length < KNOWN_SECRET_MIN_CHARS || !out.includes(value)) continue;
    const parts = out.split(value);
    for (let i = 1; i < parts.length; i++) redactions.push({ kind: 'secret-file-value' });
    out = parts.join('[REDACTED:secret-file-value]');
  }
  return out;
}

/** Shorter values from secret files are too likely to be ordinary words to replace everywhere. */
export const KNOWN_SECRET_MIN_CHARS = 6;

/**
 * Replaces secret-shaped values with `[REDACTED:<kind>]`. `known` adds exact values to
 * remove wherever they appear (e.g. the values of the repository's .env files).
 */
export function redactSecrets(text: string, opts: { known?: readonly string[] } = {}): RedactResult {
  const redactions: Redaction[] = [];
  if (!text) return { text, redactions };
  let out = opts.known && opts.known.length > 0 ? redactKnown(text, opts.known, redactions) : text;
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

/**
 * Values worth removing verbatim from terminal output: the right-hand sides of the
 * assignments in secret files (so `cat .env` shows no password, however guessable).
 */
export function secretValuesIn(content: string): string[] {
  const values = new Set<string>();
  for (const line of content.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(.*)$/.exec(line);
    if (!m) continue;
    let v = m[1]!.trim();
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    if (v.length >= KNOWN_SECRET_MIN_CHARS && !PLACEHOLDER.test(v)) values.add(v);
  }
  return [...values];
}
