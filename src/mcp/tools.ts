/**
 * The MCP tools: hermesd's own state tools under their own names, descriptions and zod
 * schemas (DESIGN.md §6), run by the daemon exactly as its agent runs them (POST
 * /v1/tools/:name), plus `check` and `context`. A refusal or failure is a tool result with
 * `isError` whose first text is hermesd's message.
 */
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { memory } from '../agent/tools/memory.js';
import { remember } from '../agent/tools/remember.js';
import { sessionSearch } from '../agent/tools/session-search.js';
import { skillManage, skillsList, skillView } from '../agent/tools/skills.js';
import type { Tool } from '../agent/tools/types.js';
import type { ContextReport } from '../protocol/context-report.js';
import type { ToolAnswer } from '../protocol/tools.js';
import type { Violation } from '../rules/engine.js';
import { checkArgs } from '../rules/schema.js';
import type { DaemonLink } from './link.js';

export type McpToolContext = {
  link: DaemonLink;
  /** Names the caller in skill commits: `mcp:<client name>`. */
  sessionId(): string;
  /** The directory the client works in, when it is inside the work tree (for the authority chain). */
  cwd: string | undefined;
};

export type McpTool = {
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodObject;
  annotations: ToolAnnotations;
  call(args: Record<string, unknown>, ctx: McpToolContext): Promise<CallToolResult>;
};

export const contextArgs = z.strictObject({});

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/** hermesd's message first, then (when the daemon sent more, e.g. the store's entries) the whole answer. */
export function refusal(message: string, details?: string): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: message }];
  if (details !== undefined) content.push({ type: 'text', text: details });
  return { content, isError: true };
}

/** One of hermesd's agent tools, run by the daemon. */
function agentTool(tool: Tool, title: string, annotations: ToolAnnotations): McpTool {
  return {
    name: tool.name,
    title,
    description: tool.description,
    inputSchema: tool.parameters as z.ZodObject,
    annotations: { ...annotations, openWorldHint: false },
    async call(args, ctx) {
      const answer = await ctx.link.call<ToolAnswer>('POST', `/v1/tools/${tool.name}?session_id=${encodeURIComponent(ctx.sessionId())}`, args);
      if (answer.ok) return text(answer.content);
      // The whole answer only when it says more than the message (a memory refusal carries the entries).
      const details = answer.content !== JSON.stringify({ error: answer.error }) ? answer.content : undefined;
      return refusal(answer.error ?? 'The tool call was refused.', details);
    },
  };
}

/*
 * Annotations, per tool (a hint covers every action of a tool, so it holds for the most
 * dangerous one):
 * - memory: replace and remove drop entry text (destructive). Idempotent: an add of an entry
 *   already there is a no-op, and a second replace/remove of the same text finds nothing to
 *   change (or the same entry again) and changes nothing more.
 * - skill_manage: edit, delete and remove_file discard content (each revertible from the
 *   skills' git history, but gone from the folder); a repeated patch with replace_all whose
 *   new text contains the old one changes the file again: not idempotent.
 * - remember: records a pending proposal and changes nothing else (not destructive); the same
 *   sentence again answers the same pending proposal (idempotent).
 * - session_search, skills_list, skill_view, check, context: read only; the same call gives the
 *   same answer while the state is unchanged. `check` runs a rule's generator in a throwaway
 *   checkout, never in the work tree.
 * None reaches beyond this machine's repository and $HERMES_HOME: openWorldHint false.
 */
const READ: ToolAnnotations = { readOnlyHint: true, idempotentHint: true };

export const MCP_TOOLS: readonly McpTool[] = [
  agentTool(memory, 'Memory (durable facts for the next session)', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }),
  agentTool(sessionSearch, 'Search earlier sessions', READ),
  agentTool(skillsList, 'List skills', READ),
  agentTool(skillView, 'View a skill', READ),
  agentTool(skillManage, 'Create or change a skill', { readOnlyHint: false, destructiveHint: true, idempotentHint: false }),
  agentTool(remember, 'Decide who owns a piece of information (and propose it)', { readOnlyHint: false, destructiveHint: false, idempotentHint: true }),
  {
    name: 'check',
    title: 'Check the repository rules',
    description:
      "Judge the repository's rules (.hermes/config.yaml: protected paths, forbidden patterns, generated files) on the work tree's " +
      'changes against HEAD, or with `staged: true` on exactly the staged snapshot (what the pre-commit hook judges). Returns ' +
      '{violations: [{rule, file, line, message}], warnings, staged}; no violations means the change passes. Run it before committing.',
    inputSchema: checkArgs,
    annotations: { ...READ, openWorldHint: false },
    async call(args, ctx) {
      const answer = await ctx.link.call<{ violations: Violation[]; warnings: string[]; staged: boolean }>('POST', '/v1/check', {
        staged: Boolean(args.staged),
      });
      return text(JSON.stringify({ violations: answer.violations, warnings: answer.warnings, staged: answer.staged }));
    },
  },
  {
    name: 'context',
    title: "hermesd's context for this repository",
    description:
      'What a hermesd session in this repository starts from: the authority files in force (HERMES.md, the AGENTS.md chain, CLAUDE.md ' +
      'or Cursor rules — the first that exists wins), the three system-prompt tiers (stable, context, volatile) with their sizes ' +
      'and sha256, and warnings (a blocked or truncated file, a broken config). The texts themselves are resources (hermesd://authority, hermesd://memory, hermesd://skills).',
    inputSchema: contextArgs,
    annotations: { ...READ, openWorldHint: false },
    async call(_args, ctx) {
      const r = await ctx.link.call<ContextReport>('GET', `/v1/context${ctx.cwd ? `?cwd=${encodeURIComponent(ctx.cwd)}` : ''}`);
      const tier = (t: { bytes: number; sha256: string }) => ({ bytes: t.bytes, sha256: t.sha256 });
      return text(
        JSON.stringify({
          authority: r.authority,
          tiers: { stable: tier(r.tiers.stable), context: tier(r.tiers.context), volatile: tier(r.tiers.volatile) },
          warnings: r.warnings,
          sha256: r.sha256,
        }),
      );
    },
  },
];
