/**
 * Other agents' hooks over the API (docs/agents.md), as the daemon answers them and its
 * clients (the `hermesd agent-hook` fallback, `hermesd status`) read them.
 */

/** POST /v1/agents/:agent/hook: what the hook prints and how it exits, and what the daemon made of the event. */
export type AgentHookAnswer = {
  exitCode: 0 | 2;
  stdout: string;
  stderr: string;
  agent: string;
  /** The agent's own name for the event (`PreToolUse`, `beforeShellExecution`, `BeforeTool`…). */
  event: string;
  kind: string;
  /** `rewrite`: an allowed shell call given back to run confined (docs/agents.md). */
  decision: 'deny' | 'rewrite' | 'context' | 'none';
  /** The rule or policy behind a denial. */
  rule?: string;
};

/** GET /v1/status `agents`: the transcripts of this repository read so far. */
export type TranscriptStats = { transcripts: number; stored: number; skipped: number };

/** GET /v1/agents/transcripts: one transcript file and how far it was read. */
export type AgentTranscript = {
  path: string;
  agent: string;
  sessionId: string;
  offset: number;
  lines: number;
  stored: number;
  skipped: number;
  updatedAt: string;
};
