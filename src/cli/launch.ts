#!/usr/bin/env node
/**
 * `hermesd`'s first file: package.json's bin, dist/cli/main.js, is this file bundled as CommonJS.
 * The commands that only ask the daemon and print (./quick-command.ts: `status`, `--version`) are
 * answered by ./quick.ts (dist/cli/quick.cjs, required only for them), without commander and the
 * command modules; every other command line goes to the full one (./main.ts, bundled as
 * dist/cli/program.mjs), unchanged, and this file loads nothing else before it.
 *
 * Why CommonJS: `status` is a whole process, and a process that loads an ES module builds every
 * builtin it imports whole (`node:fs` with its promises and streams), where `require` takes what
 * it uses; with commander and the command table `status` cost twice what it costs from here
 * (docs/benchmarks.md#daemon).
 */
import { createRequire } from 'node:module';
import { reportError } from './report.js';
import { quickCommand } from './quick-command.js';

const args = process.argv.slice(2);
const quick = quickCommand(args);
// An install missing a file of the CLI (a broken copy) says so in one line, as any error does.
const broken = (err: unknown) => reportError(err, args.includes('--debug'));
if (quick) {
  try {
    // The bundle's own file beside this one (scripts/bundle-daemon.mjs builds both); the per-file build's launch.js is never started.
    void (createRequire(import.meta.url)('./quick.cjs') as typeof import('./quick.js')).answerQuick(quick, args);
  } catch (err) {
    broken(err);
  }
} else import('./main.js').catch(broken);
