/**
 * A fast path for redaction where it runs on every write (the SessionDB). Almost no message
 * holds anything secret-shaped, so one cheap pre-test decides whether the full redaction
 * (src/security/secrets.ts: gitleaks' rules, shapes, the variable-name heuristic) has to run.
 *
 * SECRET_CANDIDATE must hold for every text in which `redactSecrets` (without `known` values)
 * could change anything — a superset, never narrower: it is `mightHoldSecret`, which tests
 * gitleaks' rare keywords, the own regex of rules whose keywords are common words, and the
 * anchors of the other detectors. test/sessions/sessions-write-and-filter-paths.test.ts holds it to that.
 */
import { mightHoldSecret } from './secrets.js';
import { redactSecrets } from './redact.js';

export const SECRET_CANDIDATE: { test(text: string): boolean } = { test: mightHoldSecret };

/** `redactSecrets(text).text`, skipped when the text has nothing secret-shaped in it. */
export function redactForStorage(text: string): string {
  return text && mightHoldSecret(text) ? redactSecrets(text).text : text;
}
