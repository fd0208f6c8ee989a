/**
 * The one protocol every hook question travels in: a git hook's, another agent's, a
 * sandboxed command's commit. The client (hook-client/client.c, or curl.sh where it could not
 * be built) asks; the daemon answers (server/routes/ask.ts, which reads the query and writes
 * the lines). What both sides agree on is here: the numbers, the route and the shapes below.
 *
 * Request: one HTTP/1.0 request on the daemon's Unix socket (one connection per question):
 *
 *   POST /v1/ask?p=<protocol>&v=<version>&q=<question id>&k=<kind>&n=<name>&pid=<client pid>&ppid=…&bound=<ms>
 *   body: a git hook's JSON (GitQuestion), or the agent's hook payload as the agent wrote it
 *
 * `k` is `git` or an agent (claude, codex, cursor, gemini); `n` is the git hook (or `recover`:
 * put back the work of a commit whose daemon died mid-hook) or the agent's event.
 *
 * Answer: text lines, flushed as they come, the connection closed at the end:
 *
 *   hermesd <protocol> <daemon version> <daemon pid> <question id>    at once, before any work
 *   .                                                                  a sign of life (every 500 ms)
 *   e <text>                                                           a line for stderr, shown as it comes
 *   o <text>                                                           a line for stdout (an agent's structured answer)
 *   = <exit code>                                                      the verdict: the last line
 *
 * The first line's format never changes: a client of any version reads the daemon's protocol
 * there. A daemon asked in another protocol answers that line alone and stops once idle; the
 * client then starts the version it belongs to. An answer without its `=` line was cut off.
 * The question id in the first line binds the answer to its question.
 */
/** This protocol's number: a change old clients cannot follow takes the next one (1 was the doorbell's). */
export const PROTOCOL = 2;

/** The route of the question. */
export const ASK_PATH = '/v1/ask';

/** A sign of life at least this often while the daemon works on a question (the client's silence bound is ≥ 1 s). */
export const HEARTBEAT_MS = 500;

/** What a question says of itself (its query string), as the daemon reads it. */
export type AskQuery = { p: number; v: string; q: string; k: string; n: string; pid?: number; ppid?: number; bound?: number };
