/**
 * `hermesd check --format sarif` writes SARIF 2.1.0 that validates against the standard's JSON
 * schema: the schema Microsoft's SARIF SDK ships (@microsoft/jest-sarif, sarif-2.1.0-rtm.5),
 * checked with Ajv (draft-04, formats on). A range with violations (a line, a whole protected
 * file, a path with a space, warnings), a clean range, and the staged check through the daemon.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["gen/**"]
    generator: "npm run gen"
  - id: vendored
    message: vendor/ is imported, never edited.
    protect: ["vendor/**"]
`;

const schemaPath = createRequire(import.meta.url).resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
// The schema's one `language` pattern is not valid with the `u` flag Ajv uses by default.
// Both are CommonJS whose `exports.default` is the module itself: from an ES module, TypeScript sees it one level down.
const ajv = new ajvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
ajvFormats.default(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')) as object);

function expectValidSarif(log: unknown): void {
  const ok = validate(log);
  expect(ok ? [] : validate.errors).toEqual([]);
}

describe('hermesd check --format sarif', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'gen/api.ts': 'v1\n', 'vendor/lib.js': 'lib\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'docs/my notes.md': `key ${KEY}\n`, 'vendor/lib.js': 'patched\n', 'gen/api.ts': 'v2\n' });
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'a key, a vendored edit, a regenerated file');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('the validator refuses a log that breaks the schema (so a pass means something)', () => {
    expect(validate({ version: '2.1.0', runs: [{ tool: { driver: {} } }] })).toBe(false);
    expect(validate({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, level: 'fatal' }] }] })).toBe(false);
  });

  it('a range with violations and warnings: valid SARIF, one result per violation at its file and line', async () => {
    const r = await t.cli(['check', '--commits', `${base}..HEAD`, '--format', 'sarif'], { cwd: repo });
    expect(r.code, r.stderr).toBe(1);
    const log = r.json();
    expectValidSarif(log);
    const run = log.runs[0];
    expect(run.tool.driver.rules.map((x: { id: string }) => x.id)).toEqual(['no-aws-keys', 'generated-files', 'vendored']);
    expect(run.results).toHaveLength(2);
    const [key, vendored] = run.results;
    expect(key).toMatchObject({
      ruleId: 'no-aws-keys',
      ruleIndex: 0,
      level: 'error',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'docs/my%20notes.md' }, region: { startLine: 1 } } }],
    });
    expect(key.message.text).toMatch(/^Never commit credentials\. \(commit [0-9a-f]{10}\)$/);
    expect(vendored.locations[0].physicalLocation.region).toBeUndefined(); // a protected path: the file, no line
    expect(run.invocations[0].toolExecutionNotifications[0].message.text).toContain('gen/api.ts');
  });

  it('a clean range: valid SARIF with the rules and no results', async () => {
    const r = await t.cli(['check', '--commits', `${base}..${base}`, '--format', 'sarif'], { cwd: repo });
    expect(r.code).toBe(0);
    expectValidSarif(r.json());
    expect(r.json().runs[0].results).toEqual([]);
  });

  it('the staged check through the daemon: valid SARIF too', async () => {
    writeFiles(repo, { 'staged.txt': `${KEY}\n` });
    gitIn(t, repo, 'add', 'staged.txt');
    const r = await t.cli(['check', '--staged', '--format', 'sarif'], { cwd: repo });
    expect(r.code, r.stderr).toBe(1);
    expectValidSarif(r.json());
    expect(
      r
        .json()
        .runs[0].results.map(
          (x: { locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }> }) => x.locations[0]!.physicalLocation.artifactLocation.uri,
        ),
    ).toEqual(['staged.txt']);
  });
});
