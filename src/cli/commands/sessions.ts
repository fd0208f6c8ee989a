/** `hermesd sessions list|show|search`: SessionDB through the daemon's API. */
import type { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import type { Message, SearchResult, Session } from '../../sessions/db.js';
import { action, color, daemon, globals, output } from '../runtime.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--limit must be a positive integer, not "${value}".`);
  return n;
}

function qs(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === false) continue;
    q.set(k, v === true ? '1' : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** `2026-11-29T22:15:00.123Z` → `2026-11-29 22:15` (UTC, like the stored value). */
const when = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 16) : '');

function humanList(sessions: Session[], all: boolean): string {
  if (sessions.length === 0) return all ? 'no sessions recorded yet' : 'no sessions in this repository (use --all for every repository)';
  return sessions
    .map((s) => {
      const state = s.endedAt ? (s.endReason ?? 'ended') : 'open';
      const cols = [color.bold(s.id), s.source.padEnd(6), when(s.startedAt), `${String(s.messageCount).padStart(4)} msgs`, state.padEnd(9), s.title ?? ''];
      if (all) cols.push(color.dim(s.repo ?? '(no repository)'));
      return cols.join('  ').trimEnd();
    })
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

function humanShow(session: Session, messages: Message[]): string {
  const head = [
    `${color.bold('session')} ${session.id}`,
    `repo     ${session.repo ?? '(none)'}`,
    `source   ${session.source}${session.model ? `, model ${session.model}` : ''}`,
    `started  ${session.startedAt}` + (session.endedAt ? `, ended ${session.endedAt} (${session.endReason ?? 'ended'})` : ', open'),
  ];
  if (session.parentSessionId) head.push(`parent   ${session.parentSessionId}`);
  if (session.title) head.push(`title    ${session.title}`);
  head.push(`counts   ${session.messageCount} messages, ${session.toolCallCount} tool calls, ${session.inputTokens} in / ${session.outputTokens} out tokens`);
  const body = messages.map((m) => {
    const label = `#${m.id} ${m.role}${m.toolName ? ` (${m.toolName})` : ''}`;
    const lines = [color.bold(label) + color.dim(`  ${m.createdAt}`)];
    if (m.content) lines.push(indent(m.content));
    for (const c of m.toolCalls ?? []) lines.push(indent(color.yellow(`→ ${c.function.name}(${c.function.arguments})`)));
    if (m.apiContent !== undefined) lines.push(indent(color.dim(`[sent to the model as ${m.apiContent.length} characters; see --json apiContent]`)));
    return lines.join('\n');
  });
  return [...head, '', ...body].join('\n');
}

function humanSearch(r: SearchResult, all: boolean): string {
  if (r.results.length === 0) return all ? 'no matches' : 'no matches in this repository (use --all for every repository)';
  return r.results
    .map((h) => {
      const head = `${color.bold(h.sessionId)}  #${h.messageId}  ${h.role}${h.toolName ? ` (${h.toolName})` : ''}  ${color.dim(when(h.createdAt))}`;
      return `${head}${all && h.repo ? color.dim(`  ${h.repo}`) : ''}\n    ${h.snippet}`;
    })
    .join('\n');
}

export function register(program: Command): void {
  const sessions = program.command('sessions').description('the session log (SessionDB): list, show and search past sessions');

  sessions
    .command('list')
    .description("recent sessions of this repository, newest first (--all: every repository's)")
    .option('--all', 'every repository, not only this one')
    .option('--source <source>', 'only sessions from this source (cli, hook, socket, …)')
    .option('--limit <n>', 'at most n sessions (default 20)', positiveInt)
    .action(
      action(async (opts: { all?: boolean; source?: string; limit?: number }, cmd: Command) => {
        const client = await daemon();
        const r = await client.call<{ sessions: Session[] }>('GET', `/v1/sessions${qs({ all: opts.all, source: opts.source, limit: opts.limit })}`);
        output(globals(cmd), r, () => humanList(r.sessions, Boolean(opts.all)));
      }),
    );

  sessions
    .command('show <id>')
    .description("a session's metadata and every message")
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const client = await daemon();
        const r = await client.call<{ session: Session; messages: Message[] }>('GET', `/v1/sessions/${encodeURIComponent(id)}`);
        output(globals(cmd), r, () => humanShow(r.session, r.messages));
      }),
    );

  sessions
    .command('search <query...>')
    .description('full-text search over stored messages (any text is safe: quotes, operators and punctuation are neutralised)')
    .option('--all', 'every repository, not only this one')
    .option('--role <role>', 'only messages of this role (user, assistant, tool, system)')
    .option('--source <source>', 'only sessions from this source')
    .option('--limit <n>', 'at most n results (default 20)', positiveInt)
    .action(
      action(async (words: string[], opts: { all?: boolean; role?: string; source?: string; limit?: number }, cmd: Command) => {
        if (!words.join(' ').trim()) throw new UsageError('Give the words to search for, e.g. hermesd sessions search "failed test"');
        const client = await daemon();
        const r = await client.call<SearchResult>(
          'GET',
          `/v1/sessions/search${qs({ q: words.join(' '), all: opts.all, role: opts.role, source: opts.source, limit: opts.limit })}`,
        );
        output(globals(cmd), r, () => humanSearch(r, Boolean(opts.all)));
      }),
    );
}
