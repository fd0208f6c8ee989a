/**
 * Daemon glue of the agent: `tasksOf(ctx)` is this daemon's TaskRunner, whose tasks run the
 * loop with the daemon's services — the config in force when the task starts, the prompt
 * builder, SessionDB, the memory and skill stores, and the rule engine for protected paths.
 * The hook subsystem runs fix tasks in-process with `tasksOf(ctx).run({task, source: 'hook', turnContext, onEvent})`.
 */
import { configOf } from './config.js';
import type { HermesConfig } from '../../config/schema.js';
import { promptOf } from './context.js';
import type { DaemonContext } from '../context.js';
import { guardPortOf, secretValuesOf } from './guard.js';
import { memoryOf } from './memory.js';
import { sessionsOf } from './sessions.js';
import { skillsOf } from './skills.js';
import { runTask, type AgentDeps } from '../../agent/loop.js';
import { createModelClient, modelSettings, type ModelClient } from '../../agent/model.js';
import type { AgentServices } from '../../agent/services.js';
import { agentServicesOver } from '../../agent/standalone.js';
import { recallFrom, sessionLog } from '../../agent/session-log.js';
import { TaskRunner, type TaskSpec } from '../../agent/tasks.js';
import { TOOLS } from '../../agent/tools/index.js';

/** How long shutdown waits for cancelled tasks to record their end in SessionDB. */
export const TASK_SHUTDOWN_GRACE_MS = 2_000;

/** The services the tools of one task use, with the config in force when it started. */
export function agentServicesOf(ctx: DaemonContext, config: HermesConfig): AgentServices {
  const secrets = secretValuesOf(ctx);
  // A task starts with the secret files as they are now (the guard refreshes before each command too).
  secrets.refresh();
  return {
    ...agentServicesOver(config, { db: sessionsOf(ctx), memory: memoryOf(ctx), skills: skillsOf(ctx) }),
    guard: guardPortOf(ctx),
    redactValues: (text) => secrets.redact(text).text,
  };
}

const modelCache = new WeakMap<DaemonContext, { key: string; client: ModelClient }>();

function modelOf(ctx: DaemonContext, config: HermesConfig): ModelClient {
  const settings = modelSettings(config.model, ctx.env);
  const key = JSON.stringify(settings);
  const hit = modelCache.get(ctx);
  if (hit && hit.key === key) return hit.client;
  const client = createModelClient(settings);
  modelCache.set(ctx, { key, client });
  return client;
}

/** Everything one task needs, resolved when it starts (a bad config fails the task before any model call). */
export async function agentDepsOf(ctx: DaemonContext): Promise<AgentDeps> {
  const config = configOf(ctx);
  const model = modelOf(ctx, config);
  const services = agentServicesOf(ctx, config);
  const db = services.sessions;
  return {
    model,
    tools: TOOLS,
    log: sessionLog(db, ctx.root),
    buildPrompt: ({ callerSystem, toolNames }) => promptOf(ctx).buildSessionPrompt({ callerSystem, toolNames }),
    recall: recallFrom(db, ctx.root),
    toolContext: (sessionId, signal) => ({ root: ctx.root, sessionId, signal, config, services }),
    maxTurns: model.settings.maxTurns,
  };
}

export function tasksOf(ctx: DaemonContext): TaskRunner {
  return ctx.service('tasks', () => {
    // Closers run last-registered first: open SessionDB before registering ours, so shutdown
    // cancels the tasks (and lets them record their end) before the database closes.
    sessionsOf(ctx);
    const runner = new TaskRunner(async (spec) => {
      const deps = await agentDepsOf(ctx);
      const result = await runTask(deps, {
        task: spec.task,
        system: spec.system,
        continueFrom: spec.sessionId,
        source: spec.source,
        turnContext: spec.turnContext,
        signal: spec.signal,
        onEvent: spec.onEvent,
      });
      ctx.log.info('task ended', { sessionId: result.sessionId, source: spec.source, status: result.status, turns: result.turns, ...(result.error ? { error: result.error.message } : {}) });
      return result;
    });
    ctx.onClose(() => runner.close(TASK_SHUTDOWN_GRACE_MS));
    ctx.statusExtras.set('tasks', () => runner.counts());
    return runner;
  });
}

export type { TaskSpec };
