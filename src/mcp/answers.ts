/**
 * The answers `hermesd mcp` gives without the SDK (front.ts): the SDK server's own answers to
 * `initialize` (per protocol version the SDK supports, and the one it gives any other),
 * `tools/list` and `resources/templates/list`, recorded at build time by
 * scripts/bundle-daemon.mjs through `recordAnswers()` (server.ts). They are static: the tool
 * list and the templates do not depend on the repository or the daemon.
 */

/** Where the build writes them, from the package root. */
export const ANSWERS_FILE = 'dist/mcp/answers.json';

export type StaticAnswers = {
  /** hermesd's version they were recorded with; answers of another version are not used. */
  version: string;
  initialize: Record<string, unknown>;
  /** What the SDK answers an `initialize` asking for a protocol version it does not support. */
  initializeOther: unknown;
  tools: unknown;
  templates: unknown;
};

/** The `initialize` result for the protocol version a client asks for. */
export function answerOf(answers: StaticAnswers, protocolVersion: string): unknown {
  return Object.hasOwn(answers.initialize, protocolVersion) ? answers.initialize[protocolVersion] : answers.initializeOther;
}
