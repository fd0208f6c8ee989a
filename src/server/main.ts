/** Entry point of the detached daemon process: `node dist/daemon/main.js <work-tree>` (bundled from this file). */
import { closeSync, readdirSync, readlinkSync } from 'node:fs';
import { HOOK_INVOCATION_ENV, REPO_LOCATING_ENV } from '../git/env.js';
import { DAEMON_ALLOCATOR_ENV, DAEMON_ALLOCATOR_MARKER } from '../version.js';
import { keepYoungGenerationSmall, READY_FD_ENV, runDaemon } from './run-daemon.js';

/**
 * Closes what the process that started the daemon left open in it (Linux): a hook's pipes
 * held by a daemon keep git, or an agent, waiting for their end. Run first thing, when the
 * only descriptors besides stdio are inherited ones and Node's own, which are all kernel
 * objects without a path (epoll, eventfd) or pipes it holds both ends of: anything else — a
 * file, a socket, a terminal, one end of a pipe — came from the starter. The starter's ready
 * pipe is kept. Elsewhere the starters pass nothing but stdio (client.c closes the rest
 * before exec; spawnDaemon passes stdio and the ready pipe).
 */
function closeInherited(keep: number): void {
  let fds: number[];
  try {
    fds = readdirSync('/proc/self/fd').map(Number);
  } catch {
    return;
  }
  const target = new Map<number, string>();
  for (const fd of fds) {
    try {
      target.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // the directory's own descriptor, closed by now
    }
  }
  const count = new Map<string, number>();
  for (const t of target.values()) count.set(t, (count.get(t) ?? 0) + 1);
  for (const [fd, t] of target) {
    if (fd <= 2 || fd === keep || t.startsWith('anon_inode:')) continue;
    if (t.startsWith('pipe:') && count.get(t)! > 1) continue;
    try {
      closeSync(fd);
    } catch {
      // gone
    }
  }
}
closeInherited(Number(process.env[READY_FD_ENV]));

// The allocator setting the daemon was started with (src/hook-client/runners.ts) is for this
// process alone: git and the agent's commands get the environment the user had.
if (process.env[DAEMON_ALLOCATOR_MARKER] === '1') {
  for (const k of [...Object.keys(DAEMON_ALLOCATOR_ENV), DAEMON_ALLOCATOR_MARKER]) delete process.env[k];
}
// Started from a hook, the daemon inherits git's variables for that one command (GIT_INDEX_FILE
// of `commit -a`, GIT_DIR…): its later git calls must not see them.
for (const k of [...REPO_LOCATING_ENV, ...HOOK_INVOCATION_ENV]) delete process.env[k];

keepYoungGenerationSmall();

const cwd = process.argv[2] ?? process.cwd();
runDaemon(cwd, process.env).catch((err: unknown) => {
  // stderr goes to daemon.log; the starting client reads its tail to explain the failure.
  process.stderr.write(`hermesd daemon failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
