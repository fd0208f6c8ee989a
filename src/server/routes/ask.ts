/**
 * The daemon's side of the protocol (protocol.ts): POST /v1/ask. Served from the daemon's
 * first moment, before its services load, so the first line goes out at once and a cold
 * daemon's question waits for the services with a sign of life every HEARTBEAT_MS. A git
 * hook's question is handled as POST /v1/hooks/<name> handles it; another agent's payload as
 * its hook route judges it. Whatever fails on the way, the answer ends with a verdict: a
 * question this daemon cannot judge is refused where it blocks (a pre-tool call, unless
 * agents.onUnavailable is "allow"; a commit), never read as "allowed". What judges is loaded
 * with the first question (the services): this module is in the daemon's first moment.
 */
import type { ServerResponse } from 'node:http';
import { errorToWire, UsageError } from '../../errors/index.js';
import type { HookRequest } from '../../protocol/hooks.js';
import { bodyTooLargeMessage, MAX_BODY_BYTES } from '../../protocol/limits.js';
import type { DaemonContext } from '../daemon-context.js';
import { defineRoute, endAnswer, type Route } from '../route.js';
import type { Services } from '../services/index.js';
import { AGENT_NAMES, PRE_TOOL_EVENTS } from '../../protocol/agent-hooks.js';
import { ASK_PATH, HEARTBEAT_MS, PROTOCOL, type AskQuery } from '../../protocol/ask.js';
import { denyText, isAgentName } from '../../other-agents/hook-table.js';

/** `unread`: what to do when the answer did not reach its client (a git hook's notices wait for the next hook). */
type Answer = { code: number; stdout?: string; stderr?: string; unread?: () => void };

/**
 * POST /v1/ask over `services` (composed on first use, their code loaded as questions need it:
 * Services.loaded()); `sandboxed`: the agent socket, whose
 * every question comes from a command in hermesd's sandbox (git hooks only).
 */
export function askRoute(ctx: DaemonContext, services: () => Promise<Services>, opts: { sandboxed: boolean }): Route {
  return defineRoute({
    method: 'POST',
    path: ASK_PATH,
    rawBody: true,
    handler: async ({ query, body, res, signal }) => {
      const q = parseAskQuery(query);
      if (typeof q === 'string') throw new UsageError(`Not a question of protocol ${PROTOCOL}: ${q}.`);
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.write(helloLine(ctx.version, process.pid, q.q));
      if (q.p !== PROTOCOL) {
        mismatch(ctx, q);
        res.end();
        return undefined;
      }
      const write = (s: string) => {
        if (!res.writableEnded && !res.destroyed) res.write(s);
      };
      const beat = setInterval(() => write('.\n'), HEARTBEAT_MS);
      let answer: Answer;
      try {
        answer = await answerOf(await services(), {
          q,
          body: body as Buffer,
          sandboxed: opts.sandboxed,
          progress: (line) => write(textLines('e', line)),
          signal,
        });
      } catch (err) {
        answer = await cannotJudge(ctx, q, err, await services().catch(() => undefined));
      } finally {
        clearInterval(beat);
      }
      if (!(await end(res, answer))) answer.unread?.();
      return undefined;
    },
  });
}

/** Resolves whether the answer reached its client. */
function end(res: ServerResponse, a: Answer): Promise<boolean> {
  return endAnswer(res, textLines('o', a.stdout ?? '') + textLines('e', a.stderr ?? '') + verdictLine(a.code));
}

/** A client of another protocol belongs to another install: this daemon makes way for it once it has nothing else to do. */
function mismatch(ctx: DaemonContext, q: AskQuery): void {
  ctx.log.warn('a hook of another protocol asked; stopping so that its own version starts', { protocol: q.p, version: q.v, ours: PROTOCOL });
  const stop = setInterval(() => {
    // This request is one of the busy ones until its answer ends.
    if (ctx.busy > 0) return;
    clearInterval(stop);
    ctx.requestShutdown(`a hook of protocol ${q.p} (hermesd ${q.v || '?'}) asked`);
  }, 50);
  stop.unref();
}

/** One question as the route received it: its query, its body, the socket it came on, where progress goes, and its connection's signal. */
type Asked = { q: AskQuery; body: Buffer; sandboxed: boolean; progress: (line: string) => void; signal: AbortSignal };

async function answerOf(services: Services, asked: Asked): Promise<Answer> {
  const { q, body, sandboxed } = asked;
  if (body.length > MAX_BODY_BYTES) throw new UsageError(bodyTooLargeMessage(body.length));
  // A git hook's question needs every service; another agent's, the judge first (agents.ts loads the rest for the events that need it).
  if (q.k === 'git') return gitAnswer(await services.loaded(), asked);
  if (sandboxed) throw new UsageError('A sandboxed command asks about its git hooks only.');
  if (!isAgentName(q.k)) throw new UsageError(`Unknown kind of question "${q.k}": git, or one of ${AGENT_NAMES.join(', ')}.`);
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw new UsageError(`The ${q.k} hook's payload is not JSON.`);
  }
  const { answer } = await services.agents.handle(q.k, payload, services.config.forJudging());
  return { code: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
}

async function gitAnswer(services: Services, { q, body, sandboxed, progress, signal }: Asked): Promise<Answer> {
  const { hookRequestSchema } = await import('../../protocol/hooks.js');
  let req: HookRequest;
  try {
    req = hookRequestSchema.parse(JSON.parse(body.toString('utf8') || '{}'));
  } catch (err) {
    throw new UsageError(`The git hook's question is not what protocol ${PROTOCOL} says: ${err instanceof Error ? err.message : String(err)}`);
  }
  // The log says which client asked: hermesd's (it names its version), or curl.
  req.via = q.v ? 'client' : 'curl';
  if (sandboxed) req.sandboxed = true;
  const result = await services.hooks.ask(q.n, req, { pid: q.pid }, progress, signal, services.config.forJudging());
  return { code: result.exitCode, stderr: result.message, unread: () => services.hooks.unread(result) };
}

/** A question the daemon could not judge: refused where it blocks, said in words everywhere. */
async function cannotJudge(ctx: DaemonContext, q: AskQuery, err: unknown, services: Services | undefined): Promise<Answer> {
  const { status, wire } = errorToWire(err);
  if (status >= 500) ctx.log.error('question not judged', { kind: q.k, name: q.n, error: String((err as Error)?.stack ?? err) });
  const why = wire.message.replace(/\.$/, '');
  if (q.k === 'git') {
    const blocks = q.n === 'pre-commit' || q.n === 'commit-msg';
    return { code: blocks ? (wire.code === 'config-error' || status === 400 ? 2 : 1) : 0, stderr: `hermesd: the ${q.n} hook could not judge: ${why}` };
  }
  if (!PRE_TOOL_EVENTS.has(q.n)) return { code: 0, stderr: `hermesd: ${why}` };
  let allow = false;
  try {
    allow = services?.config.forJudging().config.agents.onUnavailable === 'allow';
  } catch {
    // no config to read: refused
  }
  if (allow) return { code: 0, stderr: `hermesd: this tool call could not be judged (${why}); it was NOT checked because agents.onUnavailable is "allow"` };
  const message = `hermesd: this tool call could not be judged (${why}), so it is refused (agents.onUnavailable is "block")`;
  // The agent's own structured refusal (agent-hooks.ts), as the daemon refuses any call; exit 2 for a kind it does not know.
  if (!isAgentName(q.k)) return { code: 2, stderr: message };
  return { code: 0, stdout: denyText(q.k, q.n, message), stderr: '' };
}

// The protocol's lines, as the daemon reads and writes them (their shapes: protocol/ask.ts).

/**
 * The query string of a question, or what is wrong with it. Read by hand, not by a schema: the
 * daemon answers hook questions before anything else loads (the first answer of a cold daemon).
 */
function parseAskQuery(query: URLSearchParams): AskQuery | string {
  const get = (k: string, re: RegExp): string | undefined => {
    const v = query.get(k);
    return v !== null && re.test(v) ? v : undefined;
  };
  const num = (k: string): number | undefined => {
    const v = get(k, /^\d{1,10}$/);
    return v === undefined ? undefined : Number(v);
  };
  const p = num('p');
  const q = get('q', /^[A-Za-z0-9._-]{1,64}$/);
  const k = get('k', /^[a-z]{1,16}$/);
  const n = get('n', /^[A-Za-z][A-Za-z-]{0,39}$/);
  if (p === undefined) return 'p: a protocol number';
  if (q === undefined) return 'q: a question id (letters, digits, ".", "_", "-"; at most 64)';
  if (k === undefined) return 'k: git or an agent';
  if (n === undefined) return 'n: a hook or an event';
  return { p, v: (query.get('v') ?? '').slice(0, 64), q, k, n, pid: num('pid'), ppid: num('ppid'), bound: num('bound') };
}

/** The answer's first line. */
function helloLine(version: string, pid: number, question: string): string {
  return `hermesd ${PROTOCOL} ${version} ${pid} ${question}\n`;
}

/** `text` as answer lines for one stream (`e` stderr, `o` stdout); nothing for empty text. */
function textLines(stream: 'e' | 'o', text: string): string {
  if (!text) return '';
  return (
    text
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => `${stream} ${l}`)
      .join('\n') + '\n'
  );
}

/** The verdict line. */
function verdictLine(code: number): string {
  return `= ${code}\n`;
}
