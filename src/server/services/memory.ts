/**
 * The daemon's memory store: one MemoryStore over `$HERMES_HOME/memories`, with budgets read
 * from the effective config at every operation (so an edited config.yaml applies at once;
 * an invalid one is a ConfigError, exit 2, rather than a silently default budget).
 */
import { join } from 'node:path';
import { configOf } from './config.js';
import type { DaemonContext } from '../context.js';
import { MemoryStore } from '../../memory/store.js';

export function memoriesDir(home: string): string {
  return join(home, 'memories');
}

export function memoryOf(ctx: DaemonContext): MemoryStore {
  return ctx.service('memory', () => new MemoryStore(memoriesDir(ctx.home), () => configOf(ctx).memory));
}
