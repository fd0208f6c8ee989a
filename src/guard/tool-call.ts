/**
 * A tool call as the guard sees it, whichever agent makes it: what it would do (write or read
 * paths, run a shell command) and, where the guard refuses it, why. Other agents' adapters read
 * their payloads into a ToolAction (src/other-agents/), hermesd's own tools are one already.
 */

/** What a tool call would do, as far as the guard is concerned. */
export type ToolAction =
  | { kind: 'write'; paths: string[]; verb: 'write' | 'edit' | 'delete' | 'patch' }
  | { kind: 'read'; paths: string[] }
  | { kind: 'shell'; command: string; cwd: string }
  | { kind: 'other' };

/** A refusal: the rule (or policy) that decided and the sentence for the agent, which says what to do instead. */
export type Denial = { rule: string; message: string };
