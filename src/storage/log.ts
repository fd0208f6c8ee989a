import { appendFileSync } from 'node:fs';

export type Logger = {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

/**
 * Appends one line per event to the daemon log. Synchronous on purpose: the log is how a
 * user learns why a daemon died, so a line must be on disk before the process can exit.
 */
export function fileLogger(file: string): Logger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>) => {
    const extra = fields && Object.keys(fields).length > 0 ? ' ' + JSON.stringify(fields) : '';
    try {
      appendFileSync(file, `${new Date().toISOString()} ${level} ${msg}${extra}\n`, { mode: 0o600 });
    } catch {
      // The log file vanished with the work tree; the daemon notices that separately.
    }
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
