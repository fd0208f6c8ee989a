#!/usr/bin/env node
/**
 * `hermesd`'s first file: package.json's bin, dist/cli/main.js, is this file bundled as CommonJS.
 * The commands that only ask the daemon and print (./quick.ts: `status`, `--version`) are answered
 * here, without commander and the command modules; every other command line goes to the full one
 * (./main.ts, bundled as dist/cli/program.mjs), unchanged.
 *
 * Why a file of its own, and CommonJS: `status` is a whole process, and a process that loads an
 * ES module builds every builtin it imports whole (`node:fs` with its promises and streams), where
 * `require` takes what it uses; with commander and the command table `status` cost twice what
 * it costs from here over `node -e 0` (docs/benchmarks.md#daemon).
 */
import { answerQuick, quickCommand } from './quick.js';
import { reportError } from './runtime.js';

const args = process.argv.slice(2);
const quick = quickCommand(args);
if (quick) void answerQuick(quick, args);
// An install without the full command line (a broken copy) says so in one line, as any error does.
else import('./main.js').catch((err: unknown) => reportError(err, args.includes('--debug')));
