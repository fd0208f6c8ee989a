/**
 * The system prompt as three ordered tiers (DESIGN.md §5). The order ranks how likely the
 * bytes are to stay the same, not importance: a fixed prefix lets a provider reuse its
 * prompt cache, so nothing that varies by repository, day or session goes in `stable`.
 */
import { sha256 } from '../text/hash.js';
import type { TierReport } from '../protocol/context-report.js';

/** Used when $HERMES_HOME/SOUL.md does not exist. */
export const DEFAULT_IDENTITY = [
  '# Identity',
  'You are Hermes, a coding agent working inside a git repository on behalf of its user.',
  'You read before you change, make the smallest change that solves the task, and verify it by running the checks the repository provides.',
  'You are direct and precise: say what you did, what you verified, and what is left.',
].join('\n');

/** The tool set of DESIGN.md §6 in its canonical order; guidance is rendered in this order whatever order callers pass. */
export const ALL_TOOL_NAMES = [
  'read_file',
  'write_file',
  'patch',
  'search_files',
  'terminal',
  'memory',
  'session_search',
  'skills_list',
  'skill_view',
  'skill_manage',
  'remember',
] as const;

const TOOL_GUIDANCE: Record<string, string> = {
  read_file: 'read_file reads a repository file (use offset/limit for large files). Read a file before you edit it.',
  write_file: 'write_file replaces a whole file; prefer patch for edits to existing files.',
  patch: 'patch replaces old_string with new_string in a file; include enough surrounding text to make the match unique.',
  search_files: 'search_files finds text in the repository; use it instead of guessing where something is defined.',
  terminal:
    'terminal runs a shell command in the repository root; use it to run tests, builds and git commands. Never run destructive commands the task does not need.',
  memory: [
    'You have persistent memory across sessions. Save durable facts with the memory tool: user preferences, environment details, tool quirks and stable conventions.',
    'Prioritise what reduces future steering: the most valuable memory prevents the user from having to correct or remind you again.',
    "Write memories as declarative facts, not instructions to yourself: 'User prefers concise responses' ✓ — 'Always respond concisely' ✗. 'Project uses pytest with xdist' ✓ — 'Run tests with pytest -n 4' ✗.",
    "Facts about this repository's environment go to its own memory (scope repo); the user's preferences to USER.md (target user); notes that hold in every repository to the global MEMORY.md.",
    "Repository rules belong to the repository's context file, not to memory; procedures to skills; one-off task details to nobody.",
    'A memory write changes disk for the next session; the memory shown in this prompt stays as it was when the session began.',
  ].join('\n'),
  session_search:
    'session_search searches the log of past sessions (full text, no summaries). Use it when the user refers to earlier work or you need evidence of what happened before; open a hit with session_id and around_message_id to read its surrounding messages.',
  skills_list: 'skills_list lists the available skills (procedures for recurring jobs).',
  skill_view: "skill_view loads a skill's full instructions. When a task matches a skill in the index, view it before starting and follow it.",
  skill_manage: [
    'skill_manage creates and updates skills. Create one when a complex task succeeded (5+ tool calls), you overcame errors, the user corrected your approach and it worked, or the user asks you to remember a procedure.',
    'If you used a skill and hit problems it does not cover, patch it right away (action "patch"). A skill is a procedure; a one-line fact or preference belongs in memory instead.',
  ].join('\n'),
  remember:
    'remember decides who owns what the user asks you to keep (the authority file, a config rule, USER.md, this repository\'s memory, a skill, or nobody) and records a proposal the user accepts. Use it when the user states a rule or a preference, or says "remember"; never write such rules into the repository\'s files yourself.',
};

const COMPLETION_RULES = [
  '# Completing a task',
  '- Finish the task the user asked for; do not stop at a plan when you can act.',
  '- Verify your change (tests, build, or running the code) before you say it works; say so plainly when you could not verify.',
  '- Never edit files the repository protects; when a tool refuses a write, follow the rule it quotes instead of working around it.',
  '- End with a short summary: what changed, how it was verified, and anything left for the user.',
].join('\n');

/** Tool guidance for exactly the tools offered, in canonical order, so equal tool sets give equal bytes. */
export function toolGuidance(toolNames: readonly string[]): string {
  const offered = new Set(toolNames);
  const lines = ALL_TOOL_NAMES.filter((n) => offered.has(n)).map((n) => TOOL_GUIDANCE[n]!);
  if (lines.length === 0) return '';
  return ['# Tools', ...lines].join('\n\n');
}

export type StableInput = { identity: string; toolNames: readonly string[] };

export function stableTier(input: StableInput): string {
  return join([input.identity, toolGuidance(input.toolNames), COMPLETION_RULES]);
}

export type WorkspaceSnapshot = {
  branch: string;
  head: string;
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
  /** A git operation in progress (merge, rebase, cherry-pick), when one is. */
  operation?: string;
};

export function workspaceText(ws: WorkspaceSnapshot, root: string, cwdLabel: string): string {
  const lines = [
    '# Workspace',
    `Repository root: ${root}`,
    ...(cwdLabel && cwdLabel !== '.' ? [`Working directory: ${cwdLabel} (relative to the root)`] : []),
    `Branch: ${ws.branch}`,
    `HEAD: ${ws.head}`,
    `Working tree: ${ws.staged} staged, ${ws.unstaged} unstaged, ${ws.untracked} untracked` + (ws.conflicted ? `, ${ws.conflicted} conflicted` : ''),
  ];
  if (ws.operation) lines.push(`In progress: ${ws.operation}`);
  return lines.join('\n');
}

export type ContextInput = { workspace: string; callerSystem?: string; authority: string };

export function contextTier(input: ContextInput): string {
  const caller = input.callerSystem?.trim() ? `# Caller instructions\n${input.callerSystem.trim()}` : '';
  return join([input.workspace, caller, input.authority]);
}

export type VolatileInput = { skillIndex: string; memory: string; repoMemory?: string; user: string; date: Date };

/** Local calendar date: the prompt stays the same for a whole day. */
export function dateOnly(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export function volatileTier(input: VolatileInput): string {
  return join([input.skillIndex, input.memory, input.repoMemory ?? '', input.user, `# Session\nDate: ${dateOnly(input.date)}`]);
}

function join(parts: string[]): string {
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .join('\n\n');
}

export type Tiers = { stable: string; context: string; volatile: string };

export function tierReport(text: string): TierReport {
  return { bytes: Buffer.byteLength(text), sha256: sha256(text), text };
}

/** Stable, context, volatile, separated by blank lines. */
export function joinTiers(t: Tiers): string {
  return join([t.stable, t.context, t.volatile]);
}
