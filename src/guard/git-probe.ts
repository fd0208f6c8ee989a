/**
 * The repository facts the git policy asks about, answered by the real git binary with
 * the same global options and environment as the invocation being judged (so `-c alias.x=…`
 * or `--git-dir` are seen exactly as git would see them).
 */
import type { GitProbe } from './git-policy.js';
import { runGit } from '../git/run.js';

/** Environment variables through which one invocation can add config. */
const CONFIG_ENV = /^GIT_CONFIG(_PARAMETERS|_COUNT|_KEY_\d+|_VALUE_\d+|_GLOBAL|_SYSTEM)?$/;

export function withoutConfigOverrides(globals: string[], env: NodeJS.ProcessEnv): { globals: string[]; env: NodeJS.ProcessEnv } {
  const g: string[] = [];
  for (let i = 0; i < globals.length; i++) {
    const a = globals[i]!;
    if (a === '-c' || a === '--config-env') {
      i++;
      continue;
    }
    if (a.startsWith('--config-env=')) continue;
    g.push(a);
  }
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!CONFIG_ENV.test(k)) e[k] = v;
  return { globals: g, env: e };
}

/**
 * `invocation`: the variables the invocation itself sets (`GIT_CONFIG_COUNT=1 … git commit`), when
 * `env` also holds the judge's own (its stored view of the repository); default `env`.
 */
export function makeProbe(gitBin: string, globals: string[], cwd: string, env: NodeJS.ProcessEnv, invocation: NodeJS.ProcessEnv = env): GitProbe {
  const q = (args: string[], e: NodeJS.ProcessEnv = env, g: string[] = globals) =>
    runGit(gitBin, [...g, ...args], { cwd, env: { ...e, GIT_OPTIONAL_LOCKS: '0' } });
  const out = (args: string[]) => {
    const r = q(args);
    return r.code === 0 ? r.stdout.trim() : undefined;
  };
  const count = (args: string[]) => Number(out(['rev-list', '--count', ...args]) ?? NaN);
  return {
    alias(name) {
      const r = q(['config', '--get', `alias.${name}`]);
      return r.code === 0 ? r.stdout.replace(/\n$/, '') : undefined;
    },
    ignoredAmong(pathspecs) {
      const r = q(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--', ...pathspecs]);
      return r.code === 0 ? r.stdout.split('\0').filter(Boolean) : [];
    },
    isPushed(rev) {
      const r = out(['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${rev}`, 'refs/remotes']);
      return !!r;
    },
    rewritesPushed(tip, base) {
      const range = base === undefined ? [tip] : [tip, `^${base}`];
      const all = count(range);
      if (!Number.isFinite(all) || all === 0) return false;
      const unpushed = count([...range, '--not', '--remotes']);
      return Number.isFinite(unpushed) && unpushed < all;
    },
    isCommit(arg) {
      return q(['rev-parse', '--verify', '-q', `${arg}^{commit}`]).code === 0;
    },
    hooksPathOverridden() {
      // Nothing of this invocation's own (-c, --config-env, GIT_CONFIG_*): both questions would
      // be the same one, so no git runs (two git processes on every agent's `git commit`).
      const mine = withoutConfigOverrides(globals, invocation);
      if (mine.globals.length === globals.length && Object.keys(mine.env).length === Object.keys(invocation).length) return false;
      const clean = withoutConfigOverrides(globals, env);
      const asInvoked = q(['config', '--get', 'core.hooksPath']);
      const own = q(['config', '--get', 'core.hooksPath'], clean.env, clean.globals);
      return asInvoked.stdout.trim() !== own.stdout.trim();
    },
    configForcesPush(remote) {
      const name = remote && /^[A-Za-z0-9_.-]+$/.test(remote) ? remote.replace(/\./g, '\\.') : '.*';
      const r = q(['config', '--get-regexp', `^remote\\.${name}\\.(push|mirror)$`]);
      if (r.code !== 0) return false;
      return r.stdout.split('\n').some((line) => {
        const [key, ...v] = line.split(' ');
        const value = v.join(' ').trim();
        return key?.endsWith('.mirror') ? value === 'true' : value.startsWith('+');
      });
    },
  };
}
