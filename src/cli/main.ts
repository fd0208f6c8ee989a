#!/usr/bin/env node
/** The hermesd command line: a client of the daemon's local API, plus lifecycle commands. */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { reportError } from './runtime.js';
import * as lifecycle from './commands/lifecycle.js';
import * as doctor from './commands/doctor.js';
import * as context from './commands/context.js';
import * as memory from './commands/memory.js';
import * as sessions from './commands/sessions.js';
import * as skills from './commands/skills.js';
import * as check from './commands/check.js';
import * as run from './commands/run.js';
import * as hook from './commands/hook.js';
import * as init from './commands/init.js';
import * as config from './commands/config.js';
import * as mcp from './commands/mcp.js';
import * as remember from './commands/remember.js';

const program = new Command('hermesd')
  .description('A per-repository agent daemon with git hooks.')
  .version(VERSION)
  .option('--json', 'print machine-readable JSON')
  .option('--debug', 'print stack traces on errors')
  .showHelpAfterError('(run hermesd --help for usage)')
  .enablePositionalOptions(false)
  .exitOverride();

for (const mod of [init, lifecycle, run, check, context, memory, remember, sessions, skills, hook, mcp, doctor, config]) mod.register(program);
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
