/**
 * The real Gemini CLI (pinned, installed from npm by the test setup) in a repository where
 * `hermesd init --agents gemini` ran, the folder trusted, against a scripted Gemini API server
 * (streamGenerateContent over SSE; test/helpers/agent-e2e.ts has the scenarios, the same for
 * every client): the rules hold at its file and shell tools without "hook failed" warnings,
 * the memory snapshot and recall reach the model, transcripts land clean in SessionDB (no
 * `<session_context>`, no `<hook_context>`), hermesd's MCP server is listed and answers, and
 * neither the end of a session nor a killed client leaves a hermesd process behind.
 */
import { endToEnd, QUOKKA } from '../helpers/agent-e2e.js';

const MCP = 'mcp_hermesd_';

endToEnd({
  client: 'gemini',
  firstSession: () => [
    { id: 'write_gen', name: 'write_file', input: { file_path: 'gen/a.ts', content: 'export const a = 2;\n' } },
    { id: 'write_ok', name: 'write_file', input: { file_path: 'src/quokka.ts', content: QUOKKA } },
    { id: 'check', name: `${MCP}check`, input: {} },
  ],
  ids: { refused: 'write_gen', allowed: 'write_ok', check: 'check' },
  storedCalls: ['write_file', 'write_file', `${MCP}check`],
  shell: (id, command) => ({ id, name: 'run_shell_command', input: { command } }),
  mcpTools: (requests) => [
    ...new Set(
      requests
        .flatMap((r) => r.tools)
        .filter((n) => n.startsWith(MCP))
        .map((n) => n.slice(MCP.length)),
    ),
  ],
  // Gemini CLI warns the user of a failed hook where hermesd refused a call in a form it reads as a failure.
  hookFailure: /Hook\(s\) \[hermesd\] failed/,
});
