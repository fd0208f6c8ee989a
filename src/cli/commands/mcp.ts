import type { Command } from 'commander';
import { action } from '../runtime.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description("an MCP server over stdio for this repository's memory, sessions, skills, rules and context (started by an agent)")
    .option('--repo <path>', 'the repository to serve (default: the current directory)')
    .action(
      action(async (opts: { repo?: string }) => {
        // Loaded here: the SDK is not worth its start-up time to every other command.
        const { runMcpServer } = await import('../../mcp/server.js');
        await runMcpServer({ repo: opts.repo });
      }),
    );
}
