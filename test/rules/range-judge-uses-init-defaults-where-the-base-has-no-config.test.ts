/**
 * A range whose base has no .hermes/config.yaml — CI or the server of a repository adopting
 * hermesd, or a push after one that deleted the file — is judged by init's default rules (the
 * config `hermesd init` writes from templates/, with the `no-secrets` rule), never by no rules;
 * and a new branch with no base (a bare repository whose HEAD names an unborn branch, the first
 * push into an empty one) is judged by them too, never by its own tip's config. Every summary
 * names the rules it used: `check --commits` (text, JSON, SARIF) and the pre-receive hook.
 * What the template parses to is recorded by the build (dist/range/init-defaults.json) and used
 * only for the very text it recorded: the template, or a committed config as init wrote it.
 * Real repositories, the real CLI, real pushes. (Keys are built at run time.)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCommittedConfig } from '../../src/config/load.js';
import { recordedDefaults } from '../../src/rules/range.js';
import { INIT_CONFIG_TEMPLATE } from '../../src/version.js';
import { gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const AWS = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const GITHUB = 'ghp_' + 'Zk3Q9mW2xR7tY4uP8vN1bL6cH0jD5fG8sA2e';
const NO_RULES = 'rules: []\n';

let t: TestEnv;
beforeAll(() => {
  t = makeEnv();
});
afterAll(async () => {
  await t.cleanup();
});

const commitIn = (repo: string, files: Record<string, string>, message: string) => {
  writeFiles(repo, files);
  gitIn(t, repo, 'add', '-A');
  gitIn(t, repo, 'commit', '-qm', message);
  return gitIn(t, repo, 'rev-parse', 'HEAD').trim();
};

describe('check --commits on a repository adopting hermesd', () => {
  let repo: string;
  let base: string;
  let bad: string;

  beforeAll(() => {
    repo = t.repo({ 'README.md': '# no hermesd here yet\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    bad = commitIn(repo, { 'src/client.ts': `export const token = "${GITHUB}";\n` }, 'a token');
  });

  it("a base without .hermes/config.yaml is judged by init's default rules, and the summary says so", async () => {
    const r = await t.cli(['check', '--commits', `${base}..HEAD`], { cwd: repo });
    expect(r.code, `a token in a range whose base has no config passed:\n${r.stdout}${r.stderr}`).toBe(1);
    expect(r.stdout, 'the violation line is missing').toMatch(new RegExp(`^${bad.slice(0, 10)}  src/client\\.ts:1\\s+no-secrets\\s+`, 'm'));
    const named = `judged by init's default rules (the base ${base.slice(0, 10)} has no .hermes/config.yaml)`;
    expect(r.stdout, 'the summary does not name the default rules').toContain(named);
    expect(r.stdout, 'the summary claims a config that is not there').not.toContain('judged by the rules of .hermes/config.yaml');
  });

  it('JSON and SARIF name the rules used too (additive fields)', async () => {
    const json = await t.cli(['check', '--commits', `${base}..HEAD`, '--json'], { cwd: repo });
    expect(json.code, json.stderr).toBe(1);
    expect(json.json().rules, 'JSON does not say the defaults judged').toMatchObject({
      commit: base,
      found: false,
      defaults: true,
      ids: ['no-secrets'],
      by: expect.stringContaining("init's default rules"),
    });
    const sarif = await t.cli(['check', '--commits', `${base}..HEAD`, '--format', 'sarif'], { cwd: repo });
    const run = sarif.json().runs[0];
    expect(
      run.results.map((x: { ruleId: string }) => x.ruleId),
      'SARIF lacks the finding',
    ).toEqual(['no-secrets']);
    expect(run.properties?.judgedBy, 'SARIF does not name the rules used').toContain("init's default rules");
  });

  it('with a config in the base, its rules judge as before, and the summary names that file', async () => {
    const withConfig = commitIn(repo, { '.hermes/config.yaml': NO_RULES }, 'adopt hermesd, with no rules');
    commitIn(repo, { 'deploy.sh': `export AWS_ACCESS_KEY_ID=${AWS}\n` }, 'a key under no rules');
    const r = await t.cli(['check', '--commits', `${withConfig}..HEAD`], { cwd: repo });
    expect(r.code, `the repository's own (empty) rules did not judge:\n${r.stdout}`).toBe(0);
    expect(r.stdout).toContain(`judged by the rules of .hermes/config.yaml at ${withConfig.slice(0, 10)}`);
  });
});

describe('the server of a repository whose config went away, or that has no base', () => {
  const push = (clone: string, ...args: string[]) => {
    const r = spawnSync('git', ['push', ...args], { cwd: clone, env: t.env, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status ?? -1, err: r.stderr };
  };
  /** A bare repository with hermesd's hook, judged by the committed rules alone (its pinned config taken away by the admin). */
  const serverOf = async (server: string) => {
    const init = await t.cli(['init', '--server'], { cwd: server });
    expect(init.code, `init --server failed: ${init.stderr}`).toBe(0);
    rmSync(join(server, 'hermesd', 'server-config.yaml'), { force: true });
  };

  it('push 1 deletes the config, push 2 adds a key: push 2 is judged by the defaults and refused', async () => {
    const seed = t.repo({ '.hermes/config.yaml': 'rules:\n  - secrets: true\n', 'README.md': '# project\n' });
    const server = join(seed, '..', 'deleted-config.git');
    gitIn(t, seed, 'clone', '-q', '--bare', seed, server);
    await serverOf(server);
    const clone = join(seed, '..', 'deleted-config-clone');
    gitIn(t, seed, 'clone', '-q', server, clone);
    gitIn(t, clone, 'rm', '-q', '.hermes/config.yaml');
    gitIn(t, clone, 'commit', '-qm', 'no more hermesd config');
    const first = push(clone, 'origin', 'HEAD:main');
    expect(first.code, `deleting the config was refused:\n${first.err}`).toBe(0);
    const deleted = gitIn(t, clone, 'rev-parse', 'HEAD').trim();
    commitIn(clone, { 'deploy.sh': `export AWS_ACCESS_KEY_ID=${AWS}\n` }, 'a key, now that no config is there');
    const second = push(clone, 'origin', 'HEAD:main');
    expect(second.code, `a key pushed after the config was deleted was accepted:\n${second.err}`).not.toBe(0);
    expect(second.err).toMatch(/deploy\.sh:1\s+no-secrets/);
    const named = `judged by init's default rules (the base ${deleted.slice(0, 10)} has no .hermes/config.yaml)`;
    expect(second.err, 'the refusal does not name the default rules').toContain(named);
  });

  it("a new branch where HEAD names an unborn branch is judged by the defaults, never by its own tip's config", async () => {
    const server = join(t.home, '..', 'unborn.git');
    gitIn(t, t.home, 'init', '-q', '--bare', '-b', 'main', server);
    await serverOf(server);
    const clone = t.repo({ '.hermes/config.yaml': NO_RULES, 'deploy.sh': `export AWS_ACCESS_KEY_ID=${AWS}\n` });
    gitIn(t, clone, 'remote', 'add', 'origin', server);
    const branch = push(clone, 'origin', 'HEAD:refs/heads/feature');
    expect(branch.code, `a new branch with a key was judged by its own (empty) rules and accepted:\n${branch.err}`).not.toBe(0);
    expect(branch.err).toMatch(/deploy\.sh:1\s+no-secrets/);
    expect(branch.err, 'the refusal does not name the default rules').toContain("judged by init's default rules");
    // The first push into the empty repository's own HEAD branch: the same.
    const first = push(clone, 'origin', 'HEAD:main');
    expect(first.code, `the first push into an empty repository was judged by its own rules:\n${first.err}`).not.toBe(0);
    // Without the key, the same push lands, and says which rules judged it.
    gitIn(t, clone, 'rm', '-q', 'deploy.sh');
    gitIn(t, clone, 'commit', '-q', '--amend', '-m', 'initial, clean');
    const clean = push(clone, 'origin', 'HEAD:main');
    expect(clean.code, `a clean first push was refused:\n${clean.err}`).toBe(0);
    expect(clean.err, 'the hook does not name the rules that judged').toContain("no rule violations (judged by init's default rules");
  });
});

describe("init's default rules as the build recorded them", () => {
  const template = readFileSync(INIT_CONFIG_TEMPLATE, 'utf8');

  it('the record is what the template parses to', () => {
    expect(recordedDefaults(template), "the build's record of init's rules is missing or is not what the template parses to (npm run build)").toEqual(
      loadCommittedConfig(INIT_CONFIG_TEMPLATE, template),
    );
  });

  it('a record is used only for the text it recorded; a missing or broken one is never used', () => {
    const record = join(t.home, '..', 'init-defaults.json');
    const other = { rules: [], checks: [] };
    writeFileSync(record, JSON.stringify({ text: 'rules: []\n', config: other }));
    expect(recordedDefaults(template, record), 'a record of another text judged the template').toBeUndefined();
    expect(recordedDefaults('rules: []\n', record), 'the record of this very text was not used').toEqual(other);
    writeFileSync(record, '{"text": ');
    expect(recordedDefaults('rules: []\n', record), 'a broken record was used').toBeUndefined();
    expect(recordedDefaults(template, join(t.home, '..', 'no-such-record.json')), 'a missing record gave rules').toBeUndefined();
  });

  it('a config committed as init wrote it judges as the template does, and the summary names the committed file', async () => {
    const repo = t.repo({ 'README.md': '# adopting hermesd\n' });
    const adopted = commitIn(repo, { '.hermes/config.yaml': template }, 'hermesd init');
    const bad = commitIn(repo, { 'src/client.ts': `export const token = "${GITHUB}";\n` }, 'a token');
    const r = await t.cli(['check', '--commits', `${adopted}..HEAD`, '--json'], { cwd: repo });
    expect(r.code, `a token under the committed template's rules passed:\n${r.stdout}${r.stderr}`).toBe(1);
    expect(r.json().violations).toMatchObject([{ rule: 'no-secrets', file: 'src/client.ts', line: 1, commit: bad }]);
    expect(r.json().rules, 'the committed file is not named as the rules that judged').toMatchObject({ commit: adopted, found: true, ids: ['no-secrets'] });
  });
});
