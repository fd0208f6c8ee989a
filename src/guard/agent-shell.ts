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
 * the post-tool check puts back what it changed. Either way it runs in the agent's shell (bash
 * or zsh), not in /bin/sh: `[[ … ]]`, arrays and brace expansion work as they would unconfined.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeRuntimeFileSync } from '../storage/atomic.js';
import { sha256 } from '../text/hash.js';
import type { GuardConfig } from './config.js';
import { AGENT_CONFIG_PATHS, HOOK_MANAGER_FILES, sandboxPlan } from './sandbox-plan.js';
import { realOf, within } from './sandbox.js';

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

/** What the command writes to fd 3 once it runs inside bubblewrap: no bubblewrap message holds it. */
const STARTED = 'hermesd-started';

/**
 * The script an agent's shell command runs in (the command is its argument), in the shell the
 * agent would have run it in: `$SHELL` where that is bash or zsh (Claude Code's and Codex's
 * choice), else `shell` (bash where there is one: Gemini CLI's). Bubblewrap starts once, with
 * the whole file system as it is (devices included) and `readOnly` bound read-only over it; the
 * command, once inside, writes STARTED to fd 3 before it runs, where bubblewrap's own messages
 * also go. Without STARTED the command never ran: where a probe finds that bubblewrap cannot
 * start here at all (inside an agent's own sandbox, which may forbid namespaces), the command
 * runs as written, once; where it starts but could not set up this confinement (a bound path
 * gone meanwhile) the command is not run, and the agent is told bubblewrap's words. (Skipping
 * the probe where bubblewrap's words already say it cannot start saved nothing measurable: a
 * bubblewrap that fails at once costs well under a millisecond beside the shells.)
 */
export function confineScript(o: { bwrap: string; readOnly: string[]; shell: string }): string {
  const mounts = ['--dev-bind', '/', '/'];
  // Shallower first: a read-only file inside a read-only directory is bound after it.
  for (const p of [...o.readOnly].sort((a, b) => a.split('/').length - b.split('/').length)) mounts.push('--ro-bind', p, p);
  const bwrap = shq(o.bwrap);
  // Inside: the marker, then fd 3 closed (nothing the command starts holds it), stderr back from fd 5.
  const inside = `printf ${STARTED} >&3; exec 3>&- 2>&5 5>&-; hermesd_c=$1; shift; eval "$hermesd_c"`;
  // No --chdir: bubblewrap keeps the directory the agent's shell is in.
  return [
    "# hermesd: runs an agent's shell command ($1) with the files the guard reads and the protected files",
    '# read-only (src/guard/agent-shell.ts). Written by the daemon, named by its content: never edited.',
    `hermesd_sh=${shq(o.shell)}`,
    'case ${SHELL-} in */bash | */zsh) [ -x "$SHELL" ] && hermesd_sh=$SHELL ;; esac',
    'exec 4>&1',
    `hermesd_ran=$(${bwrap} ${[...mounts, '--die-with-parent', '--'].map(shq).join(' ')} "$hermesd_sh" -c ${shq(inside)} "$hermesd_sh" "$1" 3>&1 >&4 4>&- 5>&2 2>&3)`,
    'hermesd_rc=$?',
    'case $hermesd_ran in',
    `  *${STARTED}*) exit "$hermesd_rc" ;;`,
    'esac',
    `if ${bwrap} --dev-bind / / /bin/true 2>/dev/null; then`,
    `  printf 'hermesd: not run: bubblewrap could not set up the confinement of this command (%s); run it again.\\n' "$hermesd_ran" >&2`,
    '  exit 126',
    'fi',
    'exec 4>&- "$hermesd_sh" -c "$1"',
    '',
  ].join('\n');
}

/** How long a confine script no command asked for is kept (a command starts within seconds of its rewrite). */
const SCRIPT_KEEP_MS = 60 * 60_000;

/**
 * The file of a confine script in `dir` (`<git-dir>/hermesd/confine/`, read-only inside the
 * confinement), named by its content and written when missing; scripts unused for an hour go
 * (and all of them when the daemon stops).
 */
export function confineScriptFile(dir: string, text: string): string {
  const file = join(dir, `${sha256(text).slice(0, 16)}.sh`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeRuntimeFileSync(file, text, 0o600);
  for (const name of readdirSync(dir)) {
    const old = join(dir, name);
    try {
      if (old !== file && Date.now() - statSync(old).mtimeMs > SCRIPT_KEEP_MS) rmSync(old, { force: true });
    } catch {
      // gone meanwhile
    }
  }
  return file;
}

/**
 * The shell line the agent runs instead of `command`: the confine script with the command as its
 * argument. Short, so that the agent's own reading of the command (its permission checks parse
 * it) costs what it costs for the command itself; and not `exec`, so that what the agent's shell
 * does after a command (Claude Code records the directory, Gemini CLI the background processes)
 * still runs — skipping it cost Gemini CLI's shell calls 13–27 ms more.
 */
export function confinedCommand(script: string, command: string): string {
  return `/bin/sh ${shq(script)} ${shq(command)}`;
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

/**
 * What Codex's own `:workspace` profile keeps read-only in a workspace root (codex-rs protocol,
 * PROTECTED_METADATA_PATH_NAMES); a profile that extends it names them again, or they go.
 */
const CODEX_METADATA = ['.git', '.agents', '.codex', '.aws'];

export type CodexProfile = { name: string; paths: string[] };

/**
 * The Codex permission profile `init --agents codex` writes into `.codex/config.toml`: Codex's
 * `:workspace` with the files the guard reads and the paths rules protect read-only inside the
 * work tree, so that inside Codex's own sandbox, where bubblewrap cannot start, a command still
 * meets a read-only file. Only the paths there now: Codex sets up each listed path for every
 * command it runs, and one that is not there costs it more (measured with Codex 0.171.0: 28
 * missing paths added ~45 ms to every shell call, 28 present ones ~18 ms, 4 present ones
 * nothing measurable); a path that appears later is not in the profile, so the confinement does
 * not count on it (codexProfileCovers). Named by its content.
 */
export function codexProfile(config: GuardConfig, root: string, alsoThere: readonly string[] = []): CodexProfile {
  const candidates = [...CODEX_METADATA, '.hermes', ...HOOK_MANAGER_FILES, ...AGENT_CONFIG_PATHS, ...agentSandboxDenyWrite(config).paths.map((p) => p.replace(/^\.\//, ''))];
  // `alsoThere`: what the init writing the profile creates (.codex itself, other agents' folders).
  const paths = [...new Set(candidates)].filter((p) => alsoThere.includes(p) || existsSync(join(root, p))).sort();
  return { name: `hermesd-${sha256(paths.join('\n')).slice(0, 12)}`, paths };
}

/**
 * Whether every read-only path of the confinement (real paths) is inside one of the profile's
 * paths, as Codex resolves them: against its workspace root, the folder its session runs in
 * (`workspaceRoot`; the work tree's root when init's paths are to mean what they say).
 */
export function codexProfileCovers(profile: CodexProfile, workspaceRoot: string, readOnly: readonly string[]): boolean {
  const base = realOf(workspaceRoot) ?? workspaceRoot;
  const held = profile.paths.map((p) => join(base, p));
  return readOnly.every((r) => held.some((h) => within(h, r)));
}

/**
 * The shell line Codex runs instead of `command` where its sandbox runs hermesd's profile
 * (`CODEX_PERMISSION_PROFILE`, which Codex sets in every command's environment, names it): the
 * command as written, in Codex's own shell — the profile already holds what the confinement
 * would, and bubblewrap cannot start inside Codex's sandbox anyway. Anywhere else (Codex's
 * sandbox off, or running another profile), the confine script, as for every agent.
 */
export function codexConfinedCommand(profile: CodexProfile, script: string, command: string): string {
  return `if [ "\${CODEX_PERMISSION_PROFILE-}" = ${profile.name} ]; then eval ${shq(command)}; else ${confinedCommand(script, command)}; fi`;
}
