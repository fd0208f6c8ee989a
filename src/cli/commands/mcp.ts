import type { Command } from 'commander';
import { action } from '../runtime.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description("an MCP server over stdio for this repository's memory, sessions, skills, rules and context (started by an agent)")
    .option('--repo <path>', 'the repository to serve (default: the current directory)')
    .action(
      action(async (opts: { repo?: string }) => {
        // Agents start the bundle (dist/mcp/main.cjs) instead; this runs the same server.
        const { runMcpFront } = await import('../../mcp/front.js');
        await runMcpFront({ repo: opts.repo });
      }),
    );
}
