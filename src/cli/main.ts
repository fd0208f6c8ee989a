#!/usr/bin/env node
/** The hermesd command line: a client of the daemon's local API, plus lifecycle commands. */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { reportError } from './runtime.js';
import { modulesFor } from './commands/index.js';

const program = new Command('hermesd')
  .description('A per-repository agent daemon with git hooks.')
  .version(VERSION)
  .option('--json', 'print machine-readable JSON')
  .option('--debug', 'print stack traces on errors')
  .showHelpAfterError('(run hermesd --help for usage)')
  .enablePositionalOptions(false)
  .exitOverride();

for (const mod of await Promise.all(modulesFor(process.argv.slice(2)).map((m) => m.load()))) mod.register(program);
for (const sub of program.commands) {
  sub.exitOverride();
  for (const sub2 of sub.commands) sub2.exitOverride();
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version are not errors; everything else commander throws is a usage error.
    process.exitCode = err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : 2;
  } else {
    reportError(err, process.argv.includes('--debug'));
  }
}
