/**
 * The shapes of SessionDB's records: sessions and messages as they are stored and read, and
 * the zod schemas of what comes in from outside (the API), from which the input types derive.
 */
import { z } from 'zod';

export const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type Role = (typeof ROLES)[number];

/** OpenAI Chat Completions tool call, as stored in `messages.tool_calls`. */
export const toolCallSchema = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

export type Session = {
  id: string;
  repo: string | null;
  source: string;
  model: string | null;
  systemPromptSha256: string | null;
  parentSessionId: string | null;
  title: string | null;
  startedAt: string;
  endedAt: string | null;
  endReason: string | null;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
};

/** A new session as a client asks for it (POST /v1/sessions); SessionDB.createSession takes it with `repo` decided. */
export const newSessionSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" and "-" only, at most 128')
    .optional(),
  /** Work tree root; defaults to this daemon's. `null` for evidence that belongs to no repository. */
  repo: z.string().nullable().optional(),
  source: z.string().min(1).max(64).default('socket'),
  model: z.string().nullable().optional(),
  /** The full system prompt; stored once per distinct text in `prompts`. */
  systemPrompt: z.string().optional(),
  parentSessionId: z.string().nullable().optional(),
  title: z.string().max(500).nullable().optional(),
});

export type NewSession = Omit<z.output<typeof newSessionSchema>, 'repo' | 'source'> & { repo: string | null; source: string; startedAt?: string };

export type Message = {
  id: number;
  sessionId: string;
  role: Role;
  content: string;
  /** The exact bytes sent to the model, when they differ from `content`. */
  apiContent?: string;
  toolCalls?: ToolCall[];
  toolName?: string;
  toolCallId?: string;
  createdAt: string;
};

/** A message to append, from the agent loop, a hook, or a client (POST /v1/sessions/:id/messages). */
export const newMessageSchema = z.strictObject({
  role: z.enum(ROLES),
  content: z.string().nullable().optional(),
  apiContent: z.string().nullable().optional(),
  toolCalls: z.array(toolCallSchema).nullable().optional(),
  toolName: z.string().nullable().optional(),
  toolCallId: z.string().nullable().optional(),
  createdAt: z.string().datetime({ offset: true }).optional(),
});
export type NewMessage = z.infer<typeof newMessageSchema>;

export type SearchOptions = {
  /** Only sessions of this repository (a work tree root), unless `all`. */
  repo?: string | null;
  all?: boolean;
  role?: string;
  source?: string;
  /** Leave out sessions of these sources (session_search asks for people's sessions first). */
  excludeSources?: readonly string[];
  limit?: number;
};

export type SearchHit = {
  sessionId: string;
  messageId: number;
  role: Role;
  snippet: string;
  toolName?: string;
  repo: string | null;
  source: string;
  createdAt: string;
  /** bm25 score (lower is better), comparable within one result list. */
  rank: number;
};

/** How a search was answered; `recent` = ranked among the newest candidates of a very common term. */
export type SearchStrategy = 'ranked' | 'recent' | 'trigram' | 'none';

export type SearchResult = { results: SearchHit[]; strategy: SearchStrategy };
