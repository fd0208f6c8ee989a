/** The daemon's one SessionDB: opened on first use, checkpointed periodically, closed on shutdown. */
import type { DaemonContext } from '../daemon-context.js';
import type { SecretValues } from '../../security/secret-values.js';
import { sessionDbPath } from '../../paths/index.js';
import { SessionDB } from '../../sessions/db.js';
import type { Built } from './built.js';

/**
 * A passive checkpoint moves committed WAL pages into state.db without waiting for readers,
 * so the -wal file of a long-running daemon stays small. SQLite's own auto-checkpoint runs
 * only on commit by whichever connection crosses 1000 pages; this covers idle periods.
 */
export const CHECKPOINT_INTERVAL_MS = 60_000;

export function openSessions(ctx: DaemonContext, secrets: SecretValues): Built<SessionDB> {
  const db = new SessionDB(sessionDbPath(ctx.home));
  // hermesd guard: the values of this repository's secrets never reach state.db, in any form.
  db.setValueRedactor(secrets);
  const timer = setInterval(() => {
    try {
      db.checkpoint();
    } catch (err) {
      ctx.log.warn('session db checkpoint failed', { error: String(err) });
    }
  }, CHECKPOINT_INTERVAL_MS);
  timer.unref();
  ctx.report('sessions', () => ({ db: db.path }));
  return {
    value: db,
    close: () => {
      clearInterval(timer);
      try {
        db.checkpoint();
      } finally {
        db.close();
      }
    },
  };
}
