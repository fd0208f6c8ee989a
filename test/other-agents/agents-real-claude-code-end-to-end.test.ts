/**
 * The real Claude Code (pinned, installed from npm by the test setup) in a repository where
 * `hermesd init --agents claude` ran, against a scripted Anthropic Messages server
 * (test/helpers/agent-e2e.ts has the scenarios, the same for every client): the rules hold at
 * its file and shell tools, the memory snapshot and recall reach the model, transcripts land
 * clean in SessionDB, hermesd's MCP server is listed and answers, and neither the end of a
 * session nor a killed client waits on, or leaves behind, a hermesd process.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { endToEnd, QUOKKA } from '../helpers/agent-e2e.js';

const MCP = 'mcp__hermesd__';

endToEnd({
  client: 'claude',
  firstSession: (repo) => [
    // Claude Code overwrites only a file it has read in the session.
    { id: 'toolu_read_gen', name: 'Read', input: { file_path: join(repo, 'gen/a.ts') } },
    { id: 'toolu_write_gen', name: 'Write', input: { file_path: join(repo, 'gen/a.ts'), content: 'export const a = 2;\n' } },
    { id: 'toolu_write_ok', name: 'Write', input: { file_path: join(repo, 'src/quokka.ts'), content: QUOKKA } },
    { id: 'toolu_check', name: `${MCP}check`, input: {} },
  ],
  ids: { refused: 'toolu_write_gen', allowed: 'toolu_write_ok', check: 'toolu_check' },
  storedCalls: ['Read', 'Write', 'Write', `${MCP}check`],
  shell: (id, command) => ({ id, name: 'Bash', input: { command, description: 'Run a shell command' } }),
  mcpTools: (requests) => [
    ...new Set(
      requests
        .flatMap((r) => r.tools)
        .filter((n) => n.startsWith(MCP))
        .map((n) => n.slice(MCP.length)),
    ),
  ],
  stoppedGently(run) {
    // Claude Code stops an MCP server with SIGINT, then SIGTERM 100 ms later, then SIGKILL; its debug log says which it took.
    expect(run.debug).toContain('MCP server "hermesd": Sending SIGINT to MCP server process');
    expect(run.debug).not.toContain('MCP server "hermesd": SIGINT failed');
  },
});
