/**
 * What the secrets rule flagged in the full history of public repositories (docs/benchmarks.md,
 * detectors: the secrets rule on whole histories), held as cases: gitleaks' rules applied as
 * gitleaks applies them, plus hermesd's own allowances (src/security/allowances.ts), each beside a
 * credential of the same rule that must still be found. In-process cases, then one commit through
 * the real hook (test/security/detectors-gitleaks-conformance.test.ts holds the rules to gitleaks').
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findWithRules, gitleaksFileRuleSet } from '../../src/security/gitleaks.js';
import { commitIn, gitIn, makeEnv, type TestEnv } from '../helpers/env.js';

// bufbuild/protobuf-es (Apache-2.0), packages/bundle-size/package.json at 48cc09c3, line 7.
const BUF_LINE = '    "generate": "buf generate buf.build/googleapis/googleapis:9475e2896f8a46d09806149f9382e538",';
const found = (line: string, path = 'package.json') => findWithRules(`${line}\n`, gitleaksFileRuleSet(), path).map((f) => `${f.ruleId}:${f.secret}`);

describe('the secrets rule on what real history holds', () => {
  it('a buf module reference (buf.build/<owner>/<module>:<commit id>) is not a credential', () => {
    expect(found(BUF_LINE), 'the buf module reference of bufbuild/protobuf-es is still flagged').toEqual([]);
  });

  it('the same value as a key, or a key beside a module name, is still found (generic-api-key)', () => {
    expect(found('  "apiKey": "9475e2896f8a46d09806149f9382e538",')).toEqual(['generic-api-key:9475e2896f8a46d09806149f9382e538']);
    expect(found('    "generate": "buf generate googleapis:9475e2896f8a46d09806149f9382e538",'), 'a module name without buf.build/ is not exempt').toEqual([
      'generic-api-key:9475e2896f8a46d09806149f9382e538',
    ]);
    expect(found('api_token = "9475e2896f8a46d09806149f9382e538"', 'config.py')).toEqual(['generic-api-key:9475e2896f8a46d09806149f9382e538']);
  });

  it("a documentation example that assigns a secret key is flagged, as gitleaks flags it (pallets/flask's docs)", () => {
    // The config page of pallets/flask's documentation (BSD-3-Clause) at 465922e5: a value shown as SECRET_KEY. The rule
    // cannot tell an example from a key; `exclude:` or a `gitleaks:allow` comment on the line says so for a repository.
    expect(found("    $ export SECRET_KEY='5f352379324c22463451387a0aec5d2f'", 'docs/config.rst')).toEqual([
      'generic-api-key:5f352379324c22463451387a0aec5d2f',
    ]);
  });
});

describe('the buf module reference through a real commit', () => {
  let t: TestEnv;
  beforeAll(() => {
    t = makeEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('is committed under init’s default rules; a key added beside it is refused', async () => {
    const repo = t.repo();
    expect((await t.cli(['init'], { cwd: repo })).code).toBe(0);
    writeFileSync(join(repo, 'package.json'), `{\n  "scripts": {\n${BUF_LINE}\n    "x": "y"\n  }\n}\n`);
    gitIn(t, repo, 'add', '-A');
    const ok = commitIn(t, repo, ['-qm', 'generate from googleapis']);
    expect(ok.code, `the buf module reference was refused:\n${ok.out}`).toBe(0);
    writeFileSync(join(repo, 'package.json'), `{\n  "scripts": {\n${BUF_LINE}\n    "x": "y"\n  },\n  "apiKey": "9475e2896f8a46d09806149f9382e538"\n}\n`);
    gitIn(t, repo, 'add', '-A');
    const refused = commitIn(t, repo, ['-qm', 'and a key']);
    expect(refused.code, `a key beside the module reference was committed:\n${refused.out}`).toBe(1);
    expect(refused.out).toContain('package.json:6  no-secrets');
  });
});
