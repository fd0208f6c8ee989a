/**
 * Every service a pre-tool-call question does not need, loaded by Services.loaded() (index.ts)
 * after the config and the judge: a cold daemon's first verdict on another agent's tool call
 * waits for those alone, and every other question, route and the services that run from the
 * start wait for this module too.
 */
export { Memories } from '../../memory/memories.js';
export { agentServicesFor, createTaskRunner } from './agent.js';
export { createAgentSessions } from './agent-sessions.js';
export { PromptService } from './prompt.js';
export { GuardService } from './guard.js';
export { createHookService } from './hooks.js';
export { openSessions } from './sessions.js';
export { openSkills } from './skills.js';
export { createPlacementService } from './placement.js';
export { WatcherService } from './watcher.js';
