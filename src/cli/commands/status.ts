/**
 * `hermesd status`: the daemon's status in plain words (or as JSON), what can be told without a
 * daemon when none runs (exit 3). Registered by lifecycle.ts; answered without commander by
 * ../quick.ts, for the CLI's first file, since it only asks the daemon.
 */
import { modelEnvWarnings } from '../../protocol/model-env.js';
import { probe, socketMismatch, type Status } from '../../client/lifecycle.js';
import type { RepoPaths } from '../../paths/index.js';
import { DaemonUnavailable } from '../../errors/index.js';
import { pendingBackups } from '../../githooks/backup.js';
import { color, output, repo, type GlobalOptions } from '../runtime.js';

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
    await new Promise((r) => setTimeout(r, SERVICES_POLL_MS));
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

/** `hermesd status`, as the options ask: exit 3 (DaemonUnavailable) when no daemon runs. */
export async function showStatus(opts: GlobalOptions): Promise<void> {
  const paths = repo();
  const first = await probe(paths);
  if (!first) {
    if (!opts.json) process.stderr.write((await offlineNotes(paths)) + '\n');
    throw new DaemonUnavailable(`No daemon is running for ${paths.root}. Start one with: hermesd start`);
  }
  const s = await settledStatus(paths, first);
  output(opts, s, () => humanStatus(s, paths));
}
