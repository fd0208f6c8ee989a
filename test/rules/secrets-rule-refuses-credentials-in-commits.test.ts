/**
 * The `secrets` rule kind, on in the config `hermesd init` writes: a commit of a GitHub token,
 * a Slack bot token or a Stripe live key is refused (before: only AWS keys were), by each
 * judge of commits — the pre-commit hook, the post-commit audit, the check after an agent's
 * command and the push broker. gitleaks' rule set as gitleaks runs it on a commit: its
 * allowlists, `gitleaks:allow` on the line, rules scoped to paths; plus the rule's own `allow`
 * values and `exclude` globs for known test fixtures. A finding names the gitleaks rule, the
 * file and the line, never the value. An existing config keeps its rules and `init` says how
 * to turn the rule on. Real repositories, real git, a real daemon for the hooks.
 * (Tokens are built at run time: the repository holds no token literal.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { findRealGit } from '../../src/git/real-git.js';
import { gitPolicyOf } from '../../src/guard/guard-config.js';
import { brokerPush } from '../../src/guard/push-broker.js';
import { runGuarded } from '../../src/guard/terminal-guard.js';
import { checkStaged } from '../../src/rules/engine.js';
import { commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const REAL_GIT = findRealGit();
const GITHUB = 'ghp_' + 'Zk3Q9mW2xR7tY4uP8vN1bL6cH0jD5fG8sA2e';
const SLACK = 'xoxb-' + '2048571936402-5820394716253-' + 'Ka8Qm3Zp7Xw2Rt9Lb4Vn6Jc1';
const STRIPE = 'sk_' + 'live_' + '51Hq8ZxLm3Pw9Tr2Vb7Nc4Kd6Jf0Gh1Ys5Qa';
const AWS = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const SECRETS = [
  { name: 'a GitHub token', file: 'src/client.ts', text: `export const token = "${GITHUB}";\n`, gitleaks: 'github-pat', value: GITHUB },
  { name: 'a Slack bot token', file: 'config/slack.yml', text: `bot:\n  token: ${SLACK}\n`, gitleaks: 'slack-bot-token', value: SLACK, line: 2 },
  {
    name: 'a Stripe live key',
    file: 'billing.py',
    text: `import stripe\nstripe.api_key = "${STRIPE}"\n`,
    gitleaks: 'stripe-access-token',
    value: STRIPE,
    line: 2,
  },
  { name: 'an AWS access key', file: 'deploy.sh', text: `export AWS_ACCESS_KEY_ID=${AWS}\n`, gitleaks: 'aws-access-token', value: AWS },
];

const config = configSchema().parse({ rules: [{ secrets: true }] });

let t: TestEnv;
beforeAll(() => {
  t = makeEnv();
});
afterAll(async () => t?.cleanup());

describe('the rule kind', () => {
  it.each(SECRETS)('$name is a violation naming the gitleaks rule, file and line, the value masked', async ({ file, text, gitleaks, value, line }) => {
    const r = t.repo();
    writeFiles(r, { [file]: text });
    gitIn(t, r, 'add', '-A');
    const { violations } = await checkStaged(r, config);
    expect(violations.map((v) => `${v.rule} ${v.file}:${v.line}`)).toEqual([`no-secrets ${file}:${line ?? 1}`]);
    expect(violations[0]!.message).toContain(`(${gitleaks}: ${value.slice(0, 4)}…(${value.length} chars))`);
    expect(violations[0]!.message).not.toContain(value.slice(4));
  });

  it('a private key over several lines, and a PKCS #12 file by its name', async () => {
    const r = t.repo();
    const body = Buffer.from(Array.from({ length: 96 }, (_, i) => (i * 7919) % 251)).toString('base64');
    writeFiles(r, {
      'keys/deploy.txt': `# deploy key\n-----BEGIN RSA PRIVATE KEY-----\n${body.slice(0, 64)}\n${body.slice(64)}\n-----END RSA PRIVATE KEY-----\n`,
      'certs/client.p12': Buffer.from([0x30, 0x82, 1, 2, 0, 0]),
    });
    gitIn(t, r, 'add', '-A');
    const { violations } = await checkStaged(r, config);
    expect(violations.map((v) => `${v.file}:${v.line} ${/\((\S+):/.exec(v.message)?.[1]}`)).toEqual([
      'certs/client.p12:0 pkcs12-file',
      'keys/deploy.txt:2 private-key',
    ]);
  });

  it('left alone: `gitleaks:allow` on the line, a value the rule allows, an excluded fixture, gitleaks’ own allowlists', async () => {
    const r = t.repo();
    const fixtures = configSchema().parse({
      rules: [{ id: 'no-secrets', message: 'No secrets.', secrets: true, allow: [`^${STRIPE}$`], exclude: ['test/fixtures/**'] }],
    });
    writeFiles(r, {
      'a.ts': `const t = "${GITHUB}"; // gitleaks:allow\n`,
      'b.py': `stripe.api_key = "${STRIPE}"\n`,
      'test/fixtures/slack.yml': `token: ${SLACK}\n`,
      // AWS's documented example key, and a lock file (gitleaks' path allowlist)
      'docs/aws.md': 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n',
      'package-lock.json': `{"token": "${GITHUB}"}\n`,
    });
    gitIn(t, r, 'add', '-A');
    expect((await checkStaged(r, fixtures)).violations).toEqual([]);
    // Without the allow list and the exclude, two of them are violations.
    expect((await checkStaged(r, config)).violations.map((v) => v.file)).toEqual(['b.py', 'test/fixtures/slack.yml']);
  });
});

describe('every judge of commits refuses them', () => {
  let repo: string;
  let remote: string;
  const g = (...a: string[]) => gitIn(t, repo, ...a).trim();

  beforeAll(async () => {
    repo = t.repo({ 'README.md': '# app\n' });
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    // The config init writes holds the rule.
    expect(readFileSync(join(repo, '.hermes', 'config.yaml'), 'utf8')).toContain('secrets: true');
    g('add', '-A');
    expect(commitIn(t, repo, ['-qm', 'hermesd init']).code).toBe(0);
    remote = join(repo, '..', 'remote.git');
    execFileSync(REAL_GIT, ['init', '-q', '--bare', '-b', 'main', remote]);
    g('remote', 'add', 'origin', remote);
    g('push', '-q', '-u', 'origin', 'main');
  }, 60_000);

  it.each(SECRETS)('pre-commit: $name', ({ file, text, gitleaks }) => {
    writeFiles(repo, { [file]: text });
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'leak']);
    g('reset', '-q', '--hard', 'HEAD');
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain(file);
    expect(c.out).toContain('no-secrets');
    expect(c.out).toContain(gitleaks);
  });

  it.each(SECRETS)('post-commit: $name, committed with --no-verify', ({ file, text }) => {
    const head = g('rev-parse', 'HEAD');
    writeFiles(repo, { [file]: text });
    g('add', '-A');
    const c = commitIn(t, repo, ['-qm', 'leak', '--no-verify']);
    g('reset', '-q', '--hard', head);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('BREAKS the repository');
    expect(c.out).toContain(`${file}:`);
    expect(c.out).toContain('[no-secrets]');
  });

  it.each(SECRETS)("the check after an agent's command: $name", async ({ file, text }) => {
    const head = g('rev-parse', 'HEAD');
    writeFiles(repo, { [file]: text });
    // A commit no hook sees (commit-tree + update-ref): judged by its content.
    const r = await runGuarded('git add -A && c=$(git commit-tree $(git write-tree) -p HEAD -m leak-by-plumbing) && git update-ref refs/heads/main $c', {
      root: repo,
      gitDir: join(repo, '.git'),
      commonDir: join(repo, '.git'),
      config,
      realGit: REAL_GIT,
      env: t.env,
      timeoutMs: 30_000,
    });
    const now = g('rev-parse', 'HEAD');
    g('reset', '-q', '--hard', head);
    expect(r.guard.notice, JSON.stringify(r)).toContain('New commits break repository rules');
    expect(r.guard.notice).toContain('[no-secrets]');
    expect(now).toBe(head);
  });

  it.each(SECRETS)('the push broker: $name', async ({ file, text }) => {
    const head = g('rev-parse', 'HEAD');
    writeFiles(repo, { [file]: text });
    g('add', '-A');
    expect(commitIn(t, repo, ['-qm', 'leak'], { HERMESD_SKIP: '1' }).code).toBe(0);
    const r = await brokerPush(repo, config, gitPolicyOf({}), ['origin', 'main'], { gitBin: REAL_GIT });
    g('reset', '-q', '--hard', head);
    expect(r.exitCode, r.output).toBe(1);
    expect(r.output).toContain('[no-secrets]');
    expect(execFileSync(REAL_GIT, ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }).trim()).toBe(head);
  });
});

describe('init and an existing config', () => {
  it('keeps a config without the rule and says how to turn it on', async () => {
    const r = t.repo({ '.hermes/config.yaml': 'rules:\n  - id: no-aws-keys\n    message: No keys.\n    forbid: "AKIA[0-9A-Z]{16}"\n' });
    const before = readFileSync(join(r, '.hermes', 'config.yaml'), 'utf8');
    const init = await t.cli(['init'], { cwd: r });
    expect(init.code, init.stderr).toBe(0);
    expect(readFileSync(join(r, '.hermes', 'config.yaml'), 'utf8')).toBe(before);
    expect(init.stdout).toContain('has no secrets rule');
    expect(init.stdout).toContain('secrets: true');
    const json = await t.cli(['init', '--json'], { cwd: r });
    expect(json.json().secretsRule).toBe(false);
    // With the rule, nothing to say.
    mkdirSync(join(r, '.hermes'), { recursive: true });
    writeFileSync(join(r, '.hermes', 'config.yaml'), `${before}  - secrets: true\n`);
    const again = await t.cli(['init'], { cwd: r });
    expect(again.stdout).not.toContain('has no secrets rule');
  });
});
