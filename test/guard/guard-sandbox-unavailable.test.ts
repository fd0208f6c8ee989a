/**
 * A machine without a sandbox (HERMESD_BWRAP naming a missing binary: "bubblewrap is not installed",
 * approved by the user at a terminal, as every loosening the daemon's environment asks for):
 * by default `terminal` refuses to run and says how to install one; with
 * guard.sandbox.ifUnavailable: unsandboxed it runs, says so on every call, and the
 * after-the-fact checks still hold; `hermesd doctor` names the fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, type RedTeam } from '../helpers/redteam.js';

const MISSING = '/nonexistent/bwrap';
const RULES = `rules:
  - id: generated-files
    message: Do not edit generated files; run the generator.
    protect: ["src/generated/**"]
`;

let refusing: RedTeam;
let unsandboxed: RedTeam;
beforeAll(async () => {
  [refusing, unsandboxed] = await Promise.all([
    redTeam({ config: RULES, files: { 'src/generated/api.ts': 'v1\n' }, env: { HERMESD_BWRAP: MISSING }, approve: true }),
    redTeam({
      config: `${RULES}guard:\n  sandbox:\n    ifUnavailable: unsandboxed\n`,
      files: { 'src/generated/api.ts': 'v1\n' },
      env: { HERMESD_BWRAP: MISSING },
      approve: true,
    }),
  ]);
}, 120_000);
afterAll(async () => Promise.all([refusing?.close(), unsandboxed?.close()]));

describe('no sandbox on this machine', () => {
  it('terminal refuses by default, with the install command and the config key', async () => {
    const run = await refusing.attack('refuse', [[terminal('touch ran.txt')]]);
    expect(run.parsed[0]!.error).toMatch(/sandbox/);
    expect(run.parsed[0]!.error).toContain('apt-get install bubblewrap');
    expect(run.parsed[0]!.error).toContain('guard.sandbox.ifUnavailable');
    expect(existsSync(join(refusing.repo, 'ran.txt'))).toBe(false);
  });

  it('ifUnavailable: unsandboxed runs the command with a warning on every call; protected files still come back', async () => {
    const run = await unsandboxed.attack('unsandboxed', [
      [terminal('echo hacked > src/generated/api.ts; printenv OPENAI_API_KEY; echo done')],
      [terminal('true')],
    ]);
    for (const r of run.parsed) expect(r.sandbox).toMatch(/WITHOUT a sandbox/);
    expect(run.parsed[0]!.output).toContain('done');
    expect(run.parsed[0]!.output).not.toContain('sk-proj');
    expect(run.parsed[0]!.guard).toContain('generated-files');
    expect(readFileSync(join(unsandboxed.repo, 'src/generated/api.ts'), 'utf8')).toBe('v1\n');
  });

  it('doctor says how to install bubblewrap', async () => {
    const r = await refusing.t.cli(['doctor', '--json'], { cwd: refusing.repo, env: { ...refusing.env, HERMESD_BWRAP: MISSING } });
    const check = r.json().checks.find((c: { name: string }) => c.name === 'sandbox');
    expect(check.status).toBe('warn');
    expect(check.fix).toContain('apt-get install bubblewrap');
    const human = await refusing.t.cli(['doctor'], { cwd: refusing.repo, env: { ...refusing.env, HERMESD_BWRAP: MISSING } });
    expect(human.stdout).toMatch(/sandbox .*not installed/);
    const ok = await refusing.t.cli(['doctor', '--json'], { cwd: refusing.repo, env: { ...refusing.env, HERMESD_BWRAP: '' } });
    expect(ok.json().checks.find((c: { name: string }) => c.name === 'sandbox').status).toBe('ok');
  });
});
