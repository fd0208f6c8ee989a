/**
 * Readers of the agents' session transcripts, into SessionDB messages. None of the formats
 * is a documented interface ("the transcript format isn't a stable interface for hooks",
 * Codex), so every reader takes what it knows, skips record types it does not (newer
 * versions add some), and counts as malformed only what is not a record at all.
 *
 * - Claude Code: JSONL, one record per line (`type` user | assistant | summary | system…);
 *   user lines carry prompts and `tool_result` blocks, assistant lines Anthropic Messages
 *   content blocks (`text`, `tool_use`).
 * - Codex: JSONL rollout, `{timestamp, type, payload}`; messages and tool calls are
 *   `response_item` payloads (`message`, `function_call`, `function_call_output`,
 *   `custom_tool_call`, `custom_tool_call_output`).
 * - Gemini CLI: JSONL chat recording (since 0.39): a metadata line, then message records
 *   `{id, type: user | gemini | info…, content, toolCalls?}` re-appended whole when they
 *   change, `{"$set": …}` and `{"$rewindTo": …}` lines; before 0.39 one JSON document
 *   `{sessionId, messages}`.
 * - Cursor: JSONL `{role, message: {content: [...]}}` (newer builds) or plain text with
 *   `user:` / `assistant:` blocks (older builds); neither is documented.
 *
 * Only the user's and the model's words are stored: what the agents inject into a conversation
 * (Gemini CLI's `<session_context>` record and `<hook_context>` parts, Codex's environment,
 * instructions and `<hook_context>` messages, Claude Code's `<system-reminder>` blocks and hook
 * attachments) and hermesd's own fenced blocks are recognised and left out (text/fence.ts), from
 * prompts and from tool results; a prompt left empty by that is not stored.
 *
 * Every message carries a key that is stable for its record (a line's byte offset, a
 * record id) and, from a JSONL file, the offset of its line: ingest.ts uses the offsets for
 * append-only transcripts and the keys where records are re-written (Gemini, whole files).
 */
import { createHash } from 'node:crypto';
import type { NewMessage, ToolCall } from '../sessions/records.js';
import { ownWords } from '../text/fence.js';
import { type AgentName } from '../protocol/agent-hooks.js';

/** A message with a key stable for its record, and (JSONL) the byte offset of the line it came from. */
export type TranscriptItem = { key: string; message: NewMessage; offset?: number };

export type ParsedChunk = {
  items: TranscriptItem[];
  /** Lines (or records) read. */
  lines: number;
  /** Lines that are not records at all (not JSON, not an object). */
  skipped: number;
  model?: string;
  title?: string;
  agentSessionId?: string;
};

/** How a transcript is read: JSONL from where the last read stopped, or the whole file each time (keys deduplicate). */
export type TranscriptFormat = 'lines' | 'whole';

/** Characters of the first prompt kept as a session's title. */
const TITLE_CHARS = 80;

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => !!v && typeof v === 'object' && !Array.isArray(v);
const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function title(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > TITLE_CHARS ? one.slice(0, TITLE_CHARS - 1) + '…' : one;
}

function jsonArgs(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v ?? {});
  } catch {
    return '{}';
  }
}

/** Text of a content value: a string, or the text of `{type:'text'|'input_text'|'output_text', text}` parts. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    return v
      .map((p) => (typeof p === 'string' ? p : isRec(p) && typeof p.text === 'string' ? p.text : ''))
      .filter(Boolean)
      .join('\n');
  }
  if (isRec(v) && typeof v.text === 'string') return v.text;
  return '';
}

/** Which format a transcript path is in, from its name (and, for Cursor, its first bytes). */
export function formatOf(agent: AgentName, path: string, head: string): TranscriptFormat {
  if (agent === 'gemini' && path.endsWith('.json')) return 'whole';
  if (agent === 'cursor' && !head.trimStart().startsWith('{')) return 'whole';
  return 'lines';
}

type LineReader = (rec: Rec, offset: number, out: ParsedChunk, state: Map<string, string>) => void;

// ---- Claude Code -------------------------------------------------------------------------

const claudeLine: LineReader = (rec, offset, out, toolNames) => {
  const type = s(rec.type);
  const at = s(rec.timestamp);
  const base = s(rec.uuid) ?? `o${offset}`;
  if (s(rec.sessionId)) out.agentSessionId ??= s(rec.sessionId);
  if (type !== 'user' && type !== 'assistant') return;
  if (rec.isMeta === true) return;
  const msg = rec.message;
  if (!isRec(msg)) {
    out.skipped++;
    return;
  }
  const when = at ? { createdAt: at } : {};
  if (type === 'user') {
    const content = msg.content;
    if (typeof content === 'string') {
      const words = ownWords(content);
      if (words) {
        out.items.push({ key: `${base}:0`, message: { role: 'user', content: words, ...when } });
        out.title ??= title(words);
      }
      return;
    }
    if (!Array.isArray(content)) {
      out.skipped++;
      return;
    }
    const texts: string[] = [];
    content.forEach((part, i) => {
      if (!isRec(part)) return;
      if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
      else if (part.type === 'tool_result') {
        const id = s(part.tool_use_id);
        const name = id ? toolNames.get(id) : undefined;
        out.items.push({
          key: `${base}:${i}`,
          message: {
            role: 'tool',
            content: ownWords(textOf(part.content) || (typeof rec.toolUseResult === 'string' ? rec.toolUseResult : '')),
            toolCallId: id ?? null,
            toolName: name ?? null,
            ...when,
          },
        });
      }
    });
    const text = texts.map(ownWords).filter(Boolean).join('\n');
    if (text) {
      out.items.push({ key: `${base}:t`, message: { role: 'user', content: text, ...when } });
      out.title ??= title(text);
    }
    return;
  }
  if (s(msg.model) && msg.model !== '<synthetic>') out.model = s(msg.model);
  const content = Array.isArray(msg.content) ? msg.content : typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : undefined;
  if (!content) {
    out.skipped++;
    return;
  }
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  for (const part of content) {
    if (!isRec(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'tool_use' && typeof part.name === 'string') {
      const id = s(part.id);
      if (id) toolNames.set(id, part.name);
      calls.push({ ...(id ? { id } : {}), type: 'function', function: { name: part.name, arguments: jsonArgs(part.input) } });
    }
  }
  if (texts.length || calls.length)
    out.items.push({ key: `${base}:a`, message: { role: 'assistant', content: texts.join('\n'), toolCalls: calls.length ? calls : null, ...when } });
};

// ---- Codex ------------------------------------------------------------------------------

const codexLine: LineReader = (rec, offset, out, toolNames) => {
  const type = s(rec.type);
  const p = rec.payload;
  if (!type || !isRec(p)) {
    if (!type) out.skipped++;
    return;
  }
  const when = s(rec.timestamp) ? { createdAt: s(rec.timestamp)! } : {};
  const key = `o${offset}`;
  if (type === 'session_meta') {
    out.agentSessionId ??= s(p.id);
    return;
  }
  if (type === 'turn_context') {
    if (s(p.model)) out.model = s(p.model);
    return;
  }
  if (type !== 'response_item') return;
  switch (p.type) {
    case 'message': {
      const text = textOf(p.content);
      if (!text.trim()) return;
      if (p.role === 'user') {
        // Codex's environment, instructions and hook context come as user (or developer) messages.
        const words = ownWords(text);
        if (!words) return;
        out.items.push({ key, message: { role: 'user', content: words, ...when } });
        out.title ??= title(words);
      } else if (p.role === 'assistant') out.items.push({ key, message: { role: 'assistant', content: text, ...when } });
      return;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const name = s(p.name);
      if (!name) return;
      const id = s(p.call_id);
      if (id) toolNames.set(id, name);
      const args = p.type === 'function_call' ? jsonArgs(p.arguments) : jsonArgs(p.input);
      out.items.push({
        key,
        message: { role: 'assistant', content: '', toolCalls: [{ ...(id ? { id } : {}), type: 'function', function: { name, arguments: args } }], ...when },
      });
      return;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const id = s(p.call_id);
      const o = p.output;
      const content = ownWords(typeof o === 'string' ? o : isRec(o) && typeof o.output === 'string' ? o.output : textOf(o));
      out.items.push({ key, message: { role: 'tool', content, toolCallId: id ?? null, toolName: (id && toolNames.get(id)) || null, ...when } });
      return;
    }
    default:
      return;
  }
};

// ---- Gemini CLI -------------------------------------------------------------------------

/** Text of a Gemini PartListUnion (`string | Part | Part[]`, parts `{text}`), each part without what hooks and Gemini injected. */
function geminiText(v: unknown): string {
  if (typeof v === 'string') return ownWords(v);
  const parts = Array.isArray(v) ? v : [v];
  return parts
    .map((p) => (typeof p === 'string' ? p : isRec(p) && typeof p.text === 'string' && p.thought !== true ? p.text : ''))
    .map(ownWords)
    .filter(Boolean)
    .join('\n');
}

/** A tool result: the functionResponse's output, else its display text. */
function geminiResult(call: Rec): string | undefined {
  const parts = Array.isArray(call.result) ? call.result : call.result != null ? [call.result] : [];
  for (const part of parts) {
    if (isRec(part) && isRec(part.functionResponse)) {
      const r = part.functionResponse.response;
      if (isRec(r)) return ownWords(typeof r.output === 'string' ? r.output : typeof r.error === 'string' ? r.error : jsonArgs(r));
    }
  }
  const text = geminiText(call.result);
  if (text) return text;
  return typeof call.resultDisplay === 'string' ? ownWords(call.resultDisplay) : undefined;
}

const DONE = new Set(['success', 'error', 'cancelled']);

function geminiMessage(rec: Rec, out: ParsedChunk): void {
  const id = s(rec.id);
  if (!id) return;
  const when = s(rec.timestamp) ? { createdAt: s(rec.timestamp)! } : {};
  if (rec.type === 'user') {
    const text = geminiText(rec.content);
    if (text.trim()) {
      out.items.push({ key: `${id}:text`, message: { role: 'user', content: text, ...when } });
      out.title ??= title(text);
    }
    return;
  }
  if (rec.type !== 'gemini') return;
  if (s(rec.model)) out.model = s(rec.model);
  const text = geminiText(rec.content);
  if (text.trim()) out.items.push({ key: `${id}:text`, message: { role: 'assistant', content: text, ...when } });
  for (const call of Array.isArray(rec.toolCalls) ? rec.toolCalls : []) {
    if (!isRec(call) || typeof call.name !== 'string') continue;
    const callId = s(call.id) ?? call.name;
    out.items.push({
      key: `${id}:call:${callId}`,
      message: {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: callId, type: 'function', function: { name: call.name, arguments: jsonArgs(call.args) } }],
        ...when,
      },
    });
    const result = DONE.has(String(call.status)) ? geminiResult(call) : undefined;
    if (result !== undefined)
      out.items.push({ key: `${id}:result:${callId}`, message: { role: 'tool', content: result, toolCallId: callId, toolName: call.name, ...when } });
  }
}

const geminiLine: LineReader = (rec, _offset, out) => {
  if (isRec(rec.$set)) {
    if (Array.isArray(rec.$set.messages)) for (const m of rec.$set.messages) if (isRec(m)) geminiMessage(m, out);
    return;
  }
  if ('$rewindTo' in rec) return;
  if (typeof rec.sessionId === 'string' && rec.id === undefined) {
    out.agentSessionId ??= rec.sessionId;
    return;
  }
  geminiMessage(rec, out);
};

// ---- Cursor -----------------------------------------------------------------------------

/** Cursor wraps the typed prompt: `<timestamp>…</timestamp>\n<user_query>\n…\n</user_query>`. */
function cursorPrompt(text: string): string {
  const q = /<user_query>\s*([\s\S]*?)\s*<\/user_query>/.exec(text);
  return q ? q[1]! : text.replace(/<timestamp>[\s\S]*?<\/timestamp>\s*/g, '');
}

const cursorLine: LineReader = (rec, offset, out) => {
  const role = s(rec.role);
  if (role !== 'user' && role !== 'assistant') return;
  const msg = isRec(rec.message) ? rec.message : rec;
  const parts = Array.isArray(msg.content) ? msg.content : typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : [];
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  for (const part of parts) {
    if (!isRec(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'tool_use' && typeof part.name === 'string')
      calls.push({ type: 'function', function: { name: part.name, arguments: jsonArgs(part.input) } });
  }
  const key = `o${offset}`;
  if (role === 'user') {
    const text = ownWords(cursorPrompt(texts.join('\n')));
    if (text) {
      out.items.push({ key, message: { role: 'user', content: text } });
      out.title ??= title(text);
    }
  } else if (texts.length || calls.length)
    out.items.push({ key, message: { role: 'assistant', content: texts.join('\n'), toolCalls: calls.length ? calls : null } });
};

/** Cursor's older plain-text transcript: `user:` / `assistant:` blocks, `[Tool call] …` lines inside. */
function cursorText(text: string, out: ParsedChunk): void {
  const blocks = text.split(/^(user|assistant):\s*$/m);
  // split with a capture group: [before, role, body, role, body, …]
  for (let i = 1; i + 1 < blocks.length; i += 2) {
    const role = blocks[i] as 'user' | 'assistant';
    const body = role === 'user' ? ownWords(cursorPrompt(blocks[i + 1]!.trim())) : blocks[i + 1]!.trim();
    out.lines++;
    if (!body) continue;
    const key = `b${(i - 1) / 2}:${createHash('sha256').update(body).digest('hex').slice(0, 16)}`;
    out.items.push({ key, message: { role, content: body } });
    if (role === 'user') out.title ??= title(body);
  }
}

const LINE_READERS: Record<AgentName, LineReader> = { claude: claudeLine, codex: codexLine, gemini: geminiLine, cursor: cursorLine };

/** Messages of the complete JSONL lines in `buf`, which starts at byte `startOffset` of the file. */
export function parseLines(agent: AgentName, buf: Buffer, startOffset: number, toolNames: Map<string, string> = new Map()): ParsedChunk {
  const out: ParsedChunk = { items: [], lines: 0, skipped: 0 };
  const read = LINE_READERS[agent];
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(10, at);
    const end = nl < 0 ? buf.length : nl;
    const offset = startOffset + at;
    const line = buf.toString('utf8', at, end);
    at = end + 1;
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '')) continue;
    out.lines++;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.skipped++;
      continue;
    }
    if (!isRec(value)) {
      out.skipped++;
      continue;
    }
    const from = out.items.length;
    read(value, offset, out, toolNames);
    for (let i = from; i < out.items.length; i++) out.items[i]!.offset = offset;
  }
  return out;
}

/** Messages of a whole-file transcript (Gemini's JSON document before 0.39, Cursor's plain text). */
export function parseWhole(agent: AgentName, text: string): ParsedChunk {
  const out: ParsedChunk = { items: [], lines: 0, skipped: 0 };
  if (agent === 'cursor') {
    cursorText(text, out);
    return out;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    out.lines = 1;
    out.skipped = 1;
    return out;
  }
  if (!isRec(doc)) {
    out.lines = 1;
    out.skipped = 1;
    return out;
  }
  if (typeof doc.sessionId === 'string') out.agentSessionId = doc.sessionId;
  for (const m of Array.isArray(doc.messages) ? doc.messages : []) {
    out.lines++;
    if (!isRec(m)) {
      out.skipped++;
      continue;
    }
    geminiMessage(m, out);
  }
  return out;
}
