/**
 * The CLI's commands: each module, the top-level commands it registers, in the order `--help`
 * lists them. main.ts loads only the module of the command asked for (a command that only asks
 * the daemon loads no more than it uses: the CLI starts on every hook fallback and every `status`),
 * and all of them for `--help`, no command, or a name it does not know (commander then answers
 * with the list or a suggestion). test/cli/cli-commands-table-is-what-modules-register.test.ts
 * holds this table to what the modules register.
 */
import type { Command } from 'commander';

type CommandModule = { register(program: Command): void };

export const COMMAND_MODULES: ReadonlyArray<{ commands: readonly string[]; load: () => Promise<CommandModule> }> = [
  { commands: ['init'], load: () => import('./init.js') },
  { commands: ['start', 'stop', 'restart', 'status', 'logs'], load: () => import('./lifecycle.js') },
  { commands: ['run'], load: () => import('./run.js') },
  { commands: ['check'], load: () => import('./check.js') },
  { commands: ['context'], load: () => import('./context.js') },
  { commands: ['memory'], load: () => import('./memory.js') },
  { commands: ['remember', 'proposals'], load: () => import('./remember.js') },
  { commands: ['sessions'], load: () => import('./sessions.js') },
  { commands: ['skills'], load: () => import('./skills.js') },
  { commands: ['hook'], load: () => import('./hook.js') },
  { commands: ['mcp'], load: () => import('./mcp.js') },
  { commands: ['doctor'], load: () => import('./doctor.js') },
  { commands: ['config'], load: () => import('./config.js') },
];

/** The modules to load for `args` (the arguments after `hermesd`): the command's own, or every one. */
export function modulesFor(args: readonly string[]): typeof COMMAND_MODULES {
  // Global options take no value, so the first word that is not an option names the command.
  const name = args.find((a) => !a.startsWith('-'));
  if (name === undefined && (args.includes('--version') || args.includes('-V'))) return [];
  const own = name === undefined ? [] : COMMAND_MODULES.filter((m) => m.commands.includes(name));
  return own.length > 0 && !args.includes('--help') && !args.includes('-h') ? own : COMMAND_MODULES;
}
