/**
 * hermesd's own additions to gitleaks' allowlists: public identifiers that gitleaks' generic rule
 * takes for secrets, seen as false positives in the full history of public repositories
 * (docs/benchmarks.md#detectors, `node scripts/secrets-history.mjs`). gitleaks v8.30.0 reports
 * both (its generic allowlist, stopwords and entropy threshold leave them in), so they are
 * hermesd's, kept apart from the generated gitleaks data (./gitleaks-rules.ts) and applied after
 * gitleaks' allowlists (./gitleaks.ts).
 *
 * Each is narrower than a gitleaks allowlist can say: the value must have the identifier's exact
 * shape AND sit where the identifier sits — `before` is tested on the secret's line up to the
 * secret, so another value on the same line is still judged.
 */

export type Allowance = {
  id: string;
  /** The rules whose findings it may allow. */
  rules: readonly string[];
  description: string;
  /** The whole secret. */
  secret: RegExp;
  /** The secret's line up to the secret (ends where the secret starts). */
  before: RegExp;
};

export const HERMESD_ALLOWANCES: readonly Allowance[] = [
  {
    id: 'buf-module-commit',
    rules: ['generic-api-key'],
    description:
      'a Buf Schema Registry module reference, `buf.build/<owner>/<module>:<commit>`: the commit is a public 32-hex id (`"generate": "buf generate buf.build/googleapis/googleapis:<commit>"` in a package.json; buf.yaml deps)',
    secret: /^[0-9a-f]{32}$/,
    before: /(?:^|[^\w.-])(?:buf\.build|[\w-]+\.buf\.dev)\/[\w.-]+\/[\w.-]+:$/,
  },
  {
    id: 'git-object-id',
    rules: ['generic-api-key'],
    description:
      'a git commit id (SHA-1, 40 hex; SHA-256, 64 hex) assigned to a name ending in commit, sha or rev(ision): `googleapis_commit = "<sha>"` (Bazel, pinned sources), where the keyword is only the "api" of "googleapis"',
    secret: /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/,
    before: /(?:^|[^A-Za-z0-9])(?:commit|sha1?|rev|revision)["']?[ \t]*(?:=|:|:=|=>)[ \t]*["'`]?$/i,
  },
];
