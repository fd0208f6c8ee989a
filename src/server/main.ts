/** Entry point of the detached daemon process: `node dist/daemon/main.js <work-tree>` (bundled from this file). */
import { DAEMON_ALLOCATOR_ENV, DAEMON_ALLOCATOR_MARKER } from '../version.js';
import { ASLEEP_ENV, asleepOf, runDaemon } from './process.js';

// The allocator setting the daemon was started with (client/lifecycle.ts) is for this process
// alone: git and the agent's commands get the environment the user had.
if (process.env[DAEMON_ALLOCATOR_MARKER] === '1') {
  for (const k of [...Object.keys(DAEMON_ALLOCATOR_ENV), DAEMON_ALLOCATOR_MARKER]) delete process.env[k];
}

// A daemon that fell asleep hands over through the environment, for this process alone.
const asleep = asleepOf(process.env);
delete process.env[ASLEEP_ENV];

const cwd = process.argv[2] ?? process.cwd();
runDaemon(cwd, process.env, asleep).catch((err: unknown) => {
  // stderr goes to daemon.log; the starting client reads its tail to explain the failure.
  process.stderr.write(`hermesd daemon failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
