/**
 * The few git invocations the rule engine makes, as plain async child processes. Output of
 * a patch is streamed line by line so a huge staged file never sits in memory whole.
 */
import { spawn } from 'node:child_process';

/**
 * Variables that would point git at another repository or index. A daemon started from
 * inside a hook inherits them; the engine names the index explicitly instead (`indexFile`).
 */
const REPO_LOCATING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_NAMESPACE'];

export type GitOptions = {
  /** Use this index instead of `.git/index` (a hook's GIT_INDEX_FILE, e.g. during `git commit -a`). */
  indexFile?: string;
  signal?: AbortSignal;
};

/** `base` (default: this process's environment) without the repo-locating variables; reads take no optional locks. */
export function gitEnv(opts: GitOptions = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of REPO_LOCATING_ENV) delete env[k];
  env.GIT_OPTIONAL_LOCKS = '0'; // reading must never take index.lock from under a running commit
  if (opts.indexFile) env.GIT_INDEX_FILE = opts.indexFile;
  return env;
}

/** Flags that make diff output independent of the user's git config (prefixes, quoting, drivers, colour). */
export const PLAIN_DIFF = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-relative', '--src-prefix=a/', '--dst-prefix=b/', '-M'];
export const GIT_CONFIG_OVERRIDES = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'core.fsmonitor=false'];

export class GitFailed extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''}`);
  }
}

/** Runs git and resolves with stdout as a Buffer. */
export function git(root: string, args: string[], opts: GitOptions = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return gitStream(root, args, (c) => chunks.push(c), opts).then(() => Buffer.concat(chunks));
}

/** Runs git, handing stdout chunks to `onData` as they arrive. */
export function gitStream(root: string, args: string[], onData: (chunk: Buffer) => void, opts: GitOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const full = [...GIT_CONFIG_OVERRIDES, ...args];
    const child = spawn('git', full, { cwd: root, env: gitEnv(opts), stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal });
    let stderr = '';
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new GitFailed(args, code, stderr));
    });
  });
}

/**
 * Splits a byte stream into lines (without the newline), across chunk boundaries. A line
 * longer than `maxLineBytes` is handed over cut to that length with `cut = true`, so one
 * minified megabyte line cannot grow the buffer without bound.
 */
export function lineSplitter(onLine: (line: Buffer, cut: boolean) => void, maxLineBytes = 2 * 1024 * 1024): { push(chunk: Buffer): void; end(): void } {
  let rest: Buffer | undefined;
  let skipping = false; // inside an over-long line whose head was already delivered
  return {
    push(chunk) {
      const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
      rest = undefined;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
        if (!skipping) onLine(buf.subarray(start, nl), false);
        skipping = false;
        start = nl + 1;
      }
      if (start >= buf.length || skipping) return;
      if (buf.length - start > maxLineBytes) {
        onLine(buf.subarray(start, start + maxLineBytes), true);
        skipping = true;
        return;
      }
      rest = Buffer.from(buf.subarray(start));
    },
    end() {
      if (rest && rest.length && !skipping) onLine(rest, false);
      rest = undefined;
    },
  };
}
