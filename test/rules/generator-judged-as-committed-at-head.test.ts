/**
 * A generator edited in the same change as its output used to vouch for whatever it was
 * edited to write: the output was "regenerated" by the edited generator. Generated files are
 * judged with the generator as committed at HEAD — by the pre-commit hook (and `check
 * --staged`) and by the check after an agent's command — and a refusal says the generator
 * itself changed and needs the user's commit. A generator change that HEAD's generator agrees
 * with (a comment) still lets regenerated files through. (The post-commit audit and the push
 * broker run no generator: they report a generated file's change as not verified, as before.)
 * Real repositories, real git, a real daemon for the hook, the terminal tool's guard.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { checkStaged } from '../../src/rules/engine.js';
import { prepareTerminalGuard } from '../../src/guard/terminal-guard.js';
import { sandboxAvailability } from '../../src/guard/sandbox.js';
import { runCommand } from '../../src/process/run.js';
import { commitIn, gitIn, makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

const GEN_SH = 'mkdir -p gen && tr a-z A-Z < schema.txt > gen/out.txt\n';
const CONFIG_YAML = `rules:
  - id: generated-files
    message: Do not edit generated files; change schema.txt and run sh gen.sh.
    protect: ["gen/**"]
    generator: "sh gen.sh"
`;
const config = configSchema().parse({
  rules: [{ id: 'generated-files', message: 'Do not edit generated files; change schema.txt and run sh gen.sh.', protect: ['gen/**'], generator: 'sh gen.sh' }],
});

/** The edit: a generator that writes what the agent wants, run, so its output is "regenerated". */
const EDITED_GEN = 'mkdir -p gen && printf "HAND WRITTEN\\n" > gen/out.txt\n';

let t: TestEnv;
beforeAll(() => {
  t = makeEnv();
});
afterAll(async () => t?.cleanup());

const repo = () => t.repo({ 'gen.sh': GEN_SH, 'schema.txt': 'hello\n', 'gen/out.txt': 'HELLO\n' });
const sh = (cwd: string, script: string) => execFileSync('sh', ['-c', script], { cwd });

describe('check --staged (what pre-commit judges)', () => {
  it('an edited generator and its output: judged with HEAD’s generator, refused, saying the generator changed', async () => {
    const r = repo();
    writeFiles(r, { 'gen.sh': EDITED_GEN });
    sh(r, 'sh gen.sh');
    gitIn(t, r, 'add', '-A');
    const { violations } = await checkStaged(r, config);
    expect(violations.map((v) => `${v.file} ${v.rule}`)).toEqual(['gen/out.txt generated-files']);
    expect(violations[0]!.message).toContain('The generator itself changed in this commit (gen.sh)');
    expect(violations[0]!.message).toContain("needs the user's commit");
  });

  it('a generator change HEAD’s generator agrees with, and a schema change regenerated: accepted', async () => {
    const r = repo();
    writeFiles(r, { 'gen.sh': `# upper-cases the schema\n${GEN_SH}`, 'schema.txt': 'hello world\n' });
    sh(r, 'sh gen.sh');
    gitIn(t, r, 'add', '-A');
    expect((await checkStaged(r, config)).violations).toEqual([]);
  });

  it('a file the command passes to the generator is its input, not its code: changed with its output, accepted', async () => {
    const r = t.repo({ 'gen.sh': 'mkdir -p gen && tr a-z A-Z < "$1" > gen/out.txt\n', 'schema.txt': 'hello\n', 'gen/out.txt': 'HELLO\n' });
    const withInput = configSchema().parse({ rules: [{ ...config.rules[0]!, generator: 'sh gen.sh schema.txt' }] });
    writeFiles(r, { 'schema.txt': 'hello input\n' });
    sh(r, 'sh gen.sh schema.txt');
    gitIn(t, r, 'add', '-A');
    expect((await checkStaged(r, withInput)).violations).toEqual([]);
  });

  it('npm run: package.json and the script it names are the generator', async () => {
    const r = t.repo({
      'package.json': JSON.stringify({ scripts: { gen: 'sh tools/gen.sh' } }),
      'tools/gen.sh': GEN_SH,
      'schema.txt': 'hi\n',
      'gen/out.txt': 'HI\n',
    });
    const npmConfig = configSchema().parse({ rules: [{ ...config.rules[0]!, generator: 'npm run --silent gen' }] });
    writeFiles(r, { 'tools/gen.sh': EDITED_GEN });
    sh(r, 'sh tools/gen.sh');
    gitIn(t, r, 'add', '-A');
    const { violations } = await checkStaged(r, npmConfig);
    expect(
      violations.map((v) => v.file),
      JSON.stringify(violations),
    ).toEqual(['gen/out.txt']);
    expect(violations[0]!.message).toContain('(tools/gen.sh)');
  });
});

describe('the pre-commit hook', () => {
  it('refuses the commit of an edited generator with its output, and says why', async () => {
    const r = repo();
    writeFiles(r, { '.hermes/config.yaml': CONFIG_YAML });
    const init = await t.cli(['init'], { cwd: r });
    expect(init.code, init.stderr).toBe(0);
    gitIn(t, r, 'add', '-A');
    expect(commitIn(t, r, ['-qm', 'hermesd']).code).toBe(0);
    writeFiles(r, { 'gen.sh': EDITED_GEN });
    sh(r, 'sh gen.sh');
    gitIn(t, r, 'add', '-A');
    const c = commitIn(t, r, ['-qm', 'regenerate']);
    expect(c.code, c.out).toBe(1);
    expect(c.out).toContain('gen/out.txt');
    expect(c.out).toContain('The generator itself changed in this commit (gen.sh)');
    // The user commits the generator on its own; then the output it writes is what HEAD's generator writes.
    gitIn(t, r, 'reset', '-q', '--', 'gen/out.txt');
    expect(commitIn(t, r, ['-qm', 'new generator']).code).toBe(0);
    gitIn(t, r, 'add', '-A');
    const next = commitIn(t, r, ['-qm', 'regenerate']);
    expect(next.code, next.out).toBe(0);
  }, 60_000);
});

describe("the check after an agent's command", () => {
  const run = async (root: string, command: string, cfg = config) => {
    const guard = await prepareTerminalGuard(root, cfg, { env: { ...t.env, HOME: join(t.home, '..') } });
    const r = await runCommand(command, { cwd: root, env: guard.env, wrap: (c) => guard.command(c), timeoutMs: 30_000, output: { headChars: 20_000 } });
    return { output: r.output.head, guard: await guard.finish() };
  };
  // Both, always: a machine without bubblewrap fails the sandboxed case and says why, rather than dropping it.
  const modes = [
    { name: 'unsandboxed', cfg: configSchema().parse({ ...config, guard: { sandbox: { enabled: false } } }), sandboxed: false },
    { name: 'sandboxed', cfg: config, sandboxed: true },
  ];

  it.each(modes)('$name: the output of an edited generator is put back, and the report says the generator changed', async ({ cfg, sandboxed }) => {
    const found = sandboxAvailability(process.env);
    if (sandboxed && found.kind !== 'bwrap')
      throw new Error(
        `bubblewrap cannot run here (${JSON.stringify(found)}): install it (apt-get install bubblewrap; .ci/run does) to test the sandboxed case`,
      );
    const r = repo();
    // (the agent's write_file, or an earlier command, edited the generator: it differs from HEAD's all the same)
    writeFileSync(join(r, 'gen.sh'), EDITED_GEN);
    const res = await run(r, 'sh gen.sh && cat gen/out.txt', cfg);
    expect(res.output).toContain('HAND WRITTEN');
    expect(readFileSync(join(r, 'gen', 'out.txt'), 'utf8')).toBe('HELLO\n');
    expect(res.guard.notice).toContain('gen/out.txt');
    expect(res.guard.notice).toContain('the generator itself was changed (gen.sh)');
    // The generator edit itself stays: it is not protected, only what it writes is.
    expect(readFileSync(join(r, 'gen.sh'), 'utf8')).toBe(EDITED_GEN);
  });

  it.each(modes)('$name: a schema change regenerated with an unchanged (or only commented) generator stays', async ({ cfg }) => {
    const r = repo();
    writeFileSync(join(r, 'gen.sh'), `# upper-cases the schema\n${GEN_SH}`);
    const res = await run(r, "printf 'hello again\\n' > schema.txt && sh gen.sh", cfg);
    expect(res.guard.notice ?? '', JSON.stringify(res)).not.toContain('gen/out.txt');
    expect(readFileSync(join(r, 'gen', 'out.txt'), 'utf8')).toBe('HELLO AGAIN\n');
  });
});
