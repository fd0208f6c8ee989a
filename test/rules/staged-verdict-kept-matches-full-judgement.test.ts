/**
 * The staged verdict the daemon keeps ready (src/rules/staged-verdict.ts) is the verdict a
 * full judgement gives, whichever way the index or HEAD changed: add, reset, `commit -a`,
 * GIT_INDEX_FILE, a rebase, `reset --soft`, a config edit, an authority edit. Each step asks
 * the real daemon (`hermesd check --staged`, twice: the second answer is served from the
 * kept verdict) and compares with `checkStaged` run here, on the same index; real commits
 * through the installed hooks are refused exactly when the full judgement finds violations.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { loadConfig } from '../../src/config/load.js';
import { applyApproval } from '../../src/guard/approval.js';
import { checkStaged } from '../../src/rules/engine.js';
import { makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files directly.
    protect: ["src/generated/**"]
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

/** Waits past the racy window of git's config files (a file changed this recently keys no verdict: src/git/config-files.ts). */
const settle = () => new Promise((r) => setTimeout(r, 40));

type Staged = { hits: number; misses: number; ahead: number; judged?: string };

describe('the staged verdict kept ready is the full judgement', () => {
  let t: TestEnv;
  let repo: string;
  let client: DaemonClient;

  const git = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync('git', args, { cwd: repo, env: { ...t.env, ...env }, encoding: 'utf8' });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const ok = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = git(args, env);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.out}`);
    return r.out;
  };
  const stats = async (): Promise<Staged> => (await client.call<{ hooks: { staged: Staged } }>('GET', '/v1/status')).hooks.staged;

  /** The rules judged here, in full, on the same index (and the config as the daemon reads it: a loosening waits for approval). */
  const full = async (indexFile?: string) => {
    const { config } = applyApproval(t.home, repo, loadConfig({ root: repo, home: t.home, env: t.env }));
    const r = await checkStaged(repo, config, { indexFile: indexFile ?? join(repo, '.git', 'index') });
    return { violations: r.violations, warnings: r.warnings };
  };

  /** Asks the daemon twice; both answers must be the full judgement, the second one kept. */
  const compare = async (indexFile?: string) => {
    const env = indexFile ? { GIT_INDEX_FILE: indexFile } : {};
    const first = await t.cli(['check', '--staged', '--json'], { cwd: repo, env });
    const before = await stats();
    const second = await t.cli(['check', '--staged', '--json'], { cwd: repo, env });
    const after = await stats();
    const expected = await full(indexFile);
    expect(first.json()).toEqual(expected);
    expect(second.json()).toEqual(expected);
    expect(second.code).toBe(expected.violations.length ? 1 : 0);
    expect(after.hits).toBe(before.hits + 1);
    return expected;
  };

  /** A commit through the installed hooks, after the daemon had time to judge the index ahead (or not: either way the answer is the same). */
  const commit = (message: string, extra: string[] = []) => git(['commit', '-qm', message, ...extra]);

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': CONFIG, 'AGENTS.md': '# rules\nbe kind\n', 'src/app.ts': 'one\n', 'src/generated/api.ts': 'v1\n' });
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    const start = await t.cli(['start', '--json'], { cwd: repo });
    expect(start.code, start.stderr).toBe(0);
    const status = await t.cli(['status', '--json'], { cwd: repo });
    client = new DaemonClient(status.json().socket);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('add: a clean change and a forbidden line, judged ahead; the commit of the forbidden line is refused', async () => {
    writeFiles(repo, { 'src/app.ts': 'one\ntwo\n' });
    ok(['add', 'src/app.ts']);
    expect((await compare()).violations).toEqual([]);

    writeFiles(repo, { 'src/keys.ts': `const k = "${KEY}";\n` });
    // the daemon judges the new index by itself (the watcher saw it change; it starts at the index's write, so count from before it)
    const ahead = (await stats()).ahead;
    ok(['add', 'src/keys.ts']);
    const deadline = Date.now() + 10_000;
    while ((await stats()).ahead === ahead && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await stats()).ahead).toBeGreaterThan(ahead);
    const hits = (await stats()).hits;
    const refused = commit('leak');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('src/keys.ts:1');
    expect((await stats()).hits).toBe(hits + 1);
    expect((await compare()).violations.map((v) => v.file)).toEqual(['src/keys.ts']);
  });

  it('reset: the unstaged forbidden line is no longer judged; the commit passes', async () => {
    ok(['reset', '-q', 'src/keys.ts']);
    expect((await compare()).violations).toEqual([]);
    expect(commit('two').code).toBe(0);
    expect((await compare()).violations).toEqual([]);
  });

  it('commit -a: the hook judges the index git builds, not the kept one', async () => {
    writeFiles(repo, { 'src/app.ts': `one\ntwo\n${KEY}\n` });
    expect((await compare()).violations).toEqual([]); // nothing staged
    const refused = commit('all', ['-a']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('src/app.ts:3');
    writeFiles(repo, { 'src/app.ts': 'one\ntwo\nthree\n' });
    expect(commit('all', ['-a']).code).toBe(0);
  });

  it('GIT_INDEX_FILE: another index is judged as itself', async () => {
    const alt = join(repo, '.git', 'alt-index');
    ok(['read-tree', 'HEAD'], { GIT_INDEX_FILE: alt });
    ok(['update-index', '--add', 'src/keys.ts'], { GIT_INDEX_FILE: alt });
    expect((await compare(alt)).violations.map((v) => v.file)).toEqual(['src/keys.ts']);
    expect((await compare()).violations).toEqual([]);
    expect((await compare(alt)).violations.map((v) => v.file)).toEqual(['src/keys.ts']);
  });

  it("keeps another index's verdict beside the default index's: neither pushes the other out", async () => {
    const alt = join(repo, '.git', 'alt-index');
    ok(['read-tree', 'HEAD'], { GIT_INDEX_FILE: alt });
    ok(['update-index', '--add', 'src/keys.ts'], { GIT_INDEX_FILE: alt });
    await compare(alt);
    await compare();
    // One question each now, no second asking: both verdicts are still kept.
    const before = await stats();
    expect((await t.cli(['check', '--staged', '--json'], { cwd: repo, env: { GIT_INDEX_FILE: alt } })).json()).toEqual(await full(alt));
    expect((await t.cli(['check', '--staged', '--json'], { cwd: repo })).json()).toEqual(await full());
    expect((await stats()).hits).toBe(before.hits + 2);
  });

  it('reset --soft: HEAD moves, the index does not; what is staged against HEAD changed', async () => {
    writeFiles(repo, { 'src/generated/api.ts': 'v2\n' });
    ok(['add', 'src/generated/api.ts']);
    expect(commit('gen', ['--no-verify']).code).toBe(0);
    expect((await compare()).violations).toEqual([]);
    ok(['reset', '-q', '--soft', 'HEAD~1']);
    expect((await compare()).violations.map((v) => `${v.rule} ${v.file}`)).toEqual(['generated-files src/generated/api.ts']);
    expect(commit('gen again').code).toBe(1);
    ok(['reset', '-q', '--hard', 'HEAD']);
    expect((await compare()).violations).toEqual([]);
  });

  it('rebase: HEAD and the index move under an operation; afterwards the verdict is the full one', async () => {
    ok(['checkout', '-q', '-b', 'topic']);
    writeFiles(repo, { 'src/topic.ts': 'topic\n' });
    ok(['add', 'src/topic.ts']);
    expect(commit('topic').code).toBe(0);
    ok(['checkout', '-q', 'main']);
    writeFiles(repo, { 'src/main.ts': 'main\n' });
    ok(['add', 'src/main.ts']);
    expect(commit('main').code).toBe(0);
    ok(['checkout', '-q', 'topic']);
    ok(['rebase', '-q', 'main']);
    expect((await compare()).violations).toEqual([]);
    writeFiles(repo, { 'src/topic.ts': `topic\n${KEY}\n` });
    ok(['add', 'src/topic.ts']);
    expect((await compare()).violations.map((v) => v.file)).toEqual(['src/topic.ts']);
    expect(commit('leak on topic').code).toBe(1);
  });

  it('config edit: the same index under new rules is judged under the new rules', async () => {
    // src/topic.ts with the key is still staged
    writeFiles(repo, { '.hermes/config.yaml': `${CONFIG}  - id: no-akia\n    message: No AKIA.\n    forbid: "AKIAA"\n` });
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    expect(commit('leak under two rules').out).toContain('no-akia');
  });

  it('index version 4 and an attributes file edited in the work tree', async () => {
    ok(['update-index', '--index-version', '4']);
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    // `-diff`: git shows no lines of the file; the verdict is on the bytes it stores all the same
    writeFiles(repo, { '.gitattributes': 'src/topic.ts -diff\n' });
    ok(['add', '.gitattributes']);
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    writeFiles(repo, { '.gitattributes': '# nothing\n' });
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
  });

  it('a file git config includes, edited: judged again, not served from the verdict kept before', async () => {
    const config = join(repo, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    const included = join(t.home, 'included.gitconfig');
    writeFileSync(included, '[diff]\n\tcontext = 3\n');
    writeFileSync(config, `${before}[include]\n\tpath = ${included}\n`);
    await settle();
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    writeFileSync(included, '[diff]\n\tcontext = 5\n');
    await settle();
    const kept = await stats();
    const again = await t.cli(['check', '--staged', '--json'], { cwd: repo });
    expect((await stats()).hits, 'the verdict kept before the included config file changed was served again').toBe(kept.hits);
    expect(again.json()).toEqual(await full());
    // and the verdict judged now is kept under the new key
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    writeFileSync(config, before);
    await settle();
  });

  it('authority edit: the verdict is judged again and stays the full one', async () => {
    const before = await stats();
    writeFiles(repo, { 'AGENTS.md': '# rules\nbe kind, and brief\n' });
    const deadline = Date.now() + 10_000;
    while ((await stats()).ahead === before.ahead && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await compare()).violations.map((x) => x.rule)).toEqual(['no-akia', 'no-aws-keys']);
    ok(['reset', '-q', '--hard', 'HEAD']);
    expect((await compare()).violations).toEqual([]);
  });
});
