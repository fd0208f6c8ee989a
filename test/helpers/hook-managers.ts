/**
 * Real hook managers in a test repository: husky 9, lint-staged, prettier and commitlint from
 * this package's devDependencies (node_modules linked into the repository, so nothing is
 * downloaded), lefthook's binary from its npm package, the pre-commit framework from the
 * system (Debian package `pre-commit`; .ci/run installs it), and older husky majors (4 and 7)
 * with the lint-staged and prettier of their time from npm, cached (helpers/npm-cache.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gitIn, REPO_ROOT, type TestEnv } from './env.js';
import { npmCached, type NpmPin } from './npm-cache.js';

export const BIN = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);

/** The repository sees this package's node_modules (husky's `h` puts node_modules/.bin on PATH). */
export function linkNodeModules(repo: string): void {
  if (!existsSync(join(repo, 'node_modules'))) symlinkSync(join(REPO_ROOT, 'node_modules'), join(repo, 'node_modules'));
}

/** Runs husky 9's installer in `repo` (what `npm install` runs through a "prepare": "husky" script). */
export function huskyInstall(repo: string, env: NodeJS.ProcessEnv): void {
  const husky = join(REPO_ROOT, 'node_modules', 'husky', 'index.js');
  const r = spawnSync(
    process.execPath,
    ['-e', `import(${JSON.stringify(husky)}).then(m => { const e = m.default('.husky'); if (e) { console.error(e); process.exit(1); } })`],
    { cwd: repo, env, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`husky install failed: ${r.stderr}`);
}

/** Environment additions that keep third-party tools out of the user's own config and caches. */
export function toolEnv(base: string): NodeJS.ProcessEnv {
  const xdg = join(base, 'xdg-config');
  mkdirSync(xdg, { recursive: true });
  return { XDG_CONFIG_HOME: xdg, PRE_COMMIT_HOME: join(base, 'pre-commit-cache'), npm_config_cache: join(base, 'npm-cache') };
}

export function hasPreCommitFramework(): boolean {
  return spawnSync('pre-commit', ['--version']).status === 0;
}

/** Runs a command with the test environment; throws with its output on failure. */
export function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

/**
 * husky 4 and 7 as projects pinned them, with lint-staged and prettier. husky 4's install script
 * is left for the project's own `npm rebuild husky` (it writes into the git repository npm runs in).
 */
export const OLD_HUSKY: Record<4 | 7, NpmPin> = {
  4: { pkg: 'husky', version: '4.3.8', with: ['lint-staged@10.5.4', 'prettier@2.8.8'], flags: ['--ignore-scripts'] },
  7: { pkg: 'husky', version: '7.0.4', with: ['lint-staged@16.4.0', 'prettier@3.6.2'] },
};

/**
 * A JavaScript project on husky 4 or 7 whose pre-commit runs lint-staged (prettier on `*.js`),
 * set up as its own `npm install` leaves it: husky 4's install script (run by `npm rebuild husky`,
 * as npm runs it) writes its scripts into .git/hooks and reads package.json's "husky" key; husky
 * 7's "prepare" script (`husky install`) sets core.hooksPath = .husky, and `husky add` writes the
 * hook files, committed. husky 7 also gets a commit-msg hook of the project's (refusing an empty
 * first line), which hermesd has no part in. `env`: the test's, with toolEnv.
 */
export async function oldHuskyProject(t: TestEnv, major: 4 | 7, env: NodeJS.ProcessEnv): Promise<string> {
  const deps = await npmCached(OLD_HUSKY[major]);
  const dev = Object.fromEntries(
    [OLD_HUSKY[major].pkg + '@' + OLD_HUSKY[major].version, ...OLD_HUSKY[major].with!].map((p) => [p.split('@')[0]!, `^${p.split('@')[1]}`]),
  );
  const pkg = {
    name: `husky${major}-app`,
    private: true,
    // husky 4 skips its install where it detects CI (ci-info: CI, BUILD_NUMBER, a vendor's variables…)
    // unless the project says `skipCI: false`, as a project whose CI runs hooks does.
    ...(major === 7 ? { scripts: { prepare: 'husky install' } } : { husky: { skipCI: false, hooks: { 'pre-commit': 'lint-staged' } } }),
    'lint-staged': { '*.js': 'prettier --write' },
    devDependencies: dev,
  };
  const repo = t.repo({ 'package.json': JSON.stringify(pkg, null, 2) + '\n', '.gitignore': 'node_modules\n', 'src/app.js': 'export const x = 1;\n' });
  symlinkSync(join(deps, 'node_modules'), join(repo, 'node_modules'));
  if (major === 4) {
    sh('npm', ['rebuild', 'husky'], repo, env);
    if (!existsSync(join(repo, '.git', 'hooks', 'husky.sh')))
      throw new Error("husky 4's install script wrote no .git/hooks/husky.sh (npm rebuild husky ran no install script?)");
  } else {
    const bin = join('node_modules', 'husky', 'lib', 'bin.js');
    sh(process.execPath, [bin, 'install'], repo, env);
    sh(process.execPath, [bin, 'add', '.husky/pre-commit', 'npx lint-staged'], repo, env);
    sh(process.execPath, [bin, 'add', '.husky/commit-msg', 'head -n 1 "$1" | grep -q .'], repo, env);
    gitIn(t, repo, 'add', '-A');
    gitIn(t, repo, 'commit', '-qm', 'husky 7 with lint-staged');
  }
  return repo;
}

/**
 * What a repository holds of hooks, to compare byte for byte: every file under .husky and
 * .git/hooks (mode and bytes), package.json, and the repository's core.hooksPath.
 */
export function hookFilesSnapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else out[relative(repo, p)] = `${(st.mode & 0o777).toString(8)} ${readFileSync(p, 'utf8')}`;
    }
  };
  for (const d of ['.husky', '.git/hooks']) walk(join(repo, d));
  if (existsSync(join(repo, 'package.json'))) out['package.json'] = readFileSync(join(repo, 'package.json'), 'utf8');
  const r = spawnSync('git', ['config', '--local', '--get', 'core.hooksPath'], { cwd: repo, encoding: 'utf8' });
  out['core.hooksPath'] = r.status === 0 ? r.stdout.trim() : '(unset)';
  return out;
}
