/**
 * The named errors of hermesd. Each carries a kebab-case `code` (its wire name in API
 * error bodies), the HTTP status the API answers with, and the exit code the CLI uses.
 * Anything else thrown is an internal error: a 500 for the request, exit 1 for the CLI.
 */
export type ErrorWire = { code: string; message: string; details?: unknown };

export class HermesError extends Error {
  readonly code: string = 'internal';
  readonly httpStatus: number = 500;
  readonly exitCode: number = 1;
  details?: unknown;
  constructor(message: string, details?: unknown) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
  toWire(): ErrorWire {
    return this.details === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, details: this.details };
  }
}

/** Bad command-line usage or a bad API request body. */
export class UsageError extends HermesError {
  override readonly code: string = 'bad-request';
  override readonly httpStatus = 400;
  override readonly exitCode = 2;
}

/** A configuration file or environment variable is wrong; the message names the file, line and key. */
export class ConfigError extends HermesError {
  override readonly code = 'config-error';
  override readonly httpStatus = 400;
  override readonly exitCode = 2;
}

/** The command was run outside a git work tree. */
export class NotARepository extends HermesError {
  override readonly code = 'not-a-repository';
  override readonly httpStatus = 400;
  override readonly exitCode = 2;
}

/** The daemon could not be started or did not answer in time. */
export class DaemonUnavailable extends HermesError {
  override readonly code = 'daemon-unavailable';
  override readonly httpStatus = 503;
  override readonly exitCode = 3;
}

/** A thing that was asked for does not exist (route, session, skill, memory entry). */
export class NotFound extends HermesError {
  override readonly code: string = 'not-found';
  override readonly httpStatus = 404;
  override readonly exitCode = 1;
}

/** The route exists but not for this HTTP method. */
export class MethodNotAllowed extends HermesError {
  override readonly code = 'method-not-allowed';
  override readonly httpStatus = 405;
  override readonly exitCode = 2;
}

/** The request conflicts with current state (e.g. ambiguous match, busy resource). */
export class Conflict extends HermesError {
  override readonly code: string = 'conflict';
  override readonly httpStatus = 409;
  override readonly exitCode = 1;
}

/** A request body exceeds the API's limit. */
export class PayloadTooLarge extends HermesError {
  override readonly code = 'payload-too-large';
  override readonly httpStatus = 413;
  override readonly exitCode = 2;
}

/**
 * An operation was refused by a rule the user can read (memory budget, threat scan,
 * protected path, forbidden content). Exit 1: "the thing checked failed".
 */
export class Refused extends HermesError {
  override readonly code: string = 'refused';
  override readonly httpStatus = 409;
  override readonly exitCode = 1;
}

/** An error that arrived over the wire from the daemon, rebuilt on the client side. */
/** A memory write the store refused (empty, threat, budget, no or ambiguous match…); exit 1 in the CLI, with the reason on stderr. */
export class MemoryRefused extends Refused {
  override readonly code = 'memory-refused';
}

export class RemoteError extends HermesError {
  override readonly code: string;
  override readonly httpStatus: number;
  override readonly exitCode: number;
  constructor(wire: ErrorWire, httpStatus: number) {
    super(wire.message, wire.details);
    this.code = wire.code;
    this.httpStatus = httpStatus;
    this.exitCode = exitCodeForStatus(httpStatus, wire.code);
  }
}

function exitCodeForStatus(status: number, code: string): number {
  if (code === 'daemon-unavailable') return 3;
  if (code === 'config-error' || code === 'not-a-repository' || code === 'bad-request' || code === 'payload-too-large') return 2;
  if (status === 400) return 2;
  return 1;
}

export function errorToWire(err: unknown): { status: number; wire: ErrorWire } {
  if (err instanceof HermesError) return { status: err.httpStatus, wire: err.toWire() };
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, wire: { code: 'internal', message: `Internal error: ${message}. See the daemon log (hermesd logs).` } };
}

/**
 * A `terminal` command was not run: no sandbox on this machine and `guard.sandbox.ifUnavailable`
 * is "refuse". The message says how to install one (or how to allow unsandboxed commands).
 */
export class SandboxUnavailable extends Refused {
  override readonly code = 'sandbox-unavailable';
}
