/**
 * The entry of `hermesd mcp` as agents start it: bundled into dist/mcp/main.cjs
 * (scripts/bundle-daemon.mjs) and run without the CLI (commander and its commands) in front.
 * `hermesd mcp` in the CLI runs the same front.
 *
 *   node dist/mcp/main.cjs [--repo <path> [--git-dir <path> --common-dir <path>]]
 *
 * The launcher (src/hook-client/runners/mcp.sh) passes the git dir and common dir the committed stub
 * found with builtins, so that the server asks git nothing before its first answers.
 */
import { runMcpFront } from './front.js';

/** The value after `flag`, undefined when the flag is absent; a flag without a value ends the process. */
function option(flag: string): string | undefined {
  const at = process.argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = process.argv[at + 1];
  if (!value) {
    process.stderr.write(`hermesd mcp: ${flag} needs a path\n`);
    process.exit(2);
  }
  return value;
}

const repo = option('--repo');
const gitDir = option('--git-dir');
const commonDir = option('--common-dir');
void runMcpFront({ ...(repo ? { repo } : {}), ...(repo && gitDir && commonDir ? { gitDirs: { gitDir, commonDir } } : {}) });
