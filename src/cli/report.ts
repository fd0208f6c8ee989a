/**
 * How the command line reports an error: a HermesError prints its message and sets its exit
 * code; anything else is an internal error (exit 1). Stack traces only with --debug. A module
 * of its own so that the CLI's first file (launch.ts) reports the same way without loading
 * the rest of the command line.
 */
import { HermesError } from '../errors/index.js';

export function reportError(err: unknown, debug: boolean): void {
  if (err instanceof HermesError) {
    process.stderr.write(`hermesd: ${err.message}\n`);
    if (debug && err.stack) process.stderr.write(err.stack + '\n');
    process.exitCode = err.exitCode;
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`hermesd: internal error: ${message}${debug ? '' : ' (run with --debug for details)'}\n`);
  if (debug && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
  process.exitCode = 1;
}
