/** What a daemon says about itself: in `<git-dir>/hermesd/daemon.json` and in GET /v1/status. */
import type { TranscriptStats } from './agents.js';
import type { ModelEnv } from './model-env.js';

/**
 * `daemon.json`, written by the daemon once its socket answers. The sh hooks read `socket`
 * with shell builtins line by line, so it stays the first key.
 */
export type DaemonInfo = { pid: number; version: string; root: string; socket: string; startedAt: string };

/** Whether git runs hermesd's hooks in this clone (src/githooks/health.ts decides). */
export type HookHealthReport = {
  installed: boolean;
  /** The hook manager the hooks were installed with (husky, pre-commit, lefthook, git). */
  manager?: string;
  /** git runs hermesd's pre-commit. */
  active: boolean;
  /** The hooks directory git uses (core.hooksPath, or <common-dir>/hooks). */
  hooksDir?: string;
  /** How git reaches hermesd at pre-commit, when it does. */
  via?: string;
  /** What is wrong, each with the fix. */
  problems: string[];
};

/** The fields of GET /v1/status that services add and clients read, by key. */
export type StatusFields = {
  /**
   * The services behind the first answers: `loading` until those that report here (hooks,
   * proposals, config, agents) have started, `failed` when they could not load (a warning says why).
   */
  services: 'loading' | 'ready' | 'failed';
  /** Whether the config files load (an invalid one is reported until fixed). */
  config: { ok: boolean; error?: string };
  /** Whether git runs hermesd's hooks, hooks running now, backups waiting for a restore. */
  hooks: Partial<HookHealthReport> & { running?: number; pendingBackups?: string[]; staged?: { hits: number; misses: number; ahead: number; judged?: string } };
  /** Other agents' transcripts read into SessionDB (daemons of work trees with `init --agents`). */
  agents: TranscriptStats | undefined;
  /** Proposals waiting for the user's accept or reject (this repository's and those of none). */
  proposals: { pending: number };
  /** The post-task review queue. */
  review: { queued: number; running: number; done: number; skipped: number; failed: number };
};

/** GET /v1/status: the daemon's identity, what its environment says about the model, the warnings of every service, then what each service adds. */
export type Status = DaemonInfo & {
  uptimeMs: number;
  /** Resident memory; absent where the daemon cannot read its own /proc/self. */
  rssBytes?: number;
  home: string;
  modelEnv: ModelEnv;
  warnings: string[];
  /** Requests the daemon is working on besides this status request (hook questions, tasks, API calls). */
  requestsInFlight: number;
} & Partial<StatusFields> & { [extra: string]: unknown };
