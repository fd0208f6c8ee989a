/**
 * The commands the CLI's first file (./launch.ts) answers itself, without commander and the
 * command modules: `status` (with `--json`, `--debug`), which only asks the daemon and prints, and
 * `--version`. Each gives what the full command line (./main.ts) gives for the same words.
 */
import { VERSION } from '../version.js';
import { showStatus } from './commands/status.js';
import { reportError } from './runtime.js';

/** Global options `status` takes here; anything else goes to the full command line. */
const QUICK_OPTIONS: ReadonlySet<string> = new Set(['--json', '--debug']);

type Quick = 'status' | 'version';

/** What `args` (the words after `hermesd`) asks that the first file answers itself, if anything. */
export function quickCommand(args: readonly string[]): Quick | undefined {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) return 'version';
  const words = args.filter((a) => !QUICK_OPTIONS.has(a));
  return words.length === 1 && words[0] === 'status' ? 'status' : undefined;
}

/** Answers `quick`, asked with `args`, as the full command line would (exit code included). */
export async function answerQuick(quick: Quick, args: readonly string[]): Promise<void> {
  if (quick === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const debug = args.includes('--debug');
  try {
    await showStatus({ json: args.includes('--json'), debug });
  } catch (err) {
    reportError(err, debug);
  }
}
