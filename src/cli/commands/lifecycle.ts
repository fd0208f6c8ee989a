import { existsSync, openSync, readSync, statSync, closeSync, watch } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { modelEnvWarnings } from '../../protocol/model-env.js';
import { DaemonClient } from '../../client/daemon-client.js';
import { ensureDaemon, probe, socketMismatch, stopDaemon, type Status } from '../../client/lifecycle.js';
import type { RepoPaths } from '../../paths/index.js';
import { DaemonUnavailable } from '../../errors/index.js';
import { pendingBackups } from '../../githooks/backup.js';
import { action, color, globals, output, repo } from '../runtime.js';

/** Everything status knows, in plain words: nothing only --json shows. */
function humanStatus(s: Status, paths: RepoPaths): string {
  const lines = [
    `${color.green('running')}  pid ${s.pid}, version ${s.version}`,
    `root     ${s.root}`,
    `socket   ${s.socket}`,
    `started  ${s.startedAt}` + (typeof s.uptimeMs === 'number' ? ` (up ${Math.round(s.uptimeMs / 1000)} s)` : ''),
  ];
  if (typeof s.rssBytes === 'number') lines.push(`memory   ${(s.rssBytes / 1048576).toFixed(1)} MiB RSS`);
  // Fields the services add: absent while they load (status waited SERVICES_WAIT_MS), or when they could not.
  const notYet =
    s.services === 'loading'
      ? 'checking… (the daemon is still loading its services; run hermesd status again)'
      : 'unknown: the daemon did not report them (see the warnings)';
  const hooks = s.hooks ?? {};
  if (!s.hooks) lines.push(`hooks    ${notYet}`);
  else if (hooks.installed === false) lines.push(`hooks    not installed (hermesd init installs them)`);
  else if (hooks.active)
    lines.push(
      `hooks    ${color.green('active')} (${hooks.manager === 'git' ? '.git/hooks' : hooks.manager}${hooks.via && hooks.manager !== 'git' && hooks.manager !== 'husky' ? `, through ${hooks.via}` : ''})`,
    );
  else if (hooks.installed) lines.push(color.yellow(`hooks    NOT active: ${(hooks.problems ?? []).join('; ')}`));
  const config = s.config;
  if (config) lines.push(config.ok ? 'config   ok' : color.red(`config   ERROR: ${config.error}`));
  const agents = s.agents;
  if (agents) {
    lines.push(
      `agents   ${agents.transcripts} transcript(s) read, ${agents.stored} message(s) stored` +
        (agents.skipped ? color.yellow(`, ${agents.skipped} malformed line(s) skipped`) : ''),
    );
  }
  if (s.proposals) {
    const n = s.proposals.pending;
    const r = s.review;
    const reviews = r
      ? `; reviews: ${r.done} done${r.queued + r.running ? `, ${r.queued + r.running} waiting` : ''}${r.skipped ? `, ${r.skipped} skipped` : ''}${r.failed ? color.yellow(`, ${r.failed} failed (hermesd logs)`) : ''}`
      : '';
    lines.push(`${n ? color.yellow(`proposals ${n} pending: hermesd proposals list`) : 'proposals none pending'}${reviews}`);
  } else lines.push(`proposals ${notYet}`);
  const pending = hooks.pendingBackups ?? [];
  lines.push(
    pending.length
      ? color.yellow(
          `backups  ${pending.length} left by an interrupted hook (${pending.join(', ')}); restore: hermesd hook restore${pending.length > 1 ? ' <id>' : ''}`,
        )
      : 'backups  none pending',
  );
  const warnings = [
    ...(Array.isArray(s.warnings) ? s.warnings : []).filter((w) => !w.startsWith('hooks: ')),
    ...[socketMismatch(paths, s)].filter((w): w is string => w !== undefined),
    ...modelEnvWarnings(s.modelEnv),
  ];
  for (const w of warnings) lines.push(color.yellow(`warning  ${w}`));
  return lines.join('\n');
}

/**
 * How long `status` waits for a daemon still loading the services that report hooks and
 * proposals (a daemon started a moment ago): past it, those lines say "checking…".
 */
const SERVICES_WAIT_MS = 5_000;
/** How often `status` asks again meanwhile. */
const SERVICES_POLL_MS = 50;

/** The daemon's status once its services have loaded, or as it is after SERVICES_WAIT_MS. */
async function settledStatus(paths: RepoPaths, first: Status): Promise<Status> {
  let s = first;
  const deadline = Date.now() + SERVICES_WAIT_MS;
  while (s.services === 'loading' && Date.now() < deadline) {
    await sleep(SERVICES_POLL_MS);
    s = (await probe(paths)) ?? s;
  }
  return s;
}

/** What can be told without a daemon: whether git runs the hooks, backups waiting for a restore. */
async function offlineNotes(paths: RepoPaths): Promise<string> {
  const { hookHealth, describeHealth } = await import('../../githooks/health.js');
  const notes = [`hooks    ${describeHealth(hookHealth(paths))}`];
  const pending = pendingBackups(paths.gitDir);
  if (pending.length)
    notes.push(`backups  ${pending.length} left by an interrupted hook (${pending.map((p) => p.id).join(', ')}); restore: hermesd hook restore`);
  return notes.join('\n');
}

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
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const paths = repo();
        const first = await probe(paths);
        if (!first) {
          if (!globals(cmd).json) process.stderr.write((await offlineNotes(paths)) + '\n');
          throw new DaemonUnavailable(`No daemon is running for ${paths.root}. Start one with: hermesd start`);
        }
        const s = await settledStatus(paths, first);
        output(globals(cmd), s, () => humanStatus(s, paths));
      }),
    );

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
