/**
 * Secret values out of text: `redactSecrets` replaces them before text reaches the model or a
 * store. The detection itself is secrets.ts (gitleaks' rule set plus the variable-name
 * heuristic), so look-alikes and placeholders such as `API_KEY=changeme` survive; known
 * values (a repository's .env files) are removed verbatim first.
 */
import { findSecrets, isPlaceholder, redactSpans, shannonEntropy } from './secrets.js';

export type Redaction = { kind: string };
export type RedactResult = { text: string; redactions: Redaction[] };

/** Bits per character (src/security/gitleaks.ts): random base64 sits near 6, hex near 4, English words near 2.5–3. */
export { shannonEntropy };

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
 * Replaces secret values with `[REDACTED:<kind>]` (src/security/secrets.ts: gitleaks' rules,
 * a few shapes, the variable-name heuristic; placeholders and public identifiers stay).
 * `known` adds exact values to remove wherever they appear (e.g. the values of the
 * repository's .env files).
 */
export function redactSecrets(text: string, opts: { known?: readonly string[] } = {}): RedactResult {
  const redactions: Redaction[] = [];
  if (!text) return { text, redactions };
  const out = opts.known && opts.known.length > 0 ? redactKnown(text, opts.known, redactions) : text;
  // Spans inside a marker `redactKnown` already put there are left to it.
  const markers = [...out.matchAll(/\[REDACTED:[\w-]+\]/g)].map((m) => [m.index!, m.index! + m[0].length] as const);
  const spans = findSecrets(out).filter((s) => !markers.some(([a, b]) => s.start < b && s.end > a));
  for (const s of spans) redactions.push({ kind: s.kind });
  return { text: redactSpans(out, spans), redactions };
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
    if (v.length >= KNOWN_SECRET_MIN_CHARS && !isPlaceholder(v)) values.add(v);
  }
  return [...values];
}
