/** Entry point of the detached daemon process: `node dist/daemon/main.js <work-tree>` (bundled from this file). */
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { HOOK_INVOCATION_ENV, REPO_LOCATING_ENV } from '../git/env.js';
import { DAEMON_ALLOCATOR_ENV, DAEMON_ALLOCATOR_MARKER } from '../version.js';
import { READY_FD_ENV, runDaemon } from './process.js';

/** O_CLOEXEC as /proc/<pid>/fdinfo shows it (octal flags). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes what the process that started the daemon left open in it (Linux): a hook's pipes
 * held by a daemon keep git, or an agent, waiting for their end. Node's own descriptors are
 * all close-on-exec, so a descriptor without that flag came through exec: inherited. The
 * starter's ready pipe is kept. Elsewhere the starters pass nothing but stdio (client.c
 * closes the rest before exec).
 */
function closeInherited(keep: number): void {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return;
  }
  for (const name of fds) {
    const fd = Number(name);
    if (!(fd > 2) || fd === keep) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // the directory's own descriptor, gone by now
    }
  }
}
closeInherited(Number(process.env[READY_FD_ENV]));

// The allocator setting the daemon was started with (src/transport/runners.ts) is for this
// process alone: git and the agent's commands get the environment the user had.
if (process.env[DAEMON_ALLOCATOR_MARKER] === '1') {
  for (const k of [...Object.keys(DAEMON_ALLOCATOR_ENV), DAEMON_ALLOCATOR_MARKER]) delete process.env[k];
}
// Started from a hook, the daemon inherits git's variables for that one command (GIT_INDEX_FILE
// of `commit -a`, GIT_DIR…): its later git calls must not see them.
for (const k of [...REPO_LOCATING_ENV, ...HOOK_INVOCATION_ENV]) delete process.env[k];

const cwd = process.argv[2] ?? process.cwd();
runDaemon(cwd, process.env).catch((err: unknown) => {
  // stderr goes to daemon.log; the starting client reads its tail to explain the failure.
  process.stderr.write(`hermesd daemon failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
