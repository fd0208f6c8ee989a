import { existsSync, openSync, readSync, statSync, closeSync, watch } from 'node:fs';
import type { Command } from 'commander';
import { DaemonClient } from '../../client/daemon-client.js';
import { ensureDaemon, socketMismatch, stopDaemon } from '../../client/lifecycle.js';
import { action, color, globals, output, repo } from '../runtime.js';
import { showStatus } from './status.js';

export function register(program: Command): void {
  program
    .command('start')
    .description('start the daemon of this work tree (no-op when it is running)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const paths = repo();
        const { status, started } = await ensureDaemon(paths);
        const mismatch = socketMismatch(paths, status);
        output(
          globals(cmd),
          { ...status, started },
          () =>
            `${started ? 'started' : 'already running'}: pid ${status.pid}, socket ${status.socket}${mismatch ? `\n${color.yellow(`warning  ${mismatch}`)}` : ''}`,
        );
      }),
    );

  program
    .command('stop')
    .description('stop the daemon of this work tree')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const r = await stopDaemon(repo());
        output(globals(cmd), r, () => (r.stopped ? `stopped (pid ${r.pid})` : 'not running'));
      }),
    );

  program
    .command('restart')
    .description('stop, then start the daemon of this work tree')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const paths = repo();
        await stopDaemon(paths);
        const { status } = await ensureDaemon(paths);
        output(globals(cmd), status, () => `restarted: pid ${status.pid}`);
      }),
    );

  program
    .command('status')
    .description('show whether the daemon runs, its pid, socket, uptime and warnings (exit 3 when not running)')
    .action(action((_opts: unknown, cmd: Command) => showStatus(globals(cmd))));

  program
    .command('logs')
    .description("print the daemon's log")
    .option('-f, --follow', 'keep printing new lines')
    .option('-n, --lines <n>', 'print only the last n lines', (v) => Number.parseInt(v, 10))
    .action(
      action(async (opts: { follow?: boolean; lines?: number }) => {
        const paths = repo();
        if (!existsSync(paths.logFile)) {
          if (!opts.follow) {
            process.stderr.write(`hermesd: no log yet at ${paths.logFile}\n`);
            return;
          }
        }
        let pos = 0;
        const emit = () => {
          if (!existsSync(paths.logFile)) return;
          const size = statSync(paths.logFile).size;
          if (size < pos) pos = 0;
          if (size === pos) return;
          const fd = openSync(paths.logFile, 'r');
          const buf = Buffer.alloc(size - pos);
          readSync(fd, buf, 0, buf.length, pos);
          closeSync(fd);
          pos = size;
          process.stdout.write(buf);
        };
        if (opts.lines !== undefined && existsSync(paths.logFile)) {
          const size = statSync(paths.logFile).size;
          const fd = openSync(paths.logFile, 'r');
          const buf = Buffer.alloc(size);
          readSync(fd, buf, 0, size, 0);
          closeSync(fd);
          const lines = buf.toString('utf8').split('\n');
          if (lines[lines.length - 1] === '') lines.pop();
          process.stdout.write(lines.slice(-opts.lines).join('\n') + (lines.length ? '\n' : ''));
          pos = size;
        } else emit();
        if (!opts.follow) return;
        await new Promise<void>(() => {
          const timer = setInterval(emit, 250);
          try {
            watch(paths.runtimeDir, () => emit());
          } catch {
            // polling covers it
          }
          process.on('SIGINT', () => {
            clearInterval(timer);
            process.exit(0);
          });
        });
      }),
    );
}

export { DaemonClient };
