/**
 * A fast path for redaction where it runs on every write (the SessionDB). Every stored message goes through the guard's
 * `redactSecrets` (issue 9), which runs a dozen regular expressions over the text: ~11 µs for
 * a 200-byte message, a tenth of the whole cost of an insert with its two FTS indexes. Almost
 * no message holds anything secret-shaped, so one cheap pre-test decides whether the full
 * redaction has to run at all.
 *
 * SECRET_CANDIDATE must match every text in which `redactSecrets` (without `known` values)
 * could change anything: each alternative is the literal part that a pattern of
 * secrets.ts cannot match without, case-insensitively (a superset, never narrower).
 * test/sessions-write-and-filter-paths.test.ts holds it to that. When a pattern is added to the
 * guard, add its anchor here.
 */
import { redactSecrets } from './secrets.js';

export const SECRET_CANDIDATE = new RegExp(
  [
    '-----BEGIN', // private-key blocks
    'A(?:KI|SI|BI|CC)A', // AWS access key ids
    'gh[pousr]_', // GitHub tokens
    'github_pat_',
    'sk-', // OpenAI keys
    'xox[abposr]-', // Slack tokens
    'k_(?:live|test)_', // Stripe keys
    'AIza', // Google API keys
    'eyJ', // JWTs
    '(?:Bearer|token)\\s', // bearer tokens
    ':\\/\\/[^\\s:\\/@\'"]+:[^\\s@\\/\'"]+@', // credentials in URLs
    // NAME = value where NAME ends in key/token/secret/password…: the assignment operator follows
    '(?:key|token|secret|passw(?:or)?d|passwd|passphrase|pwd|credentials?|auth)["\']?\\s*[:=]',
  ].join('|'),
  'i',
);

/** `redactSecrets(text).text`, skipped when the text has nothing secret-shaped in it. */
export function redactForStorage(text: string): string {
  return text && SECRET_CANDIDATE.test(text) ? redactSecrets(text).text : text;
}
