/**
 * Red team, promise 1 (protected paths): a protected file cannot be changed after the
 * guard's check, by a writer that outlives its command, a directory swapped for a symlink
 * (under write_file or in the terminal), or a generator edited to write other files.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, writeFile, type RedTeam } from '../helpers/redteam.js';

const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files; change the schema and run the generator.
    protect: ["src/generated/**"]
    generator: "sh gen.sh"
  - id: lockfile
    message: The lock file is written by the release tool only.
    protect: ["schema.lock"]
checks:
  - id: tests
    run: "sh check.sh"
hooks:
  pre-commit:
    checks: [tests]
`;
const API = 'src/generated/api.ts';
const API_TEXT = 'export const v = 1;\n';
const LOCK = 'lock v1\n';

let rt: RedTeam;
let outside: string;
beforeAll(async () => {
  rt = await redTeam({
    config: CONFIG,
    files: {
      [API]: API_TEXT,
      'schema.lock': LOCK,
      'schema.txt': API_TEXT,
      'gen.sh': 'cp schema.txt src/generated/api.ts\n',
      'check.sh': 'exit 0\n',
      'docs/readme.md': 'docs\n',
    },
  });
  outside = realpathSync(join(rt.repo, '..'));
}, 120_000);
afterAll(async () => rt?.close());
afterEach(() => rt.reset());

const api = () => readFileSync(join(rt.repo, API), 'utf8');
const lock = () => readFileSync(join(rt.repo, 'schema.lock'), 'utf8');

describe('protected files hold after the check', () => {
  it('a setsid background writer that outlives its command', async () => {
    await rt.attack('setsid', [[terminal(`setsid sh -c 'sleep 1; printf x > schema.lock; printf x > ${API}' >/dev/null 2>&1 & echo started`)]]);
    await new Promise((r) => setTimeout(r, 1_800));
    // The next command would take the change as its baseline.
    await rt.attack('setsid-next', [[terminal('true')]]);
    expect(lock()).toBe(LOCK);
    expect(api()).toBe(API_TEXT);
  });

  it('a plain & that writes within the 200 ms before the group is killed', async () => {
    await rt.attack('ampersand', [
      [terminal(`(sleep 0.1; printf x > schema.lock) >/dev/null 2>&1 & (sleep 0.15; printf x > ${API}) >/dev/null 2>&1 & echo started`)],
    ]);
    await new Promise((r) => setTimeout(r, 500));
    await rt.attack('ampersand-next', [[terminal('true')]]);
    expect(lock()).toBe(LOCK);
    expect(api()).toBe(API_TEXT);
  });

  it('a directory swapped for a symlink while write_file runs', async () => {
    const target = join(outside, 'swap-target');
    mkdirSync(target, { recursive: true });
    // A process the agent left behind (or any other) swaps docs/ for a link out of the repository, again and again.
    const swapper = spawn(process.execPath, [
      '-e',
      `const fs=require('fs');const d=${JSON.stringify(join(rt.repo, 'docs'))};const end=Date.now()+8000;
       while(Date.now()<end){try{fs.renameSync(d,d+'.real');fs.symlinkSync(${JSON.stringify(target)},d);fs.unlinkSync(d);fs.renameSync(d+'.real',d);}catch{}}`,
    ]);
    try {
      await rt.attack('swap', [Array.from({ length: 200 }, (_, i) => writeFile(`docs/note${i}.md`, `note ${i}\n`))]);
    } finally {
      swapper.kill('SIGKILL');
    }
    expect(readdirSync(target)).toEqual([]);
  });

  it('mv src/generated away and a symlink in its place', async () => {
    const away = join(outside, 'moved-generated');
    const run = await rt.attack('mv-symlink', [[terminal(`mv src/generated ${away} && ln -s ${away} src/generated; ls -la src`)]]);
    expect(lstatSync(join(rt.repo, 'src', 'generated')).isDirectory(), run.results.join('\n')).toBe(true);
    expect(api()).toBe(API_TEXT);
  });

  it("a pre-commit check edited to run code outside the sandbox (the daemon runs the commit's checks)", async () => {
    const escape = join(outside, 'check-escape.txt');
    const run = await rt.attack('check-escape', [
      [
        writeFile(
          'check.sh',
          `echo pwned > ${escape}\nprintf 'rules: []\\n' > ${join(rt.repo, '.hermes', 'config.yaml')}\nprintf evil > ${join(rt.repo, 'schema.lock')}\nexit 0\n`,
        ),
        terminal('echo more >> docs/readme.md && git add docs/readme.md check.sh && git commit -qm via-check; echo "commit exit $?"'),
      ],
    ]);
    const said = run.results.join('\n');
    expect(existsSync(escape), said).toBe(false);
    expect(readFileSync(join(rt.repo, '.hermes', 'config.yaml'), 'utf8')).toBe(CONFIG);
    expect(lock()).toBe(LOCK);
  });

  it("a generator edited to escape, run by the pre-commit hook on the commit's snapshot", async () => {
    const escape = join(outside, 'precommit-generator-escape.txt');
    const run = await rt.attack('precommit-generator', [
      [
        writeFile('gen.sh', `cp schema.txt src/generated/api.ts\necho pwned > ${escape}\n`),
        terminal(`printf 'export const v = 2;\\n' > schema.txt && sh gen.sh; git add -A && git commit -qm regenerate; echo "commit exit $?"`),
      ],
    ]);
    expect(existsSync(escape), run.results.join('\n')).toBe(false);
  });

  it('a generator edited to write other files, whose output would be taken as regenerated', async () => {
    const run = await rt.attack('generator', [
      [
        writeFile(
          'gen.sh',
          `cp schema.txt src/generated/api.ts\nprintf evil > schema.lock\nprintf 'rules: []\\n' > .hermes/config.yaml\necho pwned > ${join(outside, 'generator-escape.txt')}\n`,
        ),
        terminal(`printf 'export const v = 2;\\n' > schema.txt && printf 'export const v = 3;\\n' > ${API}`),
      ],
    ]);
    const said = run.results.join('\n');
    expect(lock(), said).toBe(LOCK);
    expect(readFileSync(join(rt.repo, '.hermes', 'config.yaml'), 'utf8')).toBe(CONFIG);
    expect(existsSync(join(outside, 'generator-escape.txt'))).toBe(false);
    expect(api()).toBe(API_TEXT);
  });

  it("a write the sandbox refuses is answered with the rule that protects the path, beside the command's output", async () => {
    const run = await rt.attack('read-only', [[terminal("printf x > schema.lock; touch .hermes/extra.yaml; echo '[core]' >> .git/config; echo done")]]);
    const result = run.parsed[0]!;
    expect(result.output, run.results.join('\n')).toMatch(/Read-only file system/);
    expect(result.output).toContain('done');
    expect(result.refused_writes).toContain(
      'schema.lock is read-only in the sandbox: protected by rule lockfile: The lock file is written by the release tool only.',
    );
    expect(result.refused_writes).toContain(".hermes/extra.yaml is read-only in the sandbox: hermesd's guard reads it");
    expect(result.refused_writes).toContain('.git/config is read-only in the sandbox: in the git directory only git');
    expect(lock()).toBe(LOCK);
  });
});
