/**
 * hermesd's own allowlists, beside gitleaks' (src/security/gitleaks-rules.ts, generated, applied
 * exactly as gitleaks applies its own: entropy, then the global allowlist, then the rule's). Each
 * entry is a value shape that gitleaks' rule flags but that is public by construction, found in
 * real history (docs/benchmarks.md#secrets-history); each has a test that a credential of the
 * same rule next to it is still found (test/security/secrets-history-false-positives.test.ts).
 */
import type { AllowlistData } from './secret-rule-types.js';

export const HERMESD_ALLOWLISTS: Readonly<Record<string, readonly AllowlistData[]>> = {
  'generic-api-key': [
    {
      // `buf generate buf.build/googleapis/googleapis:9475e2896f8a46d09806149f9382e538`: the
      // keyword is the "api" of the module's name, the value the commit of a public schema module
      // (bufbuild/protobuf-es, packages/bundle-size/package.json). The whole match is the module's
      // name and that commit id: `<name>:<32 hex>` right after `buf.build/<owner>/`.
      description: 'buf module references: buf.build/<owner>/<module>:<commit id>',
      regexTarget: 'line',
      condition: 'AND',
      regexes: [{ source: '\\bbuf\\.build/[\\w.-]+/[\\w.-]+:[0-9a-f]{32}\\b' }],
    },
  ],
};
