/**
 * The daemon's agent: one TaskRunner whose tasks run the loop with the daemon's services —
 * the config in force when the task starts, the prompt builder, SessionDB, the memory and
 * skill stores, and the rule engine for protected paths. The hook service runs fix tasks
 * in-process with `tasks.run({task, source: 'hook', turnContext, onEvent})`.
 */
import type { HermesConfig } from '../../config/schema.js';
import type { Memories } from '../../memory/memories.js';
import type { SessionDB } from '../../sessions/db.js';
import type { SkillStore } from '../../skills/store.js';
import { runTask, type AgentDeps } from '../../agent/loop.js';
import { createModelClient, modelSettings, type ModelClient } from '../../model/client.js';
import type { AgentServices } from '../../agent/services.js';
import { agentServicesOver } from '../../agent/standalone.js';
import { sessionLog } from '../../agent/session-log.js';
import { recallFrom } from '../../sessions/recall.js';
import { TaskRunner } from '../../agent/task-runner.js';
import { TOOLS } from '../../agent/tools/index.js';
import type { DaemonContext } from '../daemon-context.js';
import type { Built } from './built.js';
import type { ConfigInForce } from './config-in-force.js';
import type { PromptService } from './prompt.js';
import type { GuardService } from './guard.js';
import type { PlacementService } from './placement.js';

/** How long shutdown waits for cancelled tasks to record their end in SessionDB. */
export const TASK_SHUTDOWN_GRACE_MS = 2_000;

export type AgentStores = { sessions: SessionDB; memory: Memories; skills: SkillStore; guard: GuardService; placement: PlacementService };

/** The services the tools of one task use, with the config in force when it started. */
export function agentServicesFor(stores: AgentStores, config: HermesConfig): AgentServices {
  const secrets = stores.guard.secrets;
  // A task starts with the secret files as they are now (the guard refreshes before each command too).
  secrets.refresh();
  return {
    ...agentServicesOver(config, { db: stores.sessions, memory: stores.memory, skills: stores.skills }),
    guard: stores.guard.port,
    redactValues: (text) => secrets.redact(text).text,
    placement: (sentence, opts) => stores.placement.place(sentence, { sessionId: opts.sessionId, signal: opts.signal }),
  };
}

/** The task runner; its stores are resolved when a task starts, so a daemon that runs none opens none. */
export function createTaskRunner(
  ctx: DaemonContext,
  deps: { config: ConfigInForce; prompt: () => PromptService; stores: () => AgentStores },
): Built<TaskRunner> {
  let model: { key: string; client: ModelClient } | undefined;
  const modelFor = (config: HermesConfig): ModelClient => {
    const settings = modelSettings(config.model, ctx.env);
    const key = JSON.stringify(settings);
    if (model?.key !== key) model = { key, client: createModelClient(settings) };
    return model.client;
  };
  // Everything one task needs, resolved when it starts (a bad config fails the task before any model call).
  const agentDeps = (): AgentDeps => {
    const config = deps.config.get();
    const client = modelFor(config);
    const services = agentServicesFor(deps.stores(), config);
    const db = services.sessions;
    return {
      model: client,
      tools: TOOLS,
      log: sessionLog(db, ctx.root),
      buildPrompt: ({ callerSystem, toolNames }) => deps.prompt().buildSessionPrompt({ callerSystem, toolNames }),
      recall: recallFrom(db, ctx.root),
      toolContext: (sessionId, signal) => ({ root: ctx.root, sessionId, signal, config, services }),
      maxTurns: client.settings.maxTurns,
    };
  };
  const runner = new TaskRunner(async (spec) => {
    ctx.events.emit('task-started');
    let result: Awaited<ReturnType<typeof runTask>> | undefined;
    try {
      result = await runTask(agentDeps(), {
        task: spec.task,
        system: spec.system,
        continueFrom: spec.sessionId,
        source: spec.source,
        turnContext: spec.turnContext,
        signal: spec.signal,
        onEvent: spec.onEvent,
      });
    } finally {
      // After the answer is settled: the post-task review is queued, never awaited (src/server/services/placement.ts).
      ctx.events.emit('task-ended', { sessionId: result?.sessionId ?? null, source: spec.source, status: result?.status ?? 'failed' });
    }
    ctx.log.info('task ended', {
      sessionId: result.sessionId,
      source: spec.source,
      status: result.status,
      turns: result.turns,
      ...(result.error ? { error: result.error.message } : {}),
    });
    return result;
  });
  ctx.report('tasks', () => runner.counts());
  return { value: runner, close: () => runner.close(TASK_SHUTDOWN_GRACE_MS) };
}
