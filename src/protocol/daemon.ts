/** What a daemon says about itself: in `<git-dir>/hermesd/daemon.json` and in GET /v1/status. */

/**
 * `daemon.json`, written by the daemon once its socket answers. The sh hooks read `socket`
 * with shell builtins line by line, so it stays the first key.
 */
export type DaemonInfo = { pid: number; version: string; root: string; socket: string; startedAt: string };

/** GET /v1/status: the daemon's identity, then what each service adds (watcher, hooks, warnings…). */
export type Status = DaemonInfo & {
  uptimeMs: number;
  rssBytes: number;
  home: string;
  [extra: string]: unknown;
};
