/**
 * The few git invocations the hooks need, run synchronously with an explicit index file.
 * During pre-commit git hands the hook the index being committed (GIT_INDEX_FILE): for
 * `git commit -a` or `git commit <paths>` it is a lock file, not .git/index, so every call
 * that reads or writes "the staged snapshot" must name it.
 */
import { execFileSync, spawnSync } from 'node:child_process';

/** Variables that would point git at another repository or index than the one we name. */
const REPO_LOCATING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_NAMESPACE'];

export type GitOptions = { cwd: string; indexFile?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv };

/** Largest output a git call may produce here (a binary diff of a big fix). */
const GIT_MAX_BUFFER_BYTES = 512 * 1024 * 1024;

function envFor(opts: GitOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...(opts.env ?? process.env) };
  // A hook's environment may carry these from the outer git; we pass what we mean explicitly.
  for (const k of REPO_LOCATING_ENV) delete env[k];
  // Reads never take index.lock from under the commit that runs the hook.
  env.GIT_OPTIONAL_LOCKS = '0';
  if (opts.indexFile) env.GIT_INDEX_FILE = opts.indexFile;
  return env;
}

export function git(args: string[], opts: GitOptions): string {
  return gitBuffer(args, opts).toString('utf8');
}

export function gitBuffer(args: string[], opts: GitOptions): Buffer {
  return execFileSync('git', args, {
    cwd: opts.cwd,
    env: envFor(opts),
    input: opts.input,
    maxBuffer: GIT_MAX_BUFFER_BYTES,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs git and returns status and output instead of throwing. */
export function gitTry(args: string[], opts: GitOptions): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, { cwd: opts.cwd, env: envFor(opts), input: opts.input, maxBuffer: GIT_MAX_BUFFER_BYTES, encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Splits NUL-separated git output (`-z`), dropping the empty tail. */
export function splitZ(out: string): string[] {
  const parts = out.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
