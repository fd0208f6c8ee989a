/**
 * Another agent's shell command, confined as far as hermesd's own `terminal` confines what
 * matters to the guard: an agent whose pre-tool hook may rewrite the command (Claude Code's
 * `updatedInput`, Codex's `updatedInput`, Gemini CLI's `hookSpecificOutput.tool_input`) gets it
 * back wrapped in bubblewrap, with the paths the guard reads and the paths rules protect
 * read-only (sandbox-plan.ts chooses them as for `terminal`), and everything else as the
 * agent's own shell sees it: the file system, /tmp, the network, the environment. A command
 * hermesd cannot read (`python3 -c …`, `f=gen/a.ts; echo x > $f`, a background writer) then
 * fails on a read-only file instead of changing it. Where bubblewrap cannot start (inside the
 * agent's own sandbox, which may forbid user namespaces), the command runs as it was written;
 * the post-tool check puts back what it changed.
 */
import { join } from 'node:path';
import type { GuardConfig } from './config.js';
import { sandboxPlan } from './sandbox-plan.js';
import { realOf } from './sandbox.js';

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export type AgentShellInput = {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  /** Protected files that exist (repository-relative) and whether their rule has a generator. */
  protectedFiles: Array<{ rel: string; generator: boolean }>;
};

/** What stays read-only around an agent's command: the terminal sandbox's read-only paths, and hermesd's runners in the common dir. */
export function agentShellReadOnly(input: AgentShellInput): string[] {
  const plan = sandboxPlan({ ...input, home: join(input.gitDir, 'hermesd', 'no-home'), userHome: join(input.gitDir, 'hermesd', 'no-home'), secretFiles: [], tmp: '/tmp', empty: '/tmp', files: [], alsoVisible: [] });
  const out = new Set(plan.readOnly);
  const runners = realOf(join(input.commonDir, 'hermesd'));
  if (runners) out.add(runners);
  return [...out];
}

/**
 * The shell line the agent runs instead of `command`: bubblewrap with the whole file system as
 * it is (devices included) and `readOnly` bound read-only over it; where bubblewrap
 * cannot start here, `command` itself.
 */
export function confinedCommand(o: { bwrap: string; readOnly: string[]; gitDir: string; command: string }): string {
  const mounts = ['--dev-bind', '/', '/'];
  // Shallower first: a read-only file inside a read-only directory is bound after it.
  for (const p of [...o.readOnly].sort((a, b) => a.split('/').length - b.split('/').length)) mounts.push('--ro-bind', p, p);
  const bwrap = shq(o.bwrap);
  // No --chdir: bubblewrap keeps the directory the agent's shell is in.
  const run = ['--die-with-parent', '--', '/bin/sh', '-c', o.command];
  return `${bwrap} --dev-bind / / /bin/true 2>/dev/null && exec ${bwrap} ${[...mounts, ...run].map(shq).join(' ')}; exec /bin/sh -c ${shq(o.command)}`;
}

/** A glob character: a pattern holding one is not a path the agents' own sandboxes can take. */
const GLOB = /[*?[\]{}()!+@]/;

/**
 * What rules protect, as paths an agent's own sandbox can refuse to write: Claude Code's
 * `sandbox.filesystem.denyWrite` takes paths, not globs (on Linux a glob is not expanded), and a
 * directory there covers everything under it. A `protect` pattern that is a path, or a folder
 * with everything under it (`gen/**`), becomes `./<path>` (relative to the folder Claude Code
 * runs in, the work tree's root, where it reads the project's settings); a rule with a generator
 * (its files are rewritten by a command the agent may run) or with `exclude` (part of the folder
 * stays writable) is left to hermesd's own checks, as is any other glob (`skipped`).
 */
export function agentSandboxDenyWrite(config: GuardConfig): { paths: string[]; skipped: string[] } {
  const paths = new Set<string>();
  const skipped: string[] = [];
  for (const rule of config.rules ?? []) {
    for (const pattern of rule.protect ?? []) {
      const folder = /^(.*?)\/\*\*(\/\*)?$/.exec(pattern)?.[1];
      const path = folder ?? pattern;
      const ok = !rule.generator && !(rule.exclude ?? []).length && path !== '' && !GLOB.test(path) && !path.startsWith('/') && !path.split('/').includes('..');
      if (ok) paths.add(`./${path.replace(/^\.\//, '').replace(/\/+$/, '')}`);
      else skipped.push(pattern);
    }
  }
  return { paths: [...paths].sort(), skipped };
}
