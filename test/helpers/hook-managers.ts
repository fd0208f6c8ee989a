/**
 * Real hook managers in a test repository: husky 9, lint-staged, prettier and commitlint from
 * this package's devDependencies (node_modules linked into the repository, so nothing is
 * downloaded), lefthook's binary from its npm package, the pre-commit framework from the
 * system (Debian package `pre-commit`; .ci/run installs it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './env.js';

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
