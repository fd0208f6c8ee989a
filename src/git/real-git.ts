/**
 * Running the real git binary: resolved once by absolute path (never through a PATH
 * that the agent's shim directory sits on), called synchronously with captured output.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { gitEnv } from './run.js';

export type GitResult = { code: number; stdout: string; stderr: string };

/** Marker line every shim script carries, so a shim is never mistaken for the real git. */
export const SHIM_MARKER = 'hermesd-guard-git-shim';

/** A git call of the guard's own (a ref, a config value) takes milliseconds; this bounds a wedged one. */
const GIT_QUERY_TIMEOUT_MS = 30_000;

/**
 * The first executable `git` on PATH that is not a hermesd shim, as an absolute real path.
 * Captured at daemon start so later PATH changes (the shim dir) cannot redirect it.
 */
export function findRealGit(env: NodeJS.ProcessEnv = process.env): string {
  const dirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, 'git');
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (isShim(real)) continue;
      return real;
    } catch {
      // not here
    }
  }
  return 'git';
}

function isShim(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('latin1').includes(SHIM_MARKER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function runGit(gitBin: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string | Buffer }): GitResult {
  const r = spawnSync(gitBin, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    input: opts.input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: GIT_QUERY_TIMEOUT_MS,
  });
  return { code: r.status ?? (r.error ? 127 : 1), stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}

/** Runs git and returns trimmed stdout, or undefined when git failed. */
export function gitOut(gitBin: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string | undefined {
  const r = runGit(gitBin, args, { cwd, env });
  return r.code === 0 ? r.stdout.replace(/\n$/, '') : undefined;
}

/**
 * The environment a guard-internal git query runs in: the rule engine's (no repo-locating
 * variables, no optional locks) and, beyond it, none of the agent's config overrides.
 */
export function cleanGitEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = gitEnv({}, env);
  for (const k of Object.keys(out)) if (/^GIT_(CONFIG|CEILING_DIRECTORIES)/.test(k)) delete out[k];
  return out;
}
