/**
 * `hermesd check --commits <range>`: every commit of a range judged against its parent under
 * the rules committed in the range's base, in the CLI process (no daemon), from a clone or a
 * bare repository. Exit 1 on a violation, 2 on a usage or config error; JSON, human text and
 * GitHub annotations. Real git repositories, the real CLI.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
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

describe('hermesd check --commits', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;
  const commits: Record<string, string> = {};

  const commit = (files: Record<string, string>, message: string) => {
    writeFiles(repo, files);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', message);
    return gitIn(t, repo, 'rev-parse', 'HEAD').trim();
  };

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'gen/api.ts': 'v1\n', 'vendor/lib.js': 'lib\n', 'src/app.ts': 'one\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commits.clean = commit({ 'src/app.ts': 'one\ntwo\n' }, 'clean');
    commits.key = commit({ 'src/app.ts': `one\ntwo\nconst k = "${KEY}";\n` }, 'a key');
    commits.vendor = commit({ 'vendor/lib.js': 'lib patched\n' }, 'edit vendor');
    commits.gen = commit({ 'gen/api.ts': 'v2\n', 'schema.json': '{}\n' }, 'regenerate');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('judges every commit of the range under the base rules: --json names the commit of each violation, exit 1', async () => {
    const r = await t.cli(['check', '--commits', `${base}..HEAD`, '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(1);
    const out = r.json();
    expect(out.violations).toEqual([
      { rule: 'no-aws-keys', file: 'src/app.ts', line: 3, message: 'Never commit credentials.', commit: commits.key },
      { rule: 'vendored', file: 'vendor/lib.js', line: 0, message: 'vendor/ is imported, never edited.', commit: commits.vendor },
    ]);
    expect(out).toMatchObject({
      range: `${base}..HEAD`,
      base,
      commits: 4,
      rules: { commit: base, found: true, ids: ['no-aws-keys', 'generated-files', 'vendored'] },
      configChanges: [],
    });
    // A generated file cannot be regenerated here: said, not refused.
    expect(out.warnings).toEqual([
      expect.stringMatching(new RegExp(`^${commits.gen.slice(0, 10)} gen/api\\.ts: .*generated-files.*npm run gen.*cannot run here`)),
    ]);
    expect(out.secretValues.judged).toBe(false);
  });

  it('prints commit, file:line, rule and message, and a summary naming the rules that judged', async () => {
    const r = await t.cli(['check', '--commits', `${base}..HEAD`], { cwd: repo });
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${commits.key.slice(0, 10)}  src/app\\.ts:3\\s+no-aws-keys\\s+Never commit credentials\\.$`));
    expect(lines[1]).toMatch(new RegExp(`^${commits.vendor.slice(0, 10)}  vendor/lib\\.js:0\\s+vendored\\s+vendor/ is imported`));
    expect(r.stdout).toContain(`2 rule violations in 2 of 4 commits, judged by the rules of .hermes/config.yaml at ${base.slice(0, 10)}.`);
    expect(r.stdout).not.toContain('HERMESD_SKIP'); // a range is fixed by rewriting it, not by skipping a hook
  });

  it('a clean range exits 0', async () => {
    const r = await t.cli(['check', '--commits', `${base}..${commits.clean}`], { cwd: repo });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('no rule violations in 1 commit');
  });

  it('needs no daemon, and runs in a bare repository', async () => {
    expect(existsSync(join(repo, '.git', 'hermesd', 'daemon.json'))).toBe(false);
    expect(existsSync(t.socketDir) ? readdirSync(t.socketDir) : []).toEqual([]);
    const bare = join(repo, '..', 'bare.git');
    gitIn(t, repo, 'clone', '-q', '--bare', repo, bare);
    const r = await t.cli(['check', '--commits', `${base}..main`, '--json'], { cwd: bare });
    expect(r.code, r.stderr).toBe(1);
    expect(r.json().violations.map((v: { commit: string }) => v.commit)).toEqual([commits.key, commits.vendor]);
  });

  it('on GitHub Actions, each violation is also an annotation at its file and line', async () => {
    const r = await t.cli(['check', '--commits', `${base}..HEAD`], { cwd: repo, env: { GITHUB_ACTIONS: 'true' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`::error file=src/app.ts,line=3,title=hermesd%3A no-aws-keys::Never commit credentials. (commit ${commits.key.slice(0, 10)})`);
    expect(r.stdout).toContain(
      `::error file=vendor/lib.js,title=hermesd%3A vendored::vendor/ is imported, never edited. (commit ${commits.vendor.slice(0, 10)})`,
    );
    expect(r.stdout).toMatch(/::warning title=hermesd::[0-9a-f]{10} gen\/api\.ts/);
    // Beside JSON, the annotations go to stderr: stdout stays one document.
    const json = await t.cli(['check', '--commits', `${base}..HEAD`, '--json'], { cwd: repo, env: { GITHUB_ACTIONS: 'true' } });
    expect(json.json().violations).toHaveLength(2);
    expect(json.stderr).toContain('::error file=src/app.ts,line=3');
  });

  it('a range that loosens the rules is judged by the rules of its base, and the change is reported', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const loosen = commit({ '.hermes/config.yaml': 'rules: []\n' }, 'no more rules');
    const bad = commit({ 'creds.txt': `${KEY}\n` }, 'key after loosening');
    const r = await t.cli(['check', '--commits', `${start}..HEAD`, '--json'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ configChanges: [loosen], violations: [{ rule: 'no-aws-keys', file: 'creds.txt', line: 1, commit: bad }] });
    const human = await t.cli(['check', '--commits', `${start}..HEAD`], { cwd: repo });
    expect(human.stdout).toContain(
      `note: ${loosen.slice(0, 10)} changes .hermes/config.yaml; these commits are judged by the rules committed in ${start.slice(0, 10)}`,
    );
    // From the next range on, the loosened rules judge.
    expect((await t.cli(['check', '--commits', `${loosen}..HEAD`], { cwd: repo })).code).toBe(0);
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it('a merge is judged on what it brought itself, not on what its branches did', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    // main gets a bad commit that is already upstream (outside the range); a feature branch merges it.
    gitIn(t, repo, 'checkout', '-q', '-b', 'feature');
    const feature = commit({ 'src/feature.ts': 'feature\n' }, 'feature work');
    gitIn(t, repo, 'checkout', '-q', 'main');
    commit({ 'docs/key.md': `${KEY}\n` }, 'upstream key (already judged upstream)');
    const upstream = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    gitIn(t, repo, 'checkout', '-q', 'feature');
    gitIn(t, repo, 'merge', '-q', '--no-edit', 'main');
    const clean = await t.cli(['check', '--commits', `${upstream}..feature`, '--json'], { cwd: repo });
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.json().commits).toBe(2); // the feature commit and the merge
    // An evil merge: the merge commit itself adds a key no parent has.
    gitIn(t, repo, 'reset', '-q', '--hard', feature);
    gitIn(t, repo, 'merge', '-q', '--no-commit', 'main');
    writeFiles(repo, { 'src/merge.ts': `${KEY}\n` });
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'merge with a key of its own');
    const merge = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const evil = await t.cli(['check', '--commits', `${upstream}..feature`, '--json'], { cwd: repo });
    expect(evil.code).toBe(1);
    expect(evil.json().violations).toEqual([{ rule: 'no-aws-keys', file: 'src/merge.ts', line: 1, message: 'Never commit credentials.', commit: merge }]);
    // Inside a file both branches changed, the merge's own line is found at its line number
    // (git's combined diff at -U0 counts "KEY" as line 4 here: it skips `etag` between changes).
    gitIn(t, repo, 'checkout', '-q', 'main');
    commit({ 'src/list.ts': 'a\nctype\netag\nproxy\nx1\nx2\nx3\nend\n' }, 'a list');
    const listBase = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    gitIn(t, repo, 'checkout', '-q', '-b', 'side');
    commit({ 'src/list.ts': 'a\nctype\ndeprecate\nflatten\nmime\netag\nproxy\nx1\nx2\nx3\nend\n' }, 'side');
    gitIn(t, repo, 'checkout', '-q', 'main');
    commit({ 'src/list.ts': 'a\nctype\netag\nproxy\nx1\nx2\nx3\nend main\n' }, 'main');
    spawnSync('git', ['merge', '-q', '--no-commit', 'side'], { cwd: repo, env: t.env });
    writeFiles(repo, { 'src/list.ts': `a\nctype\ndeprecate\netag\n${KEY}\nproxy\nx1\nx2\nx3\nend main\n` });
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'merge side, and a key of its own on line 5');
    const inFile = await t.cli(['check', '--commits', `${listBase}..main`, '--json'], { cwd: repo });
    expect(inFile.json().violations).toEqual([
      { rule: 'no-aws-keys', file: 'src/list.ts', line: 5, message: 'Never commit credentials.', commit: gitIn(t, repo, 'rev-parse', 'HEAD').trim() },
    ]);
    gitIn(t, repo, 'checkout', '-q', 'main');
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it('a base whose config does not parse is judged by the last version that does, never as "no rules"', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    const broken = commit({ '.hermes/config.yaml': `${RULES}  - id: Bad Id\n    message: x\n    forbid: "y"\n` }, 'break the config');
    commit({ 'creds2.txt': `${KEY}\n` }, 'key under a broken config');
    const r = await t.cli(['check', '--commits', `${broken}..HEAD`, '--json'], { cwd: repo });
    expect(r.code).toBe(1);
    const out = r.json();
    expect(out.violations).toMatchObject([{ rule: 'no-aws-keys', file: 'creds2.txt' }]);
    expect(out.rules.from).toBe(base); // the version before the broken one
    expect(out.warnings[0]).toContain(`does not parse in ${broken.slice(0, 10)}`);
    // A config that never parsed: a config error naming the file, line and key (exit 2).
    const orphan = join(repo, '..', 'orphan');
    gitIn(t, repo, 'init', '-q', '-b', 'main', orphan);
    writeFiles(orphan, { '.hermes/config.yaml': 'rules:\n  - id: Bad Id\n    message: x\n    forbid: "y"\n' });
    gitIn(t, orphan, 'add', '-A');
    gitIn(t, orphan, 'commit', '-qm', 'broken from the start');
    writeFiles(orphan, { 'a.txt': 'a\n' });
    gitIn(t, orphan, 'add', '-A');
    gitIn(t, orphan, 'commit', '-qm', 'more');
    const bad = await t.cli(['check', '--commits', 'HEAD~1..HEAD'], { cwd: orphan });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/:\.hermes\/config\.yaml:2:\d+: rules\[0\]\.id: rule id must be kebab-case/);
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it('usage errors exit 2 with a sentence that says what to give', async () => {
    const single = await t.cli(['check', '--commits', 'HEAD'], { cwd: repo });
    expect(single.code).toBe(2);
    expect(single.stderr).toContain('names no base: give BASE..TIP');
    const bogus = await t.cli(['check', '--commits', 'nope..HEAD'], { cwd: repo });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('"nope..HEAD" is not a range of this repository');
    const both = await t.cli(['check', '--staged', '--commits', 'HEAD~1..HEAD'], { cwd: repo });
    expect(both.code).toBe(2);
    const format = await t.cli(['check', '--commits', 'HEAD~1..HEAD', '--format', 'xml'], { cwd: repo });
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be one of text, json, sarif');
  });

  it('a shallow clone that lacks the range says how to fetch it', async () => {
    const shallow = join(repo, '..', 'shallow');
    gitIn(t, repo, 'clone', '-q', '--depth', '1', `file://${repo}`, shallow);
    const r = await t.cli(['check', '--commits', `${base}..HEAD`], { cwd: shallow });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('This clone is shallow');
    expect(r.stderr).toContain('fetch-depth: 0');
    // A range that reaches where the history is cut: that commit's parent is not there to compare with.
    gitIn(t, repo, 'branch', '-f', 'side', base);
    const cut = join(repo, '..', 'cut');
    gitIn(t, repo, 'clone', '-q', '--depth', '1', '--no-single-branch', `file://${repo}`, cut);
    const c = await t.cli(['check', '--commits', 'origin/side..origin/main'], { cwd: cut });
    expect(c.code, c.stdout).toBe(2);
    expect(c.stderr).toMatch(/the range reaches [0-9a-f]{10}, where this shallow clone's history is cut/);
    gitIn(t, repo, 'branch', '-D', 'side');
  });

  it("a value of this clone's secret files committed in the range is a violation; a fresh clone has none to look for", async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { '.env': 'DB_PASSWORD=hunter2-correct-horse\n', '.gitignore': '.env\n' });
    const leak = commit({ 'src/db.ts': 'const password = "hunter2-correct-horse";\n' }, 'inline the password');
    const r = await t.cli(['check', '--commits', `${start}..HEAD`, '--json'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.json().violations).toMatchObject([{ rule: 'secret-value', file: 'src/db.ts', line: 1, commit: leak }]);
    expect(r.json().secretValues).toMatchObject({ judged: true });
    expect(JSON.stringify(r.json())).not.toContain('hunter2-correct-horse'); // the value itself is never printed
    const fresh = join(repo, '..', 'fresh');
    gitIn(t, repo, 'clone', '-q', repo, fresh);
    const f = await t.cli(['check', '--commits', `${start}..HEAD`, '--json'], { cwd: fresh });
    expect(f.code, f.stdout).toBe(0);
    expect(f.json().secretValues).toEqual({ judged: false, note: expect.stringContaining('no secret files') });
    rmSync(join(repo, '.env'));
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it('a value a secret file held only in an earlier commit is a violation too: every version in history is read', async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commit({ 'deploy/.env': 'API_TOKEN=old-token-from-history-4821\n' }, 'add the deploy env');
    commit({ 'deploy/.env': 'API_TOKEN=new-token-in-the-tree-7305\n' }, 'rotate the token');
    const leak = commit({ 'src/api.ts': 'export const token = "old-token-from-history-4821";\n' }, 'inline the old token');
    const r = await t.cli(['check', '--commits', `${leak}~1..${leak}`, '--json'], { cwd: repo });
    expect(r.json().violations, `the old value, held only by a past version of deploy/.env, was not found: ${r.stdout}`).toMatchObject([
      { rule: 'secret-value', file: 'src/api.ts', line: 1, commit: leak },
    ]);
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });

  it("a value only history holds, its file emptied since, is found too; with the range's other findings, in order", async () => {
    const start = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    commit({ 'ops/.env': 'DEPLOY_TOKEN=retired-deploy-token-6093\n' }, 'add the ops env');
    commit({ 'ops/.env': '# moved to the vault\n' }, 'empty the ops env');
    const leak = commit({ 'src/ops.ts': `export const token = "retired-deploy-token-6093";\nconst k = "${KEY}";\n` }, 'inline the retired token');
    const r = await t.cli(['check', '--commits', `${leak}~1..${leak}`, '--json'], { cwd: repo });
    expect(r.code, r.stdout).toBe(1);
    expect(r.json().violations, `the retired value, held only by an old version of ops/.env, was not found beside the key: ${r.stdout}`).toMatchObject([
      { rule: 'secret-value', file: 'src/ops.ts', line: 1, commit: leak },
      { rule: 'no-aws-keys', file: 'src/ops.ts', line: 2, commit: leak },
    ]);
    expect(r.json().secretValues).toMatchObject({ judged: true });
    expect(JSON.stringify(r.json())).not.toContain('retired-deploy-token-6093');
    gitIn(t, repo, 'reset', '-q', '--hard', start);
  });
});
