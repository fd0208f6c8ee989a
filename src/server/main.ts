/** Entry point of the detached daemon process: `node dist/src/server/main.js <work-tree>`. */
import { runDaemon } from './process.js';

const cwd = process.argv[2] ?? process.cwd();
runDaemon(cwd).catch((err: unknown) => {
  // stderr goes to daemon.log; the starting client reads its tail to explain the failure.
  process.stderr.write(`hermesd daemon failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
