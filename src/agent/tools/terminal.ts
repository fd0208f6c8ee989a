import { z } from 'zod';
import { runCommand } from '../../process/run.js';
import { describeRefusedWrites } from '../../guard/refused-writes.js';
import { prepareTerminalGuard, rulesBroken, withRepoLock, type GuardReport } from '../../guard/terminal-guard.js';
import { defineTool } from './types.js';

/** Default time a command may run (s): builds and test suites, not servers. */
export const TERMINAL_DEFAULT_TIMEOUT_S = 120;
/** Upper bound the model may ask for (s). */
export const TERMINAL_MAX_TIMEOUT_S = 600;
/** Output kept per command (chars): head and tail, the middle elided, as a person would skim a log. */
export const TERMINAL_OUTPUT_MAX_CHARS = 30_000;
/** Head share of the kept output; the tail (errors, summaries) gets the rest. */
const HEAD_SHARE = 0.4;
/** Grace between SIGTERM and SIGKILL of the process group (ms). */
const KILL_GRACE_MS = 1_000;
/** After the shell exits, how long its pipes may stay open (background children) before the group is killed. */
const EXIT_DRAIN_MS = 200;

export type ShellResult = {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
};

/**
 * Runs `sh -c command` in `cwd` as its own process group, so a timeout or a cancel kills the
 * whole tree (a test runner's workers too), never leaving orphans behind the daemon. Output
 * beyond `maxChars` keeps its head and tail, the middle elided, as a person would skim a log.
 */
export async function runShell(
  command: string,
  opts: {
    cwd: string;
    timeoutMs: number;
    signal?: AbortSignal;
    env?: NodeJS.ProcessEnv;
    maxChars?: number;
    wrap?: (command: string) => { file: string; args: string[] };
  },
): Promise<ShellResult> {
  const max = opts.maxChars ?? TERMINAL_OUTPUT_MAX_CHARS;
  const headMax = Math.floor(max * HEAD_SHARE);
  // `wrap`: the guard's sandbox (bwrap … sh -c command); without it a plain sh -c.
  const wrap = opts.wrap;
  const r = await runCommand(command, {
    cwd: opts.cwd,
    env: opts.env,
    wrap: wrap ? (c) => wrap(c) : undefined,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    killGraceMs: KILL_GRACE_MS,
    drainMs: EXIT_DRAIN_MS,
    output: { headChars: headMax, tailChars: max },
  });
  const { head, total } = r.output;
  const tail = r.output.tail + (r.error ? `\n${r.error.message}` : '');
  let text = head + tail;
  let truncated = false;
  if (total > max) {
    const kept = tail.slice(-(max - head.length));
    text = `${head}\n… [${total - head.length - kept.length} chars of output omitted] …\n${kept}`;
    truncated = true;
  }
  return { exitCode: r.exitCode, signal: r.signal, output: text, truncated, timedOut: r.timedOut, cancelled: r.cancelled, durationMs: r.durationMs };
}

export const terminal = defineTool({
  name: 'terminal',
  description:
    'Run a shell command (sh -c) in the repository root and return its exit code and combined ' +
    `stdout/stderr. Default timeout ${TERMINAL_DEFAULT_TIMEOUT_S} s (max ${TERMINAL_MAX_TIMEOUT_S}); the whole process group is ` +
    `killed on timeout. Output beyond ${TERMINAL_OUTPUT_MAX_CHARS} chars keeps its head and tail. No stdin: do not start ` +
    'interactive programs or servers that never exit.',
  parameters: z.strictObject({
    command: z.string().min(1).describe('the shell command line'),
    timeout: z.number().int().min(1).max(TERMINAL_MAX_TIMEOUT_S).optional().describe('seconds before the command is killed'),
  }),
  execute(args, ctx) {
    // hermesd guard: the command runs in the sandbox; protected files restored, git policy
    // and rules enforced on what it did, secrets redacted. One guarded command per repository at a time.
    return withRepoLock(ctx.root, async () => {
      const guard = await prepareTerminalGuard(ctx.root, ctx.config, { port: ctx.services.guard, sessionId: ctx.sessionId });
      let r: ShellResult;
      let report: GuardReport;
      try {
        r = await runShell(args.command, {
          cwd: ctx.root,
          timeoutMs: (args.timeout ?? TERMINAL_DEFAULT_TIMEOUT_S) * 1000,
          signal: ctx.signal,
          env: guard.env,
          wrap: guard.command,
        });
      } finally {
        report = await guard.finish();
      }
      // A write the sandbox refused says only "Read-only file system": the rule that protects the path goes beside it.
      const refused = describeRefusedWrites(guard.refusedWrites(r.output));
      return resultOf(args, r, report, guard.redact(r.output).text, guard.warning, refused);
    });
  },
});

function resultOf(args: { timeout?: number }, r: ShellResult, report: GuardReport, output: string, warning: string | undefined, refused: string) {
  return {
    exit_code: r.exitCode,
    output,
    ...(refused ? { refused_writes: refused } : {}),
    ...(warning ? { sandbox: warning } : {}),
    ...(report.notice ? { guard: report.notice, rules_broken: rulesBroken(report) } : {}),
    ...(r.truncated ? { truncated: true } : {}),
    ...(r.timedOut ? { timed_out: true, error: `The command was killed after ${args.timeout ?? TERMINAL_DEFAULT_TIMEOUT_S} s (timeout).` } : {}),
    ...(r.cancelled ? { cancelled: true } : {}),
    ...(r.signal && !r.timedOut && !r.cancelled ? { signal: r.signal } : {}),
    duration_ms: r.durationMs,
  };
}
