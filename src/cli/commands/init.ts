/**
 * `hermesd init [--uninstall]`: writes .hermes/config.yaml from the template when absent
 * and installs the git hooks (husky layout, previous hooks chained). Local: it needs no
 * daemon, and works in any git repository, with or without package.json.
 */
import type { Command } from 'commander';
import { findRepo, hermesHome } from '../../daemon/paths.js';
import { CLI_ENTRY } from '../../version.js';
import { action, globals, output } from '../runtime.js';

export function register(program: Command): void {
  program
    .command('init')
    .description('write .hermes/config.yaml (if absent) and install the git hooks, keeping the hooks the repository already had; --uninstall puts back what was there')
    .option('--uninstall', 'remove the hooks hermesd installed and restore the previous core.hooksPath')
    .action(
      action(async (opts: { uninstall?: boolean }, cmd: Command) => {
        const repo = findRepo(process.cwd());
        // The installer (husky) and the config schema load only for this command.
        const { installHooks, uninstallHooks } = await import('../../hooks/install.js');
        const { loadConfig } = await import('../../config/load.js');
        if (opts.uninstall) {
          const r = uninstallHooks(repo);
          output(globals(cmd), r, () =>
            r.wasInstalled || r.removedBlocks.length
              ? [`hermesd hooks removed from ${r.root}`, `core.hooksPath: ${r.hooksPath ?? '(unset: git runs .git/hooks again)'}`, r.removedFiles.length ? `removed: ${r.removedFiles.join(', ')}` : ''].filter(Boolean).join('\n')
              : 'hermesd hooks were not installed here; nothing to do',
          );
          return;
        }
        let timeoutMs: number | undefined;
        let longPreCommit: boolean | undefined;
        try {
          const config = loadConfig({ root: repo.root, home: hermesHome() });
          timeoutMs = config.hooks.timeoutMs;
          const pre = config.hooks['pre-commit'];
          longPreCommit = pre.checks.length > 0 || (pre.rules && config.rules.some((x) => x.generator !== undefined));
        } catch {
          // a broken config is reported by every hook run; init still installs
        }
        const r = installHooks(repo, { nodePath: process.execPath, cliPath: CLI_ENTRY, timeoutMs, longPreCommit });
        output(globals(cmd), r, () =>
          [
            `${r.reinstalled ? 'hermesd hooks refreshed' : 'hermesd hooks installed'} in ${r.root} (core.hooksPath = ${r.hooksPath})`,
            `hooks: ${r.hooks.join(', ')}`,
            r.chained.length ? `your existing hooks keep running after hermesd's: ${r.chained.join(', ')}` : '',
            r.config.written ? `wrote ${r.config.path}: add your rules and checks there` : `kept ${r.config.path}`,
            `skip once: HERMESD_SKIP=1 git commit …  remove: hermesd init --uninstall`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );
}
