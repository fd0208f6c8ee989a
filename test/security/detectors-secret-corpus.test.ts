/**
 * The secret detectors' goals, held on public corpora (test/fixtures/README.md): gitleaks' own rule
 * samples in assignment context ≥ 98% redacted; the values alone at least as often as gitleaks'
 * rules find them; gitleaks' deliberately tricky negatives flagged ≤ 5%. Plus the cases the
 * issue names one by one, and the SessionDB pre-test staying a superset on all of it.
 */
import { describe, expect, it } from 'vitest';
import { detectSecretsCorpus, gitleaksCorpus } from '../../bench/detector-corpus.js';
import { redactForStorage } from '../../src/security/prefilter.js';
import { redactSecrets } from '../../src/security/redact.js';
import { findWithRules } from '../../src/security/gitleaks.js';
import { GITLEAKS_RULES, GITLEAKS_VERSION } from '../../src/security/gitleaks-rules.js';
import { mightHoldSecret } from '../../src/security/secrets.js';

const corpus = gitleaksCorpus();
const flagged = (text: string) => redactSecrets(text).redactions.length > 0;
const rate = (xs: unknown[], n: number) => n / xs.length;

describe('gitleaks rule data', () => {
  it(`is gitleaks ${GITLEAKS_VERSION}'s rule set, every regex compiling in this Node`, () => {
    expect(GITLEAKS_RULES.length).toBeGreaterThan(200);
    for (const r of GITLEAKS_RULES) {
      if (r.regex) expect(() => new RegExp(r.regex!.source, r.regex!.flags), r.id).not.toThrow();
      expect(
        r.keywords.every((k) => k === k.toLowerCase()),
        r.id,
      ).toBe(true);
    }
  });

  it("the translated rules find gitleaks' own samples (≥ 99% in context)", () => {
    const found = corpus.inContext.filter((s) => findWithRules(s.text).length > 0).length;
    expect(rate(corpus.inContext, found)).toBeGreaterThanOrEqual(0.99);
  });
});

describe("gitleaks' samples against hermesd's redaction", () => {
  it('in assignment context: ≥ 98% redacted, the secret value gone from the text', () => {
    const missed = corpus.inContext.filter((s) => {
      const out = redactSecrets(s.text).text;
      return s.value ? out.includes(s.value) : out === s.text;
    });
    expect(rate(corpus.inContext, corpus.inContext.length - missed.length), JSON.stringify(missed.slice(0, 5))).toBeGreaterThanOrEqual(0.98);
  });

  it("values alone: at least as many as gitleaks' rules find", () => {
    const ours = corpus.values.filter((s) => flagged(s.text)).length;
    const theirs = corpus.values.filter((s) => findWithRules(s.text).length > 0).length;
    expect(ours).toBeGreaterThanOrEqual(theirs);
  });

  it("gitleaks' false-positive samples: ≤ 5% flagged (of those no gitleaks rule flags)", () => {
    const negatives = corpus.falsePositives.filter((s) => findWithRules(s.text).length === 0);
    expect(negatives.length).toBeGreaterThan(200);
    const hit = negatives.filter((s) => flagged(s.text));
    expect(rate(negatives, hit.length), JSON.stringify(hit.map((s) => s.text))).toBeLessThanOrEqual(0.05);
  });

  it('the SessionDB pre-test lets every sample through that the redaction would change', () => {
    for (const s of [...corpus.inContext, ...corpus.values, ...corpus.falsePositives]) {
      if (flagged(s.text)) expect(mightHoldSecret(s.text), s.text).toBe(true);
      expect(redactForStorage(s.text)).toBe(redactSecrets(s.text).text);
    }
  });
});

describe("detect-secrets' plugin test lines", () => {
  const lines = detectSecretsCorpus();
  it('most of its secrets are redacted and most of its non-secrets are left', () => {
    const secrets = lines.filter((l) => l.secret);
    const plain = lines.filter((l) => !l.secret);
    expect(rate(secrets, secrets.filter((l) => flagged(l.text)).length)).toBeGreaterThanOrEqual(0.6);
    expect(rate(plain, plain.filter((l) => flagged(l.text)).length)).toBeLessThanOrEqual(0.25);
  });
});

describe('the cases the detectors were built for', () => {
  // Random-looking but made up here; concatenated so no token literal sits in this file.
  const R = 'q7Xk2Lm9Vp4Rz8Tn3Wb6';
  const lower = (n: number) => 'q7xk2lm9vp4rz8tn3wb6yc5hd1jf0ga8se'.repeat(3).slice(0, n);
  it.each([
    ['GitLab PAT', 'glpat-' + R],
    ['GitLab runner token', 'glrt-' + R],
    ['GitLab OAuth secret', 'gloas-' + R + R + R + 'a8Kd'],
    ['GitLab runner registration token', 'GR1348941' + R],
    ['Slack app token', 'xapp-1-A052FGTS2DL-5171572773297-' + '610b6a11f4b7eb819e87b767d80e6575a3634791acb9a9ead051da879eb5b55e'],
    ['Stripe production key', 'sk_prod_' + R + R],
    ['npm token', 'npm_' + lower(36)],
    ['SendGrid key', 'SG.' + lower(22) + '.' + lower(43)],
    ['DigitalOcean token', 'dop_v1_' + '4f9c1a7e2b8d3c6f0a5e9b2d7c4f1a8e3b6d9c2f5a8e1b4d7c0f3a6e9b2d5c8f'],
    ['Shopify token', 'shpat_' + '4f9c1a7e2b8d3c6f0a5e9b2d7c4f1a8e'],
    ['Vault token', 'hvs.' + R + R + R + R + 'Q1w2E3r4T5y6U7i8O9p0As'],
  ])('%s is redacted on its own', (_name, token) => {
    const r = redactSecrets(`token is ${token} ok`);
    expect(r.text, token).not.toContain(token);
  });

  it.each([
    ['typed Go declaration', 'var apiToken string = "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"'],
    ['make ?=', 'API_TOKEN ?= "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"'],
    ['make ::=', 'API_TOKEN ::= "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"'],
    ['php .=', '$apiToken .= "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"'],
    ['System.setProperty', 'System.setProperty("API_TOKEN", "Zt81LmQ0vXc3Rk5Yh2Wn7Pb")'],
    ['XML element', '<apiToken>Zt81LmQ0vXc3Rk5Yh2Wn7Pb</apiToken>'],
    ['XML element on its own line', '<apiToken>\n    Zt81LmQ0vXc3Rk5Yh2Wn7Pb\n</apiToken>'],
    ['Kotlin typed', 'val apiToken: String = "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"'],
    ['quoted password with spaces and braces', 'password = "c0rrect {horse} B4ttery st@ple"'],
    ['letters only after a secret name', 'HF_TOKEN=hfXqPmZrTvWbNcYdLfGhJkQsRvTwXyZaBcDe'],
    ['digits only after a secret name', 'PIN_SECRET=84736251947362810395'],
    ['CLI flag', 'huggingface-cli login --token hf_XqPmZrTvWbNcYdLfGhJkQsRvTwXyZaBc'],
    [
      'encrypted PEM with headers',
      '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0D5E\n\nZt81LmQ0vXc3Rk5Yh2Wn7Pb+/q1\n-----END RSA PRIVATE KEY-----',
    ],
  ])('%s', (_name, text) => {
    const r = redactSecrets(text);
    expect(r.redactions.length, r.text).toBeGreaterThan(0);
    expect(r.text).not.toMatch(/Zt81LmQ0vXc3Rk5Yh2Wn7Pb|B4ttery|XqPmZrTvWbNcYdLfGhJ|84736251947362810395/);
  });

  it.each([
    ['ghp_ placeholder', 'GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'],
    ['AKIA placeholder', 'aws_access_key_id = AKIAXXXXXXXXXXXXXXXX'],
    ["AWS's documented example key", 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE'],
    ['private key placeholder', '-----BEGIN PRIVATE KEY----- anything'],
    ['schemaKey', "schemaKey = 'DOC_Vector_5_32'"],
    ['bucket_key', '"bucket_key": "SalesResults-1.2"'],
    ['Stripe publishable key', 'STRIPE_PUBLISHABLE_KEY=pk_live_51HqA2bC3dE4fG5hI6jK7lM8nO9pQ0rS1tU2vW3xY4zA5bC6'],
    ['camelCase identifier after a key name', 'const apiKey = getApiKeyFromEnvironmentVariables'],
    ['an identifier is not a password', 'password = passwordInputFieldValidator'],
    ['a sentence in quotes', 'password = "the one you chose at signup"'],
    ['timestamps', 'token_expires_at = 1699999999999'],
    ['a path into data', "{ key: 'rules[0].protects', message: 'unknown key' }"],
    ['destructuring with renamed names', 'const { contextToken: contextToken2, previousToken: previousToken2 } = state;'],
    ['a member assigned to a key name', 'Projects.APIKeys = api_keys_1.APIKeys;'],
    ['the PEM header in prose', 'a block that starts `-----BEGIN PRIVATE KEY-----` and never ends is still removed'],
    ['a URL template', 'connect with `postgres://user:pass@host/db`'],
    ['a URL example with a three-letter password', "const myURL = new URL('https://abc:xyz@example.com');"],
    ['a public key pin', ' *   Public key ping-sha256: pL1+qb9HTMRZJmuC/bB/ZI9d302BYrrqiVuRyW+DGrU='],
  ])('%s is left alone', (_name, text) => {
    expect(redactSecrets(text).redactions).toEqual([]);
  });
});
