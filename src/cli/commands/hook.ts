/**
 * `hermesd hook <git-hook-name> [args…]`: runs this clone's hook runner for that hook, as git
 * does (the runner asks the daemon through hermesd's client: src/hook-client/), so a hook can be
 * tried by hand and a hook manager can call it. Also: `hermesd hook backups` lists the backups
 * interrupted hooks left, and `hermesd hook restore [id]` puts one back.
 */
import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { ANSWERED_HOOKS } from '../../githooks/names.js';
import { action, daemon, globals, output, repo } from '../runtime.js';

export function register(program: Command): void {
  program
    .command('hook')
    .description(
      `runs this clone's hook runner for a git hook (${ANSWERED_HOOKS.join(', ')}), as git does; in a bare repository, the server hooks pre-receive and update (hermesd init --server); also: hook backups, hook restore [id]`,
    )
    .argument('<name>', 'git hook name, or "backups" / "restore"')
    .argument('[args...]', "the hook's arguments from git")
    .action(
      action(async (name: string, args: string[], _opts: unknown, cmd: Command) => {
        if (name === 'backups') {
          const client = await daemon();
          const r = await client.call<{ backups: Array<{ id: string; createdAt: string; reason: string; dirty: string[]; untracked: string[] }> }>(
            'GET',
            '/v1/hooks/backups',
          );
          output(globals(cmd), r, () =>
            r.backups.length === 0
              ? 'no backups pending: every hook put your work back'
              : r.backups.map((b) => `${b.id}  ${b.createdAt}  ${b.reason}: ${b.dirty.length} changed and ${b.untracked.length} untracked path(s)`).join('\n') +
                '\nrestore one with: hermesd hook restore <id>',
          );
          return;
        }
        if (name === 'restore') {
          const client = await daemon();
          const id = args[0];
          const r = await client.call<{ id: string; restored: string[]; displaced: string[]; displacedDir?: string; safetyId: string }>(
            'POST',
            id ? `/v1/hooks/backups/${encodeURIComponent(id)}/restore` : '/v1/hooks/restore',
            {},
          );
          output(globals(cmd), r, () =>
            [
              `restored backup ${r.id}: ${r.restored.length} path(s) and the index put back`,
              r.displaced.length ? `files in the way were moved to ${r.displacedDir}: ${r.displaced.join(', ')}` : '',
              `the state before this restore is kept as ${r.safetyId} (undo: hermesd hook restore ${r.safetyId})`,
            ]
              .filter(Boolean)
              .join('\n'),
          );
          return;
        }
        // A bare repository's server hooks, judged in this process (server-hook.ts).
        if (name === 'pre-receive' || name === 'update') process.exit(await (await import('./server-hook.js')).runServerHook(name, args));
        if (!(ANSWERED_HOOKS as readonly string[]).includes(name))
          throw new UsageError(
            `Unknown hook "${name}". hermesd handles: ${ANSWERED_HOOKS.join(', ')}, pre-receive and update (and: hook backups, hook restore [id]).`,
          );
        const paths = repo();
        const { readInstallState } = await import('../../githooks/install.js');
        const runner = readInstallState(paths)?.runner;
        if (!runner) throw new UsageError('hermesd hooks are not installed in this clone: run hermesd init first.');
        // The runner's own exit code is the hook's; it prints what the daemon said.
        const r = spawnSync('sh', [runner, name, ...args], { cwd: paths.root, stdio: 'inherit' });
        process.exit(r.status ?? 1);
      }),
    );
}
