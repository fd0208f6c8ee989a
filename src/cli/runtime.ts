/**
 * What every CLI command shares: global flags, the error-to-exit-code mapping, output in
 * human or --json form, and a client to the daemon of the current work tree (started when
 * needed). Commands are thin: parse arguments, call the API, print.
 */
import type { Command } from 'commander';
import { modelEnvWarnings } from '../protocol/model-env.js';
import { DaemonClient } from '../client/daemon-client.js';
import { ensureDaemon } from '../client/lifecycle.js';
import { resolvePaths, type RepoPaths } from '../paths/index.js';
import { pendingBackups, pendingNotice } from '../githooks/backup.js';
import { reportError } from './report.js';

export { reportError };

export type GlobalOptions = { json?: boolean; debug?: boolean };

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

const useColor = () => !process.env.NO_COLOR && process.stdout.isTTY === true;
const paint = (code: number) => (s: string) => (useColor() ? `\u001b[${code}m${s}\u001b[0m` : s);
export const color = { red: paint(31), green: paint(32), yellow: paint(33), dim: paint(2), bold: paint(1) };

/** Prints `data` as JSON with --json, else the human rendering. */
export function output(opts: GlobalOptions, data: unknown, human: () => string): void {
  if (opts.json) process.stdout.write(JSON.stringify(data, null, 2) + '\n');
  else {
    const text = human();
    if (text) process.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }
}

/** Paths of the work tree around the current directory (NotARepository outside one). */
export function repo(): RepoPaths {
  return resolvePaths(process.cwd());
}

/**
 * A client of this work tree's daemon, starting the daemon if it is not running.
 * `modelWarnings`: say which model settings this shell has and the daemon does not (commands
 * whose work reaches the model: a daemon started by a hook has the hook's environment).
 */
export async function daemon(opts: { modelWarnings?: boolean } = {}): Promise<DaemonClient> {
  const paths = repo();
  noticePendingBackups(paths);
  const { status } = await ensureDaemon(paths);
  if (opts.modelWarnings) {
    for (const w of modelEnvWarnings(status.modelEnv)) process.stderr.write(color.yellow(`hermesd: warning: ${w}`) + '\n');
  }
  // The socket the daemon answered on: recorded in the repository, whatever this environment computes.
  return new DaemonClient(String(status.socket));
}

/** Tells the user, once per command, that an interrupted hook left a backup of their work (hooks). */
function noticePendingBackups(paths: RepoPaths): void {
  if (process.argv.includes('hook')) return;
  try {
    const notice = pendingNotice(pendingBackups(paths.gitDir));
    if (notice) process.stderr.write(color.yellow(notice) + '\n');
  } catch {
    // a notice is never worth failing the command
  }
}

/** Sets the process exit code for a failed check without throwing (exit 1). */
export function failWith(code: number): void {
  process.exitCode = code;
}

/**
 * Wraps a command action: a HermesError prints its message and sets its exit code; anything
 * else is an internal error (exit 1). Stack traces only with --debug.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    const debug = Boolean((cmd?.optsWithGlobals?.() as GlobalOptions | undefined)?.debug) || process.argv.includes('--debug');
    try {
      await fn(...args);
    } catch (err) {
      reportError(err, debug);
    }
  };
}

/** The whole of stdin as text (a server hook's ref updates); empty on a terminal, what arrived when the pipe fails. */
export function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((res) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (d: Buffer) => chunks.push(d));
    process.stdin.on('end', () => res(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', () => res(Buffer.concat(chunks).toString('utf8')));
  });
}

/** One line of `hermesd doctor`: doctor's own checks and those other commands' modules own (skills, sandbox). */
export type DoctorCheck = { name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string };
