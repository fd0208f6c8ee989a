/**
 * `hermesd init [--manager …] [--uninstall]`: writes .hermes/config.yaml from the template when
 * absent and installs the git hooks the way the repository's hook manager expects (husky, the
 * pre-commit framework, lefthook, or plain .git/hooks), keeping the hooks it already had
 * running; it says which files to commit so teammates get the hooks. Local: it needs no
 * daemon, and works in any git repository, with or without package.json. `--server`, in a bare
 * repository: the pre-receive hook that judges every push (src/githooks/pre-receive.ts).
 */
import type { Command } from 'commander';
import { relative } from 'node:path';
import { findGitRepository, findRepo, hermesHome, repoPaths } from '../../paths/index.js';
import { UsageError } from '../../errors/index.js';
import { CLI_ENTRY } from '../../version.js';
import { action, color, globals, output } from '../runtime.js';

const MANAGERS = ['husky', 'pre-commit', 'lefthook', 'git'] as const;

type AgentsReport = import('../../other-agents/install.js').AgentsInstallReport;
type RunnerSettings = import('../../hook-client/runners.js').RunnerSettings;

/**
 * The runners' bounds and onUnavailable settings from the config in force: a loosening waits
 * for `hermesd config approve`, as in the daemon. A broken config: the last approved guard
 * settings (the daemon judges with the last valid config too), else the defaults.
 */
async function runnerSettings(repo: { root: string }): Promise<
  RunnerSettings & {
    denyWrite: { paths: string[]; skipped: string[] };
    codexProfile: (alsoThere: readonly string[]) => import('../../guard/agent-shell.js').CodexProfile;
  }
> {
  const { configInForce } = await import('../../guard/approval.js');
  const config = configInForce(hermesHome(), repo.root);
  const { agentSandboxDenyWrite, codexProfile } = await import('../../guard/agent-shell.js');
  return {
    hooks: { timeoutMs: config.hooks.timeoutMs, onUnavailable: config.hooks.onUnavailable },
    agents: { ...config.agents },
    denyWrite: agentSandboxDenyWrite(config),
    codexProfile: (alsoThere) => codexProfile(config, repo.root, alsoThere),
  };
}

async function installAgentHooks(
  repo: { root: string; gitDir: string; commonDir: string },
  list: string | true,
  settings: Awaited<ReturnType<typeof runnerSettings>>,
): Promise<AgentsReport> {
  const { installAgents, parseAgentList } = await import('../../other-agents/install.js');
  const { loadAuthority } = await import('../../context/authority.js');
  const agents = parseAgentList(list, repo.root);
  // The authority for sessions at the root: the agents whose setting can name it get that setting (docs/agents.md).
  const authority = await loadAuthority({ cwd: repo.root, root: repo.root });
  const report = installAgents(repo, {
    agents,
    nodePath: process.execPath,
    cliPath: CLI_ENTRY,
    ...settings.agents,
    denyWrite: settings.denyWrite.paths,
    codexProfile: settings.codexProfile,
    authority: { source: authority.source, files: authority.files.map((f) => relative(repo.root, f.path)) },
  });
  if (report.agents.includes('claude') && settings.denyWrite.paths.length) {
    report.notes.push(
      `Claude Code: the protected paths ${settings.denyWrite.paths.join(', ')} are in sandbox.filesystem.denyWrite of .claude/settings.json; they hold at the OS level once its sandbox is on (/sandbox, or "sandbox": {"enabled": true})`,
    );
  }
  if (report.agents.includes('codex') && report.codexProfile) {
    report.notes.push(
      `Codex: its sandbox runs hermesd's permission profile ${report.codexProfile} (default_permissions in .codex/config.toml): :workspace with the protected paths${settings.denyWrite.paths.length ? ` (${settings.denyWrite.paths.join(', ')})` : ''} and hermesd's files read-only`,
    );
  }
  const sandboxes = [
    report.agents.includes('claude') ? "Claude Code's sandbox (sandbox.filesystem.denyWrite)" : '',
    report.codexProfile ? "Codex's permission profile" : '',
  ].filter(Boolean);
  if (sandboxes.length && settings.denyWrite.skipped.length) {
    report.notes.push(
      `${sandboxes.join(' and ')} take${sandboxes.length > 1 ? '' : 's'} paths, not these protect patterns: ${settings.denyWrite.skipped.join(', ')}; hermesd's own checks hold them`,
    );
  }
  return report;
}

function agentLines(r: AgentsReport): string[] {
  if (r.agents.length === 0)
    return [
      color.yellow('agents: no agent folder here (.claude, .codex, .cursor, .gemini); name them: hermesd init --agents claude,codex,cursor,gemini (or all)'),
    ];
  return [
    `agents: ${r.agents.join(', ')}: hooks (rules before tool calls, context at session start and prompt, transcripts into hermesd sessions) and the hermesd MCP server`,
    r.changed.length ? `  wrote: ${r.changed.join(', ')}` : '  their configs already had hermesd',
    `  commit these so teammates' agents run the hooks (a clone without hermesd init runs nothing): ${r.commit.join(', ')}`,
    ...r.notes.map((n) => color.yellow(`  note: ${n}`)),
  ];
}

/** What to commit so teammates get the hooks, true to the layout: hook files in the work tree, or hooks in this clone only. */
function commitLine(r: { commit: string[]; hookFiles: string[] }): string {
  if (r.hookFiles.length === 0)
    return r.commit.length
      ? `commit ${r.commit.join(', ')} so teammates get its rules; the hooks live in this clone only (each clone runs hermesd init once)`
      : 'nothing to commit: the hooks live in this clone only (each clone runs hermesd init once)';
  if (r.commit.length) return `commit these so teammates get the hooks (each clone then runs hermesd init once): ${r.commit.join(', ')}`;
  return `nothing to commit: ${r.hookFiles.join(', ')} ${r.hookFiles.length > 1 ? 'are' : 'is'} committed with hermesd's part, so teammates get the hooks (each clone runs hermesd init once)`;
}

/** `init --server [--uninstall]`: the server-side hook of a bare repository. */
async function initServer(opts: { uninstall?: boolean }, cmd: Command): Promise<void> {
  const repo = findGitRepository(process.cwd());
  const { installServerHook, uninstallServerHook } = await import('../../githooks/pre-receive.js');
  if (opts.uninstall) {
    const r = uninstallServerHook(repo);
    output(globals(cmd), r, () =>
      r.wasInstalled
        ? [
            `hermesd server hook removed from ${r.gitDir}`,
            r.restored.length ? `put back as it was: ${r.restored.join(', ')}` : '',
            r.kept.length ? `left as they are (changed since init --server): ${r.kept.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('\n')
        : 'the hermesd server hook was not installed here; nothing to do',
    );
    return;
  }
  const r = installServerHook(repo, { nodePath: process.execPath, cliPath: CLI_ENTRY });
  output(globals(cmd), r, () =>
    [
      `${r.reinstalled ? 'hermesd server hook refreshed' : 'hermesd server hook installed'} in ${r.gitDir}: ${r.hook}`,
      r.chained ? `the repository's own pre-receive keeps running after hermesd's judgement (moved to ${r.chained})` : '',
      r.pinned.written ? `pinned rules written to ${r.pinned.path} (from ${r.pinned.from})` : `pinned rules kept as they are: ${r.pinned.path}`,
      'every push is judged by the rules of .hermes/config.yaml as committed where each ref was (a new branch: where HEAD is; ' +
        "init's defaults where there is no such file) and by the pinned rules, which the repository's file can add to but not loosen; " +
        'a push whose new objects (commits, tags, trees, blobs) break them is refused, and the pusher sees why',
      `edit the pinned rules in ${r.pinned.path} (read at every push; init --server keeps your edits)`,
      r.pinned.secretsRule
        ? ''
        : color.yellow(
            'note: the pinned rules have no secrets rule, so pushes are checked for credentials only where the committed rules ask. ' +
              `To turn it on, add to its rules:\n${SECRETS_RULE_YAML}`,
          ),
      'remove: hermesd init --server --uninstall',
    ]
      .filter(Boolean)
      .join('\n'),
  );
}

/** The rule `init` writes into a new config, for an existing one that lacks it (docs/configuration.md). */
const SECRETS_RULE_YAML = [
  '  - id: no-secrets',
  '    message: Never commit credentials; use environment variables or a secret manager.',
  '    secrets: true',
].join('\n');

export function register(program: Command): void {
  program
    .command('init')
    .description(
      'write .hermes/config.yaml (if absent) and install the git hooks the way this repository manages hooks (husky, pre-commit framework, lefthook, or .git/hooks), keeping the hooks it already had; --uninstall gives back what init changed',
    )
    .option('--manager <name>', `install through this hook manager instead of the one found (${MANAGERS.join(', ')})`)
    .option(
      '--agents [list]',
      "also write hermesd's hooks and MCP server into these agents' project configs: claude,codex,cursor,gemini or all (default: the agents whose folder exists here; docs/agents.md)",
    )
    .option('--uninstall', 'remove what hermesd init added and restore what it changed')
    .option('--server', "in a bare repository: install the pre-receive hook that refuses a push whose new commits break the repository's rules (docs/ci.md)")
    .action(
      action(async (opts: { uninstall?: boolean; manager?: string; agents?: string | true; server?: boolean }, cmd: Command) => {
        if (opts.server) {
          if (opts.manager !== undefined || opts.agents !== undefined)
            throw new UsageError('--server installs the server-side hook alone; --manager and --agents are for a clone (hermesd init).');
          await initServer(opts, cmd);
          return;
        }
        const repo = findRepo(process.cwd());
        if (opts.manager !== undefined && !(MANAGERS as readonly string[]).includes(opts.manager)) {
          throw new UsageError(`--manager must be one of ${MANAGERS.join(', ')} (got "${opts.manager}").`);
        }
        // The installer (husky, yaml) and the config schema load only for this command.
        const { installHooks, uninstallHooks } = await import('../../githooks/install.js');
        if (opts.uninstall) {
          // This work tree's daemon first: it writes its log and the runners' settings into the runtime folder that goes last.
          const { stopDaemon } = await import('../../client/lifecycle.js');
          // A daemon that cannot be reached or stopped (a socket folder that cannot be used) leaves its folder alone; the rest is given back all the same.
          const daemon: { stopped: boolean; pid?: number; error?: string } = await stopDaemon(repoPaths(repo)).catch((err: unknown) => ({
            stopped: false,
            error: err instanceof Error ? err.message : String(err),
          }));
          const { uninstallAgents } = await import('../../other-agents/install.js');
          const agents = uninstallAgents(repo);
          const hooks = uninstallHooks(repo);
          const { removeRuntimeFolder, runtimeFolderKept } = await import('../../githooks/runtime-folder.js');
          const runtime = daemon.error ? runtimeFolderKept(repo) : removeRuntimeFolder(repo);
          const r = { ...hooks, agents, daemon, runtime };
          const rel = relative(r.root, runtime.dir);
          const after = [
            daemon.stopped ? `stopped this work tree's daemon${daemon.pid ? ` (pid ${daemon.pid})` : ''}` : '',
            daemon.error && runtime.existed
              ? color.yellow(
                  `note: ${rel} stays: this work tree's daemon could not be stopped (${daemon.error}); run hermesd stop, then hermesd init --uninstall again`,
                )
              : '',
            runtime.existed && runtime.removed ? `removed ${rel} (hermesd's runtime folder: the daemon's log, the hooks' settings)` : '',
            runtime.keptWork.length ? `kept in ${rel}: ${runtime.keptWork.join(', ')} (work a hook saved for you: hermesd hook restore)` : '',
            runtime.keptShared.length ? `kept in ${rel}: ${runtime.keptShared.join(', ')} (other worktrees of this clone still use them)` : '',
            runtime.keptRecords.length
              ? `kept in ${rel}: ${runtime.keptRecords.join(', ')} (the record of what is left above, for the next hermesd init --uninstall)`
              : '',
          ];
          output(globals(cmd), r, () =>
            (r.wasInstalled || r.removedBlocks.length
              ? [
                  `hermesd hooks removed from ${r.root}${r.manager ? ` (${r.manager})` : ''}`,
                  `core.hooksPath: ${r.hooksPath ?? '(unset: git runs .git/hooks)'}`,
                  r.restoredFiles.length ? `restored as they were: ${r.restoredFiles.join(', ')}` : '',
                  r.removedFiles.length ? `removed (hermesd created them): ${r.removedFiles.join(', ')}` : '',
                  r.removedBlocks.length ? `hermesd's part taken out (your edits kept): ${r.removedBlocks.join(', ')}` : '',
                  r.keptCommitted.length
                    ? `left as committed (they call hermesd only where it is set up): ${r.keptCommitted.join(', ')}; to drop hermesd from the project, remove its part from them in a commit`
                    : '',
                  ...after,
                ]
              : after.some(Boolean)
                ? ['hermesd hooks were not installed here', ...after]
                : ['hermesd hooks were not installed here; nothing to do']
            )
              .filter(Boolean)
              .join('\n'),
          );
          if (!globals(cmd).json && agents.wasInstalled) {
            process.stdout.write(
              [
                'agents: hermesd hooks and MCP server removed from their configs',
                agents.restored.length ? `  restored as they were: ${agents.restored.join(', ')}` : '',
                agents.removed.length ? `  removed (hermesd created them): ${agents.removed.join(', ')}` : '',
                agents.unblocked.length ? `  hermesd's entries taken out (your edits kept): ${agents.unblocked.join(', ')}` : '',
                agents.kept.length ? `  left as they are (changed or gone since init): ${agents.kept.join(', ')}` : '',
              ]
                .filter(Boolean)
                .join('\n') + '\n',
            );
          }
          return;
        }
        const settings = await runnerSettings(repo);
        // An existing config keeps its rules; without a secrets rule, init says how to turn one on.
        let secretsRule: boolean | undefined;
        try {
          const { loadConfig } = await import('../../config/load.js');
          secretsRule = loadConfig({ root: repo.root, home: hermesHome() }).rules.some((x) => x.secrets === true);
        } catch {
          // a broken config is reported by every hook run; init still installs
        }
        const hooks = installHooks(repo, {
          nodePath: process.execPath,
          cliPath: CLI_ENTRY,
          settings,
          manager: opts.manager as (typeof MANAGERS)[number] | undefined,
        });
        // A plain init where agents were set up before refreshes their runner too (node or CLI may have moved).
        const before = opts.agents === undefined ? (await import('../../other-agents/install.js')).installedAgents(repo) : undefined;
        const agents =
          opts.agents !== undefined
            ? await installAgentHooks(repo, opts.agents, settings)
            : before?.length
              ? await installAgentHooks(repo, before.join(','), settings)
              : undefined;
        // A config init writes has the secrets rule; one that was there is judged as it is.
        const withSecrets = { ...hooks, secretsRule: hooks.config.written || secretsRule !== false };
        const r = agents ? { ...withSecrets, agents } : withSecrets;
        output(globals(cmd), r, () =>
          [
            `${r.reinstalled ? 'hermesd hooks refreshed' : 'hermesd hooks installed'} in ${r.root}: ${r.reason}; ${r.did}.`,
            `hooks: ${r.hooks.join(', ')}${r.hooksPath ? `  (core.hooksPath = ${r.hooksPath})` : ''}`,
            r.chained.length ? `your existing hooks keep running after hermesd's: ${r.chained.join(', ')}` : '',
            r.config.written ? `wrote ${r.config.path}: add your rules and checks there` : `kept ${r.config.path}`,
            r.secretsRule
              ? ''
              : color.yellow(
                  `note: ${r.config.path} has no secrets rule, so commits are not checked for credentials (GitHub, Slack, Stripe and AWS keys, private keys: ~220 kinds). To turn it on, add to its rules:\n${SECRETS_RULE_YAML}`,
                ),
            commitLine(r),
            `local to this clone (never commit): ${r.local.join(', ')}`,
            ...r.notes.map((n) => color.yellow(`note: ${n}`)),
            `skip once: HERMESD_SKIP=1 git commit …  remove: hermesd init --uninstall`,
            ...(agents ? agentLines(agents) : []),
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );
}
