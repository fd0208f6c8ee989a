/**
 * A newcomer's first hour, as a user who never read the source lives it, on three kinds of
 * repository hermesd did not make: a husky 7 project with lint-staged and prettier (installed
 * from npm, as its own `npm install` would), a project that uses the pre-commit framework, and
 * one with no hook manager whose generated code is protected — the last at a path with spaces
 * and non-ASCII letters. In each: `init`, `status`, `doctor`, a good commit (the project's own
 * hooks still run), a protected edit, a key, `check --commits` over the history, `init --agents
 * all`, `init --uninstall` and `stop`. Every message is held to what README.md shows (the refusal
 * of a key is README's own example, line for line), no output holds a stack trace, and the
 * uninstall gives back the hook files byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPreCommitFramework, toolEnv } from '../helpers/hook-managers.js';
import { makeEnv, REPO_ROOT, writeFiles, type CliResult, type TestEnv } from '../helpers/env.js';
import { INSTALL_TIMEOUT_MS, npmCached } from '../helpers/npm-cache.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** README's example of a refused key: the commented lines after `git commit -m "try"`. */
function readmeKeyRefusal(): string[] {
  const lines = README.split('\n');
  const at = lines.findIndex((l) => l.includes('git add creds.txt && git commit -m "try"'));
  expect(at, 'README no longer shows the refused key example').toBeGreaterThan(0);
  const out: string[] = [];
  for (let i = at + 1; lines[i]?.startsWith('# '); i++) out.push(lines[i]!.slice(2));
  return out;
}

const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

/** What a newcomer's repository holds of hooks: every file under the hook folders, and git's hooksPath. */
function hookFiles(repo: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(repo, p)] = `${(statSync(p).mode & 0o777).toString(8)} ${readFileSync(p, 'utf8')}`;
    }
  };
  for (const d of ['.husky', '.git/hooks']) walk(join(repo, d));
  for (const f of ['.pre-commit-config.yaml', 'package.json', '.gitignore']) if (existsSync(join(repo, f))) out[f] = readFileSync(join(repo, f), 'utf8');
  out['core.hooksPath'] = spawnSync('git', ['config', '--get', 'core.hooksPath'], { cwd: repo, env, encoding: 'utf8' }).stdout;
  return out;
}

type Shape = { name: string; make: (t: TestEnv, base: string, env: NodeJS.ProcessEnv) => Promise<{ repo: string; protectedFile: string; rule: string }> };

const SHAPES: Shape[] = [
  {
    name: 'husky 7 with lint-staged and prettier',
    async make(t, base, env) {
      const deps = await npmCached({ pkg: 'husky', version: '7.0.4', with: ['lint-staged@16.4.0', 'prettier@3.6.2'] });
      const repo = join(base, 'husky7-app');
      mkdirSync(repo);
      const run = (cmd: string, ...args: string[]) => {
        const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed while setting up the husky 7 project: ${r.stdout}${r.stderr}`);
      };
      run('git', 'init', '-q', '-b', 'main');
      writeFiles(repo, {
        'package.json':
          JSON.stringify(
            {
              name: 'app',
              private: true,
              scripts: { prepare: 'husky install' },
              'lint-staged': { '*.js': 'prettier --write' },
              devDependencies: { husky: '^7.0.4', 'lint-staged': '^16.4.0', prettier: '^3.6.2' },
            },
            null,
            2,
          ) + '\n',
        '.gitignore': 'node_modules\n',
        'src/app.js': 'export const x = 1;\n',
        'gen/schema.js': '// generated\nexport const schema = {};\n',
      });
      symlinkSync(join(deps, 'node_modules'), join(repo, 'node_modules'));
      // What `npm install` runs through "prepare", then the project's own hook, as husky 7's docs say.
      run(process.execPath, 'node_modules/husky/lib/bin.js', 'install');
      run(process.execPath, 'node_modules/husky/lib/bin.js', 'add', '.husky/pre-commit', 'npx lint-staged');
      run('git', 'add', '-A');
      run('git', 'commit', '-qm', 'a husky 7 project');
      return { repo, protectedFile: 'gen/schema.js', rule: 'generated' };
    },
  },
  {
    name: 'the pre-commit framework',
    async make(t, base, env) {
      const repo = join(base, 'py-app');
      mkdirSync(repo);
      const run = (cmd: string, ...args: string[]) => {
        const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed while setting up the pre-commit project: ${r.stdout}${r.stderr}`);
      };
      run('git', 'init', '-q', '-b', 'main');
      writeFiles(repo, {
        '.pre-commit-config.yaml':
          'repos:\n  - repo: local\n    hooks:\n      - id: no-breakpoints\n        name: no breakpoint() left behind\n        entry: "breakpoint\\\\(\\\\)"\n        language: pygrep\n        files: \\.py$\n',
        'app/main.py': 'print("hello")\n',
        'gen/models_pb2.py': '# Generated by the protocol buffer compiler.  DO NOT EDIT!\nMODELS = {}\n',
      });
      run('pre-commit', 'install');
      run('git', 'add', '-A');
      run('git', 'commit', '-qm', 'a pre-commit project');
      return { repo, protectedFile: 'gen/models_pb2.py', rule: 'generated' };
    },
  },
  {
    name: 'no hook manager, generated code, a path with spaces and non-ASCII letters',
    async make(t, base, env) {
      const repo = join(base, 'my projects', 'Bücher café');
      mkdirSync(repo, { recursive: true });
      const run = (cmd: string, ...args: string[]) => {
        const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed while setting up the plain project: ${r.stdout}${r.stderr}`);
      };
      run('git', 'init', '-q', '-b', 'main');
      writeFiles(repo, {
        'proto/api.proto': 'syntax = "proto3";\nmessage Ping {}\n',
        'gen.sh': 'mkdir -p gen && printf "// Code generated from proto/api.proto. DO NOT EDIT.\\nexport const Ping = {};\\n" > gen/api_pb.js\n',
        'gen/api_pb.js': '// Code generated from proto/api.proto. DO NOT EDIT.\nexport const Ping = {};\n',
        'src/main.js': 'import { Ping } from "../gen/api_pb.js";\n',
      });
      for (let i = 0; i < 5; i++) {
        writeFiles(repo, { [`src/m${i}.js`]: `export const m${i} = ${i};\n` });
        run('git', 'add', '-A');
        run('git', 'commit', '-qm', `step ${i}`);
      }
      return { repo, protectedFile: 'gen/api_pb.js', rule: 'generated' };
    },
  },
];

describe("a newcomer's first hour on three repository shapes", () => {
  let t: TestEnv;
  let base: string;
  let env: NodeJS.ProcessEnv;
  const outputs: Array<{ what: string; r: { stdout: string; stderr: string } }> = [];
  const said = (what: string, r: CliResult) => {
    outputs.push({ what, r });
    return r;
  };

  beforeAll(() => {
    t = makeEnv();
    base = realpathSync(join(t.home, '..'));
    env = { ...t.env, ...toolEnv(base) };
  });
  afterAll(async () => {
    await t.cleanup();
  });

  for (const shape of SHAPES) {
    it(
      `${shape.name}: init, status, doctor, a good commit, a protected edit, a key, check --commits, --agents all, uninstall`,
      async () => {
        if (shape.name.includes('pre-commit'))
          expect(hasPreCommitFramework(), 'the pre-commit framework is not installed (apt-get install pre-commit)').toBe(true);
        const { repo, protectedFile, rule } = await shape.make(t, base, env);
        const hermesd = async (...args: string[]) =>
          said(`hermesd ${args.join(' ')} (${shape.name})`, await t.cli(args, { cwd: repo, env, timeoutMs: 60_000 }));
        const git = (...args: string[]) => {
          const r = spawnSync('git', args, { cwd: repo, env, encoding: 'utf8', timeout: 60_000 });
          const out = { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
          outputs.push({ what: `git ${args.join(' ')} (${shape.name})`, r: out });
          return out;
        };
        const before = hookFiles(repo, env);
        const firstCommit = git('rev-list', '--max-parents=0', 'HEAD').stdout.trim();

        // Adoption: before any config is committed, a range is judged by init's defaults, and says so.
        const adopt = await hermesd('check', '--commits', `${firstCommit}..HEAD`);
        expect(adopt.code, adopt.stderr).toBe(0);
        if (git('rev-list', '--count', `${firstCommit}..HEAD`).stdout.trim() !== '0')
          expect(adopt.stdout + adopt.stderr).toContain("judged by init's default rules");

        const init = await hermesd('init');
        expect(init.code, `init failed: ${init.stderr}`).toBe(0);
        const installed = hookFiles(repo, env);
        expect(init.stdout + init.stderr, 'init does not say the hooks are installed').toContain('hermesd hooks installed');
        expect(init.stdout + init.stderr, 'init says a hook manager twice, or garbles it').not.toMatch(/\(no hook manager \(|\)\s*\(no hook manager/);
        // The newcomer adds a rule of their own under the first one, as README suggests.
        const config = readFileSync(join(repo, '.hermes', 'config.yaml'), 'utf8');
        expect(config, "init's config has no place marked for more rules").toContain('\n  # Forbidden content');
        writeFileSync(
          join(repo, '.hermes', 'config.yaml'),
          config.replace(
            '\n  # Forbidden content',
            `  - id: ${rule}\n    message: Generated code; change the source and regenerate.\n    protect: ["gen/**"]\n\n  # Forbidden content`,
          ),
        );

        // README's first command ends `hermesd init && hermesd start`.
        const start = await hermesd('start');
        expect(start.code, `start: ${start.stderr}`).toBe(0);
        expect(start.stdout + start.stderr).toMatch(/started: pid \d+/);
        const status = await hermesd('status');
        expect(status.code, `status: ${status.stderr}`).toBe(0);
        expect(status.stdout, 'status does not say whether the hooks are active').toMatch(/hooks/);

        const doctor = await hermesd('doctor');
        expect(doctor.code, `doctor fails on a fresh setup:\n${doctor.stdout}${doctor.stderr}`).toBe(0);

        // A good commit: the project's own hooks still run (husky's lint-staged formats the file).
        if (shape.name.startsWith('husky')) writeFileSync(join(repo, 'src', 'app.js'), 'export   const x =   2\n');
        else writeFiles(repo, { 'src/extra.js': 'export const y = 1;\n', 'app/extra.py': 'Y = 1\n' });
        expect(git('add', '-A').code).toBe(0);
        const good = git('commit', '-m', 'set up hermesd');
        expect(good.code, `a clean commit was refused:\n${good.stdout}${good.stderr}`).toBe(0);
        expect(good.stdout + good.stderr, "husky's deprecation notice: init upgraded husky").not.toContain('DEPRECATED');
        if (shape.name.startsWith('husky'))
          expect(readFileSync(join(repo, 'src', 'app.js'), 'utf8'), 'lint-staged did not run (prettier would have formatted the file)').toBe(
            'export const x = 2;\n',
          );
        if (shape.name.includes('pre-commit')) {
          writeFileSync(join(repo, 'app', 'main.py'), 'breakpoint()\n');
          git('add', '-A');
          const own = git('commit', '-m', 'debugging');
          expect(own.code, "the project's own pre-commit hook no longer runs").toBe(1);
          expect(own.stdout + own.stderr).toContain('no breakpoint() left behind');
          git('checkout', '--', '.');
          git('reset', '-q', '--hard');
        }

        // A protected edit, by hand.
        writeFileSync(join(repo, protectedFile), readFileSync(join(repo, protectedFile), 'utf8') + 'export const hand = 1;\n');
        git('add', protectedFile);
        const edit = git('commit', '-m', 'edit generated code');
        expect(edit.code, `a hand edit of ${protectedFile} was committed`).toBe(1);
        expect(edit.stderr).toContain(`${protectedFile}:`);
        expect(edit.stderr).toContain(rule);
        git('reset', '-q', '--hard');

        // A key: README's example, as README shows it.
        writeFileSync(join(repo, 'creds.txt'), 'key = "AKIAABCDEFGHIJKLMNOP"\n');
        git('add', 'creds.txt');
        const key = git('commit', '-m', 'try');
        expect(key.code, 'a key was committed').toBe(1);
        const lines = key.stderr.split('\n');
        for (const line of readmeKeyRefusal()) expect(lines, `README's refusal line is not what the hook printed:\n${key.stderr}`).toContain(line);
        git('rm', '-q', '--cached', 'creds.txt');

        // The whole history, judged as CI judges it: the rules that judged are named.
        const range = await hermesd('check', '--commits', `${firstCommit}..HEAD`);
        expect(range.code, range.stdout + range.stderr).toBe(0);
        expect(range.stdout + range.stderr).toMatch(
          /no rule violations in \d+ commits?, judged by (init's default rules|the rules of \.hermes\/config\.yaml at [0-9a-f]+)/,
        );

        // Every agent, on a machine that has none of them installed: nothing fails.
        const agents = await hermesd('init', '--agents', 'all');
        expect(agents.code, `init --agents all: ${agents.stderr}`).toBe(0);
        const doctor2 = await hermesd('doctor');
        expect(doctor2.code, `doctor fails after init --agents all:\n${doctor2.stdout}${doctor2.stderr}`).toBe(0);

        // Uninstall gives back every hook file as it was, but for those the newcomer committed with
        // hermesd's part (init listed them to commit; `git add -A` did): those stay as committed
        // and are named (docs/hooks.md: taking hermesd out of the project is a commit).
        const un = await hermesd('init', '--uninstall', '--json');
        expect(un.code, un.stderr).toBe(0);
        const kept: string[] = un.json().keptCommitted ?? [];
        const committedHookFiles = git('diff', '--name-only', firstCommit, 'HEAD')
          .stdout.split('\n')
          .filter((f) => (f in before || f in installed) && f !== 'package.json');
        expect([...kept].sort(), 'uninstall does not name the committed hook files it keeps').toEqual(committedHookFiles.sort());
        const after = hookFiles(repo, env);
        for (const f of kept) {
          expect(after[f]?.endsWith(git('show', `HEAD:${f}`).stdout), `${f} is not as committed after uninstall`).toBe(true);
          delete after[f];
        }
        const expected = { ...before };
        for (const f of kept) delete expected[f];
        expect(after, 'init --uninstall did not give back the hook files byte for byte').toEqual(expected);
        const stop = await hermesd('stop');
        expect(stop.code, stop.stderr).toBe(0);
        expect(existsSync(join(repo, '.git', 'hermesd')), 'after init --uninstall and stop, .git/hermesd is still there').toBe(false);

        const traces = outputs.filter((o) => STACK.test(o.r.stdout) || STACK.test(o.r.stderr));
        expect(
          traces.map((o) => `${o.what}:\n${o.r.stderr}`),
          'a command printed a stack trace without --debug',
        ).toEqual([]);
      },
      INSTALL_TIMEOUT_MS + 120_000,
    );
  }
});
