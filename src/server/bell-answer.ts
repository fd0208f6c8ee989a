/**
 * The doorbell's answers (doorbell.ts carries the questions): an agent's payload judged as
 * its hook route judges it, a git hook's request handled as POST /v1/hooks/<name> handles it.
 * Loaded with the services, when the first question comes to a daemon that is asleep.
 */
import { attemptOf, procStat } from '../githooks/attempt.js';
import { hookRequestSchema } from '../protocol/hooks.js';
import { bodyTooLargeMessage, MAX_BODY_BYTES } from '../protocol/limits.js';
import type { BellAnswer, BellAnswerer, BellQuestion } from './doorbell.js';
import { shAnswer } from './routes/agents.js';
import { hookFailure } from './routes/hooks.js';
import type { Services } from './services/index.js';

/** How often a git hook in flight is checked for being alive (its work is abandoned when it is gone). */
const ALIVE_CHECK_MS = 200;

export function bellAnswerer(services: Services): BellAnswerer {
  return (q) => answer(services, q);
}

async function answer(services: Services, q: BellQuestion): Promise<BellAnswer> {
  if (q.size > MAX_BODY_BYTES) return { code: q.kind === 'git' ? '1' : 'u', text: `${bodyTooLargeMessage(q.size)}\n` };
  if (q.kind !== 'git') {
    let payload: unknown;
    try {
      payload = JSON.parse(q.body);
    } catch {
      return { code: 'u', text: `the ${q.kind} hook payload is not JSON\n` };
    }
    return shAnswer(services, q.kind, payload);
  }
  const abort = new AbortController();
  const alive = q.quiet
    ? undefined
    : setInterval(() => {
        if (procStat(q.pid)?.start !== q.start) abort.abort();
      }, ALIVE_CHECK_MS);
  let attempt: string | undefined;
  try {
    const parsed = hookRequestSchema.parse(JSON.parse(q.body));
    // The git command the hook runs in, read here from the hook's pid (the sh does not walk /proc for it).
    if (!parsed.attempt && !q.quiet) {
      const found = attemptOf(q.pid);
      if (found) parsed.attempt = found;
    }
    attempt = parsed.attempt;
    const result = await services.hooks.handle(q.name, q.sandboxed ? { ...parsed, sandboxed: true } : parsed, () => undefined, abort.signal);
    const passed = q.name === 'pre-commit' && !parsed.phase && result.exitCode === 0;
    return { code: String(result.exitCode), text: result.message ? `${result.message}\n` : '', attempt, passed };
  } catch (err) {
    const failed = hookFailure(services, q.name, err);
    return { code: String(failed.exitCode), text: `${failed.message}\n`, attempt };
  } finally {
    clearInterval(alive);
  }
}
