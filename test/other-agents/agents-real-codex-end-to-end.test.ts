/**
 * The real Codex CLI (pinned, installed from npm by the test setup; its native binary) in a
 * repository where `hermesd init --agents codex` ran, the project and its hooks trusted as a
 * user trusts them, against a scripted OpenAI Responses server (test/helpers/agent-e2e.ts has
 * the scenarios, the same for every client): the rules hold at apply_patch and its shell, the
 * memory snapshot and recall reach the model, transcripts land clean in SessionDB, hermesd's
 * MCP server is found (tool_search) and answers, and neither the end of a session nor a
 * killed client leaves a hermesd process behind.
 */
import { endToEnd, QUOKKA } from '../helpers/agent-e2e.js';
import type { ModelRequest } from '../helpers/agent-models.js';

const patch = (body: string) => `*** Begin Patch\n${body}*** End Patch\n`;

/** hermesd's tools Codex showed the model: declared in a namespace, or found by tool_search. */
function mcpTools(requests: ModelRequest[]): string[] {
  const names = new Set<string>();
  for (const r of requests) {
    const items: any[] = [
      ...(r.body.tools ?? []),
      ...(r.body.input ?? []).filter((i: any) => i?.type === 'tool_search_output').flatMap((i: any) => i.tools ?? []),
    ];
    for (const t of items) if (t?.type === 'namespace' && t.name === 'mcp__hermesd') for (const f of t.tools ?? []) names.add(f.name);
  }
  return [...names];
}

const SEARCH = { id: 'call_search', name: 'tool_search', input: { query: 'hermesd repository rules check memory' } };

endToEnd({
  client: 'codex',
  firstSession: () => [
    { id: 'call_patch_gen', name: 'apply_patch', input: { input: patch('*** Update File: gen/a.ts\n@@\n-export const a = 1;\n+export const a = 2;\n') } },
    {
      id: 'call_patch_ok',
      name: 'apply_patch',
      input: {
        input: patch(
          `*** Add File: src/quokka.ts\n${QUOKKA.split('\n')
            .filter(Boolean)
            .map((l) => `+${l}\n`)
            .join('')}`,
        ),
      },
    },
    // Codex defers MCP tools: the model finds them with tool_search, then calls one in its namespace.
    SEARCH,
    { id: 'call_check', name: 'check', namespace: 'mcp__hermesd', input: {} },
  ],
  ids: { refused: 'call_patch_gen', allowed: 'call_patch_ok', check: 'call_check' },
  // tool_search is Codex's own lookup, not a tool of the session's work; the MCP call is stored by its function's name.
  storedCalls: ['apply_patch', 'apply_patch', 'check'],
  shell: (id, command) => ({ id, name: 'exec_command', input: { cmd: command } }),
  mcpTools,
  listMcp: SEARCH,
  // hermesd's permission profile (default_permissions in .codex/config.toml) has gen/ read-only in Codex's own sandbox.
  ownSandboxHolds: true,
  // `--sandbox danger-full-access`: Codex runs commands without its sandbox (measured with Codex 0.171.0: a
  // `sandbox_mode` in the user's config.toml does not, while the project's default_permissions names a profile).
  ownSandboxOff: ['--sandbox', 'danger-full-access'],
});
