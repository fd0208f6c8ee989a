/**
 * The answers of the CLI's first file (./launch.ts; which words it answers: ./quick-command.ts),
 * bundled apart from it (dist/cli/quick.cjs) and loaded only for them: `status`, which only asks
 * the daemon and prints, and `--version`. Each gives what the full command line (./main.ts)
 * gives for the same words.
 */
import { VERSION } from '../version.js';
import { showStatus } from './commands/status.js';
import type { Quick } from './quick-command.js';
import { reportError } from './report.js';

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
