/**
 * `hermesd run "<task>"`: runs an agent task through the daemon (POST /v1/tasks). Progress
 * goes to stderr — with a streaming model (model.stream, the default) the text as the model
 * types it — and the answer to stdout; `--json` prints `{sessionId, status, answer}` and
 * nothing else.
 * Exit 1 unless the task completed. Ctrl-C asks the daemon to cancel the task and waits
 * for its result; a second Ctrl-C drops the connection (which cancels it too) and exits.
 */
import type { Command } from 'commander';
import { action, color, daemon, globals } from '../runtime.js';

type RunOptions = { system?: string; continue?: string };
type Result = {
  taskId?: string;
  sessionId: string | null;
  status: string;
  answer: string;
  turns?: number;
  error?: { code: string; message: string };
  refused?: Array<{ tool: string; rule: string; path?: string }>;
};

/** Exit code of a second Ctrl-C (128 + SIGINT), as shells report an interrupted command. */
const EXIT_INTERRUPTED = 130;

function argsText(args: unknown): string {
  if (typeof args === 'string') return args;
  const text = Object.entries((args ?? {}) as Record<string, unknown>)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`)
    .join(' ');
  return text.length > 160 ? text.slice(0, 160) + '…' : text;
}

export function register(program: Command): void {
  program
    .command('run <task>')
    .description('run an agent task in this repository through the daemon, streaming progress; prints the final answer')
    .option('--system <text>', 'an extra system message for this task (joins the context tier)')
    .option('--continue <sessionId>', 'continue an earlier session: a new session that replays it')
    .action(
      action(async (task: string, opts: RunOptions, cmd: Command) => {
        const json = Boolean(globals(cmd).json);
        const client = await daemon({ modelWarnings: true });
        const abort = new AbortController();
        let taskId: string | undefined;
        let interrupts = 0;
        let pendingAssistant = '';
        // Streamed text is on stderr already; `midLine` says the cursor is after it, so the next line starts fresh.
        let streamedTurn = false;
        let midLine = false;
        const endStream = () => {
          if (midLine) process.stderr.write('\n');
          midLine = false;
        };
        const progress = (line: string) => {
          if (json) return;
          endStream();
          process.stderr.write(line + '\n');
        };
        const onSigint = () => {
          interrupts++;
          if (interrupts === 1 && taskId) {
            progress(color.yellow('cancelling… (Ctrl-C again to stop waiting)'));
            client.call('POST', `/v1/tasks/${encodeURIComponent(taskId)}/cancel`).catch(() => abort.abort());
          } else {
            abort.abort();
            process.exitCode = EXIT_INTERRUPTED;
          }
        };
        process.on('SIGINT', onSigint);
        try {
          const body = {
            task,
            source: 'cli',
            ...(opts.system !== undefined ? { system: opts.system } : {}),
            ...(opts.continue ? { sessionId: opts.continue } : {}),
          };
          let result: Result;
          try {
            result = await client.stream<Result>(
              'POST',
              '/v1/tasks',
              body,
              (e) => {
                switch (e.type) {
                  case 'started':
                  case 'queued':
                    taskId = String(e.taskId);
                    if (e.type === 'queued') progress(color.dim(`queued behind other tasks (position ${e.position})`));
                    break;
                  case 'session':
                    taskId = String(e.taskId ?? taskId);
                    progress(color.dim(`session ${e.sessionId}${e.parentSessionId ? ` (continues ${e.parentSessionId})` : ''}`));
                    break;
                  case 'text': {
                    if (json) break;
                    const delta = String(e.delta ?? '');
                    if (!delta) break;
                    process.stderr.write(color.dim(delta));
                    midLine = !delta.endsWith('\n');
                    streamedTurn = true;
                    break;
                  }
                  case 'assistant':
                    // The last assistant text is the answer (stdout); earlier ones are narration,
                    // shown on stderr unless the stream showed them already.
                    pendingAssistant = streamedTurn ? '' : String(e.text ?? '');
                    streamedTurn = false;
                    endStream();
                    break;
                  case 'tool_call':
                    if (pendingAssistant.trim()) progress(color.dim(pendingAssistant.trim()));
                    pendingAssistant = '';
                    progress(`${color.bold('→')} ${e.name} ${color.dim(argsText(e.args))}`);
                    break;
                  case 'tool_result':
                    progress(`  ${e.ok ? color.green('✓') : color.red('✗')} ${e.summary}`);
                    break;
                  default:
                    break;
                }
              },
              { signal: abort.signal },
            );
          } catch (err) {
            if (abort.signal.aborted) {
              process.stderr.write('hermesd: stopped waiting; the daemon cancels the task when its client goes away.\n');
              process.exitCode = EXIT_INTERRUPTED;
              return;
            }
            throw err;
          } finally {
            if (!json) endStream();
          }
          if (json) {
            const out = {
              sessionId: result.sessionId,
              status: result.status,
              answer: result.answer,
              ...(result.taskId ? { taskId: result.taskId } : {}),
              ...(result.turns !== undefined ? { turns: result.turns } : {}),
              ...(result.error ? { error: result.error } : {}),
              ...(result.refused ? { refused: result.refused } : {}),
            };
            process.stdout.write(JSON.stringify(out, null, 2) + '\n');
          } else {
            if (result.answer) process.stdout.write(result.answer.endsWith('\n') ? result.answer : result.answer + '\n');
            if (result.refused?.length) {
              // The model was told and the task went on; the exit code is the task's, the refusals are said here.
              const each = result.refused.map((r) => `${r.tool}${r.path ? ` ${r.path}` : ''} (rule ${r.rule})`);
              process.stderr.write(
                `hermesd: ${result.refused.length === 1 ? '1 tool call was' : `${result.refused.length} tool calls were`} refused by repository rules: ${each.join(', ')}\n`,
              );
            }
            if (result.status !== 'completed') {
              const why =
                result.error?.message ?? (result.status === 'max_turns' ? 'the task used its whole turn budget (model.maxTurns) without finishing.' : '');
              process.stderr.write(
                `hermesd: task ${result.status}${why ? `: ${why}` : ''}${result.sessionId ? ` (session ${result.sessionId}; hermesd sessions show ${result.sessionId})` : ''}\n`,
              );
            }
          }
          if (result.status !== 'completed' && process.exitCode !== EXIT_INTERRUPTED) process.exitCode = 1;
        } finally {
          process.off('SIGINT', onSigint);
        }
      }),
    );
}
