/**
 * What CI runs: the judging step of action.yml (the composite GitHub Action) picks the range a
 * pull request or a push names and runs `hermesd check --commits` on it, as GitHub runs it (bash,
 * GITHUB_ACTIONS, GITHUB_OUTPUT; the event's fields in the step's env); and the
 * `hermesd-commits` entry of .pre-commit-hooks.yaml, run by the real pre-commit framework
 * (`try-repo`, as a project referencing this repository would), judges --from-ref..--to-ref.
 * `hermesd` is on PATH as CI installs it (here: a shim to this build).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';
import { hasPreCommitFramework, toolEnv } from '../helpers/hook-managers.js';

const KEY = 'AKIAABCDEFGHIJKLMNOP';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

type Step = { id?: string; name?: string; if?: string; run?: string; env?: Record<string, string> };
const action = parse(readFileSync(join(REPO_ROOT, 'action.yml'), 'utf8')) as { runs: { using: string; steps: Step[] }; inputs: Record<string, unknown> };
const judging = action.runs.steps.find((s) => s.id === 'check')!;

describe('CI: the GitHub Action and the pre-commit entry', () => {
  let t: TestEnv;
  let repo: string;
  let base: string;
  let clean: string;
  let bad: string;
  let bin: string;

  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ '.hermes/config.yaml': RULES, 'app.txt': 'one\n' });
    base = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'app.txt': 'one\ntwo\n' });
    gitIn(t, repo, 'commit', '-qam', 'clean');
    clean = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'creds.txt': `k = "${KEY}"\n` });
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'a key');
    bad = gitIn(t, repo, 'rev-parse', 'HEAD').trim();
    // hermesd on PATH, as the action's install step or `npm install -g` leaves it.
    bin = join(dirname(t.home), 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'hermesd'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
    chmodSync(join(bin, 'hermesd'), 0o755);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  /** The judging step as GitHub runs it: bash, in the checkout, with its env filled from the event. */
  function runStep(env: Record<string, string>, cwd = repo) {
    const output = join(dirname(t.home), `github-output-${Math.random().toString(36).slice(2)}`);
    writeFileSync(output, '');
    const filled = {
      RANGE: '',
      FORMAT: 'text',
      SARIF_FILE: 'hermesd.sarif',
      PR_BASE: '',
      PR_HEAD: '',
      PUSH_BEFORE: '',
      PUSH_AFTER: '',
      DEFAULT_BRANCH: '',
      ...env,
    };
    const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', judging.run!], {
      cwd,
      env: { ...t.env, ...filled, GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: output, PATH: `${bin}:${t.env.PATH}` },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status ?? -1, out: r.stdout + r.stderr, output: readFileSync(output, 'utf8') };
  }

  it('action.yml is a composite action whose judging step takes the event’s fields', () => {
    expect(action.runs.using).toBe('composite');
    expect(Object.keys(action.inputs)).toEqual(['range', 'format', 'sarif-file', 'package', 'node-version', 'context']);
    expect(judging.env).toMatchObject({
      RANGE: '${{ inputs.range }}',
      PR_BASE: '${{ github.event.pull_request.base.sha }}',
      PR_HEAD: '${{ github.event.pull_request.head.sha }}',
      PUSH_BEFORE: '${{ github.event.before }}',
      PUSH_AFTER: '${{ github.event.after }}',
      DEFAULT_BRANCH: '${{ github.event.repository.default_branch }}',
    });
  });

  it('a pull request: its base..head is judged, violations fail the step and annotate the file', () => {
    const r = runStep({ PR_BASE: base, PR_HEAD: bad });
    expect(r.code).toBe(1);
    expect(r.out).toContain(`hermesd: judging ${base}..${bad}`);
    expect(r.out).toContain(`::error file=creds.txt,line=1,title=hermesd%3A no-aws-keys::Never commit credentials. (commit ${bad.slice(0, 10)})`);
  });

  it('a push: before..after; a new branch: against the default branch', () => {
    expect(runStep({ PUSH_BEFORE: base, PUSH_AFTER: clean }).code).toBe(0);
    const clone = join(dirname(repo), 'ci-clone');
    gitIn(t, repo, 'clone', '-q', repo, clone);
    gitIn(t, clone, 'checkout', '-q', '-b', 'feature', bad);
    const r = runStep({ PUSH_BEFORE: '0'.repeat(40), PUSH_AFTER: bad, DEFAULT_BRANCH: 'main' }, clone);
    // origin/main is at `bad` itself: the new branch brings nothing new.
    expect(r.out).toContain(`hermesd: judging origin/main..${bad}`);
    expect(r.code, r.out).toBe(0);
  });

  it('input context: the instruction files are compared after the commits, annotating both sides, opt-in', () => {
    const step = action.runs.steps.find((s) => s.id === 'context')!;
    expect(step.if).toBe("${{ !cancelled() && inputs.context == 'true' }}");
    expect((action.inputs.context as { default: string }).default).toBe('false');
    const run = (cwd: string) =>
      spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', step.run!], {
        cwd,
        env: { ...t.env, GITHUB_ACTIONS: 'true', PATH: `${bin}:${t.env.PATH}` },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const drifted = t.repo({ 'AGENTS.md': 'Test with `npm test`.\n', 'CLAUDE.md': '# Claude\nTest with `pnpm test`.\n' });
    const r = run(drifted);
    expect(r.status, `the context step passed a drifted repository:\n${r.stdout}${r.stderr}`).toBe(1);
    expect(r.stdout).toContain(
      '::error file=CLAUDE.md,line=2,title=hermesd%3A context-command::CLAUDE.md:2 gives `pnpm test` for test; the authority AGENTS.md:1 gives `npm test`.',
    );
    expect(run(t.repo({ 'AGENTS.md': 'Test with `npm test`.\n', 'CLAUDE.md': '@AGENTS.md\n' })).status).toBe(0);
  });

  it('format sarif writes the log and names it in the step’s outputs', () => {
    const r = runStep({ RANGE: `${base}..${bad}`, FORMAT: 'sarif', SARIF_FILE: 'out.sarif' });
    expect(r.code).toBe(1);
    expect(r.output).toContain('sarif-file=out.sarif');
    expect(JSON.parse(readFileSync(join(repo, 'out.sarif'), 'utf8')).runs[0].results).toHaveLength(1);
  });

  it('a repository adopting hermesd (no config in the base) is judged by init’s default rules, and the log names them', () => {
    const adopting = t.repo({ 'README.md': '# no hermesd config yet\n' });
    const start = gitIn(t, adopting, 'rev-parse', 'HEAD').trim();
    writeFiles(adopting, { 'deploy.sh': `export AWS_ACCESS_KEY_ID=${'AKIA' + 'Q3EGRV7YXH2MZK4P'}\n` });
    gitIn(t, adopting, 'add', '-A');
    gitIn(t, adopting, 'commit', '-qm', 'a key');
    const tip = gitIn(t, adopting, 'rev-parse', 'HEAD').trim();
    const text = runStep({ PR_BASE: start, PR_HEAD: tip }, adopting);
    expect(text.code, `a key in a repository without config passed the action:\n${text.out}`).toBe(1);
    const named = `judged by init's default rules (the base ${start.slice(0, 10)} has no .hermes/config.yaml)`;
    expect(text.out, 'the log does not name the rules that judged').toContain(named);
    const sarif = runStep({ PR_BASE: start, PR_HEAD: tip, FORMAT: 'sarif', SARIF_FILE: 'out.sarif' }, adopting);
    expect(sarif.code).toBe(1);
    expect(sarif.out, 'beside SARIF the log does not name the rules that judged').toContain("::notice title=hermesd::judged by init's default rules");
  });

  it('with nothing to judge it says what to give and exits 2', () => {
    const r = runStep({});
    expect(r.code).toBe(2);
    expect(r.out).toContain('::error title=hermesd::no range to judge');
  });

  it('the pre-commit framework runs hermesd-commits on --from-ref..--to-ref', () => {
    expect(hasPreCommitFramework(), 'the pre-commit framework is not installed: apt-get install -y pre-commit').toBe(true);
    const env = { ...t.env, ...toolEnv(dirname(t.home)), PATH: `${bin}:${t.env.PATH}` };
    const tryRepo = (...args: string[]) =>
      spawnSync('pre-commit', ['try-repo', REPO_ROOT, 'hermesd-commits', '--hook-stage', 'manual', ...args], {
        cwd: repo,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
    const refused = tryRepo('--from-ref', base, '--to-ref', bad);
    expect(refused.status, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout).toMatch(new RegExp(`${bad.slice(0, 10)}\\s+creds\\.txt:1\\s+no-aws-keys`));
    const ok = tryRepo('--from-ref', base, '--to-ref', clean);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    const none = tryRepo('--all-files');
    expect(none.status).not.toBe(0);
    expect(none.stdout).toContain('hermesd-commits judges a range of commits');
  });
});
