/**
 * gitleaks' rules applied as gitleaks v8.30.0 applies them (detect/detect.go, config/allowlist.go),
 * held to gitleaks' own validation: every rule alone, with the global allowlist, finds each of
 * its true positives and none of its false positives (cmd/generate/config/utils/validate.go),
 * the generic rule's included (cmd/generate/config/rules/generic.go; the samples are data in
 * test/fixtures/gitleaks-samples.json, MIT, see its README). Then the points of gitleaks'
 * semantics the samples do not reach, each by a case built for it; hermesd's own allowances
 * (src/security/allowances.ts) for the false positives seen in real histories — gitleaks reports
 * them, hermesd does not, anything else on the line still counts; and a commit range judged as
 * `hermesd check --commits` judges it.
 * (Secret-shaped values are built at run time: the repository holds no token literal.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitleaksRuleSamples } from '../../bench/detector-corpus.js';
import { checkRange } from '../../src/rules/range.js';
import { compileRuleSet, findWithRules, gitleaksFileRuleSet, pathFindings, shannonEntropy } from '../../src/security/gitleaks.js';
import { GITLEAKS_GLOBAL_ALLOWLIST, GITLEAKS_RULES } from '../../src/security/gitleaks-rules.js';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** Rules gitleaks keeps samples for but leaves out of its config (main.go: commented out or not listed). */
const NOT_IN_CONFIG = ['gcp-service-account', 'square-secret', 'trello-access-token'];

/** gitleaks alone: no hermesd allowance. */
const pure = (rules = GITLEAKS_RULES) => compileRuleSet(rules, GITLEAKS_GLOBAL_ALLOWLIST, { withPaths: true });

describe("gitleaks' own validation of each rule", () => {
  const samples = gitleaksRuleSamples();

  it('the samples of every configured rule are there, the generic rule’s included', () => {
    const ids = new Set(GITLEAKS_RULES.map((r) => r.id));
    expect(samples.filter((s) => !ids.has(s.rule)).map((s) => s.rule)).toEqual(NOT_IN_CONFIG);
    const generic = samples.find((s) => s.rule === 'generic-api-key')!;
    // generic.go: 2 values in 26 assignment contexts + 11 lines; 74 negatives
    expect([generic.tps.length, generic.fps.length]).toEqual([63, 74]);
  });

  it('each rule alone finds every true positive and no false positive', () => {
    const wrong: string[] = [];
    let tps = 0;
    let fps = 0;
    for (const s of samples) {
      const rule = GITLEAKS_RULES.find((r) => r.id === s.rule);
      if (!rule) continue;
      const set = pure([rule]);
      const count = (t: { text: string; path?: string }) => findWithRules(t.text, set, t.path).length + (t.path ? pathFindings(t.path, set).length : 0);
      for (const tp of s.tps) {
        tps++;
        // Validate: at least one finding; ValidateWithPaths: exactly one
        const n = count(tp);
        if (tp.path ? n !== 1 : n < 1)
          wrong.push(`${s.rule} missed (${n} findings)${tp.path ? ` in ${tp.path}` : ''}: ${JSON.stringify(tp.text.slice(0, 120))}`);
      }
      for (const fp of s.fps) {
        fps++;
        if (count(fp) > 0) wrong.push(`${s.rule} flagged a negative${fp.path ? ` in ${fp.path}` : ''}: ${JSON.stringify(fp.text.slice(0, 120))}`);
      }
    }
    expect(wrong, `rules that disagree with gitleaks' validation:\n${wrong.slice(0, 20).join('\n')}`).toEqual([]);
    expect(tps).toBeGreaterThan(6000);
    expect(fps).toBeGreaterThan(350);
  });
});

describe("gitleaks' semantics where the samples do not reach", () => {
  const generic = pure([GITLEAKS_RULES.find((r) => r.id === 'generic-api-key')!]);
  const VALUE = 'Zt81LmQ0vXc3Rk5Yh2Wn7Pb';

  it("a `line` allowlist reads every line of the match (gitleaks' Line), not only the secret's", () => {
    // The match starts on the line with `--mount=type=secret,` (generic.go's Docker allowlist) and the value is on the next.
    const text = `RUN --mount=type=secret,id=npm api_token\n= "${VALUE}"`;
    expect(findWithRules(text, generic)).toEqual([]);
    // the same value with no Docker mount on the match's first line is found
    expect(findWithRules(`RUN echo api_token\n= "${VALUE}"`, generic).map((f) => f.secret)).toEqual([VALUE]);
  });

  it('the secret is what the regex finds in the match alone, once its newlines are trimmed (FindStringSubmatch on the match)', () => {
    // In the text, the first branch matches `k12\n` (group 1: "12"); the match trimmed is `k12`,
    // where only the second branch matches: gitleaks' secret is its group, "2".
    const set = compileRuleSet(
      [{ id: 'probe', description: 'probe', regex: { source: 'k(\\d+)\\n|k\\d(\\d+)$' }, keywords: ['k'] }],
      GITLEAKS_GLOBAL_ALLOWLIST,
    );
    expect(findWithRules('k12\nrest', set).map((f) => [f.secret, f.start, f.end])).toEqual([['2', 2, 3]]);
  });

  it('entropy is counted over UTF-8 bytes, as gitleaks counts it', () => {
    // 'é' is one character of two bytes: gitleaks' frequency is 1/2 → 0.5 bits
    expect(shannonEntropy('é')).toBeCloseTo(0.5, 10);
    expect(shannonEntropy('ab')).toBeCloseTo(1, 10);
  });
});

describe("hermesd's allowances: public identifiers gitleaks reports", () => {
  // protobuf-es's packages/bundle-size/package.json (the issue's finding), and buf.yaml's deps
  const BUF_COMMIT = '9475e2896f8a46d09806149f9382e538';
  const bufScript = `  "scripts": {\n    "generate": "buf generate buf.build/googleapis/googleapis:${BUF_COMMIT}",\n`;
  // grpc-gateway's repositories.bzl
  const GIT_COMMIT = 'e1c0c726290a55065c0c46a62dacc9372939973b';
  const bazel = `def _googleapis_repository_impl(ctx):\n    googleapis_commit = "${GIT_COMMIT}"\n`;
  const GITHUB = 'ghp_' + 'Zk3Q9mW2xR7tY4uP8vN1bL6cH0jD5fG8sA2e';
  const found = (text: string, path: string) => findWithRules(text, gitleaksFileRuleSet(), path).map((f) => `${f.ruleId} ${f.secret}`);

  it('gitleaks itself reports both (its allowlists, stopwords and entropy threshold leave them in)', () => {
    expect(findWithRules(bufScript, pure(), 'package.json').map((f) => `${f.ruleId} ${f.secret}`)).toEqual([`generic-api-key ${BUF_COMMIT}`]);
    expect(findWithRules(bazel, pure(), 'repositories.bzl').map((f) => `${f.ruleId} ${f.secret}`)).toEqual([`generic-api-key ${GIT_COMMIT}`]);
  });

  it('a buf module reference and a commit id named as one are not secrets', () => {
    expect(found(bufScript, 'package.json')).toEqual([]);
    expect(found(`deps:\n  - buf.build/googleapis/googleapis:${BUF_COMMIT}\n`, 'buf.yaml')).toEqual([]);
    expect(found(bazel, 'repositories.bzl')).toEqual([]);
    expect(found(`GOOGLEAPIS_SHA: ${GIT_COMMIT}`, 'ci.yml')).toEqual([]);
  });

  it('the same values elsewhere, and anything else on the line, are still found', () => {
    // the hex is a secret where no buf reference or commit name puts it
    expect(found(`{ "googleapis": "${BUF_COMMIT}" }`, 'package.json')).toEqual([`generic-api-key ${BUF_COMMIT}`]);
    expect(found(`googleapis_token = "${GIT_COMMIT}"`, 'repositories.bzl')).toEqual([`generic-api-key ${GIT_COMMIT}`]);
    // a buf host that is not the registry's
    expect(found(`"generate": "x buf.example.com/googleapis/googleapis:${BUF_COMMIT}"`, 'package.json')).toEqual([`generic-api-key ${BUF_COMMIT}`]);
    // a token after the reference on the same line
    expect(found(`"generate": "buf generate buf.build/googleapis/googleapis:${BUF_COMMIT} --token ${GITHUB}"`, 'package.json')).toEqual([
      `github-pat ${GITHUB}`,
    ]);
    // a longer value that ends in 32 hex
    expect(found(`"generate": "buf generate buf.build/googleapis/googleapis:v1_${BUF_COMMIT}"`, 'package.json')).toEqual([`generic-api-key v1_${BUF_COMMIT}`]);
  });
});

describe('check --commits over a history', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => t?.cleanup());

  it('passes the buf reference and the pinned commit, refuses the token committed after them', async () => {
    const repo = t.repo();
    const BUF_COMMIT = '9475e2896f8a46d09806149f9382e538';
    const GITHUB = 'ghp_' + 'Zk3Q9mW2xR7tY4uP8vN1bL6cH0jD5fG8sA2e';
    const commit = (files: Record<string, string>, message: string) => {
      writeFiles(repo, files);
      gitIn(t, repo, 'add', '-A');
      gitIn(t, repo, 'commit', '-q', '-m', message);
    };
    const base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commit(
      { 'packages/bundle-size/package.json': `{\n  "scripts": {\n    "generate": "buf generate buf.build/googleapis/googleapis:${BUF_COMMIT}"\n  }\n}\n` },
      'buf',
    );
    commit({ 'repositories.bzl': 'def _impl(ctx):\n    googleapis_commit = "e1c0c726290a55065c0c46a62dacc9372939973b"\n' }, 'bazel');
    const clean = await checkRange({ cwd: repo, root: repo }, `${base}..HEAD`);
    expect(clean.violations, JSON.stringify(clean.violations)).toEqual([]);
    commit({ 'src/client.ts': `export const token = "${GITHUB}";\n` }, 'token');
    const refused = await checkRange({ cwd: repo, root: repo }, `${base}..HEAD`);
    expect(refused.violations.map((v) => `${v.rule} ${v.file}:${v.line}`)).toEqual(['no-secrets src/client.ts:1']);
  });
});
