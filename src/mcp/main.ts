/**
 * The entry of `hermesd mcp` as agents start it: bundled into dist/mcp/main.js
 * (scripts/bundle-daemon.mjs) and run without the CLI (commander and its commands) in front.
 * `hermesd mcp` in the CLI runs the same front.
 *
 *   node dist/mcp/main.js [--repo <path>]
 */
import { runMcpFront } from './front.js';

const at = process.argv.indexOf('--repo');
const repo = at > 0 ? process.argv[at + 1] : undefined;
if (at > 0 && !repo) {
  process.stderr.write('hermesd mcp: --repo needs a path\n');
  process.exit(2);
}
await runMcpFront(repo ? { repo } : {});
