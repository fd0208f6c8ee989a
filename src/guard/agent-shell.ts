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
import { shQuote } from '../text/sh-quote.js';
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { writeRuntimeFileSync } from '../storage/atomic.js';
import { readTextIfAny } from '../storage/read.js';
import { sha256 } from '../text/hash.js';
import type { GuardConfig } from './guard-config.js';
import { BACKGROUND_ENDED } from './refused-writes.js';
import { AGENT_CONFIG_PATHS, HOOK_MANAGER_FILES, sandboxPlan, USER_CONFIG_NAMES } from './sandbox-plan.js';
import { bwrapIsolationArgs, bwrapMountArgs, realOf, within, type SandboxAvailability, type SandboxPlan } from './sandbox.js';

export type AgentShellInput = {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  /** Protected files that exist (repository-relative) and whether their rule has a generator. */
  protectedFiles: Array<{ rel: string; generator: boolean }>;
  /** $HERMES_HOME (read-only inside). */
  home: string;
  /** The user's home as the daemon knows it (read-only inside, like everything outside the writable trees). */
  userHome: string;
  /** The temporary folders a command may write: /tmp, and the daemon's TMPDIR where that is another. */
  tmpDirs: string[];
  /** The daemon's socket folder (hidden inside) and [the agent socket, the daemon's socket path it is bound at]. */
  socketDir?: string;
  socket?: [string, string];
  /** The effective core.hooksPath and the files .git/config includes: read-only inside. */
  hooksPath?: string;
  gitConfigFiles?: string[];
};

/**
 * The plan of another agent's shell command: hermesd's one sandbox plan (sandbox-plan.ts), as for
 * `terminal`, with what an agent's shell keeps of its own — /tmp as it is (the agent reads there
 * what its commands wrote), the network, the environment, the user's credentials (a push over
 * ssh). Writable: the work tree but what the guard reads and what rules protect, the git
 * directories' state, the temporary folders, `guard.sandbox.writable`; everything else
 * read-only ($HERMES_HOME, the user's home and configs) or absent (the daemon's socket folder,
 * where only the agent socket is, which answers git hooks and nothing else).
 */
export function agentShellPlan(input: AgentShellInput): { plan: SandboxPlan; shared: string[] } {
  const empty = join(input.gitDir, 'hermesd', 'sandbox', 'empty');
  const plan: SandboxPlan = {
    ...sandboxPlan({
      ...input,
      sharedTmp: input.tmpDirs,
      maskUserSecrets: false,
      secretFiles: [],
      empty,
      files: [],
      alsoVisible: [],
      config: { ...input.config, guard: { ...input.config.guard, sandbox: { ...input.config.guard?.sandbox, network: true } } },
    }),
    maskDirs: [],
  };
  const own = [input.root, input.gitDir, input.commonDir].map((p) => realOf(p) ?? p);
  return { plan, shared: plan.writable.filter((w) => !own.includes(w)) };
}

/**
 * Run as the command's shell exits (an EXIT trap: the command's status stays the shell's): where
 * the command left a process in the background (`… &`, the last one) still running, it is told
 * that the sandbox ends it with the call — hermesd's bubblewrap and Codex's sandbox both do.
 */
const BACKGROUND_CHECK = `case $! in [1-9]*) kill -0 "$!" 2>/dev/null && printf '%s\\n' ${shQuote(BACKGROUND_ENDED)} >&2 ;; esac`;

/** What the command writes to fd 3 once it runs inside bubblewrap: no bubblewrap message holds it. */
const STARTED = 'hermesd-started';

/**
 * The agent's own configuration as its environment names it: read-only inside where it lies in a
 * temporary folder (an agent started with a HOME under /tmp), as the user's home is everywhere else.
 */
const AGENT_ENV_DIRS = ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'GEMINI_CLI_HOME', 'HERMES_HOME'];
/** Where such a folder holds the work tree or another writable tree, only its configuration's entries (USER_CONFIG_NAMES) are made read-only. */

export type ConfineOptions = {
  bwrap: Extract<SandboxAvailability, { kind: 'bwrap' }>;
  plan: SandboxPlan;
  /** The shell a command runs in when the agent's is neither bash nor zsh (bash where there is one: Gemini CLI's). */
  shell: string;
  /** The writable trees a folder of the agent's environment may lie in (the temporary folders, guard.sandbox.writable). */
  shared: string[];
  /** Where the command's processes record the writes they were refused (refused-preload.ts): the library, and the records' folder. */
  refused?: { lib: string; folder: string };
};

/** The environment that makes a command's processes record what they were refused into `file` (refused-writes.c): names and sh words. */
function recordEnv(lib: string, file: string): Array<[name: string, value: string]> {
  // The library goes first; a sanitizer's runtime that must come first is told not to mind (ASan aborts otherwise).
  return [
    ['LD_PRELOAD', `${shQuote(lib)}"\${LD_PRELOAD:+:\$LD_PRELOAD}"`],
    ['HERMESD_REFUSED', file],
    ['ASAN_OPTIONS', '"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"'],
  ];
}

/**
 * The script an agent's shell command runs in (the command is its argument), in the shell the
 * agent would have run it in: `$SHELL` where that is bash or zsh (Claude Code's and Codex's
 * choice), else `shell`. Bubblewrap starts once with the plan's mounts and isolation; the command,
 * once inside, writes STARTED to fd 3 before it runs, where bubblewrap's own messages also go.
 * Without STARTED the command never ran: where a probe finds that bubblewrap cannot start here at
 * all (inside an agent's own sandbox, which may forbid namespaces), the command runs as written,
 * once (the check after the call still holds); where it starts but could not set up this
 * confinement (a bound path gone meanwhile) the command is not run, and the agent is told
 * bubblewrap's words.
 */
export function confineScript(o: ConfineOptions): string {
  const bwrap = shQuote(o.bwrap.path);
  const args = [...bwrapMountArgs(o.plan), ...bwrapIsolationArgs(o.bwrap, o.plan)];
  // A folder bound from the agent's environment must not cover a mount of the plan: bubblewrap binds from the host's view, and
  // the later mount would undo the earlier one below it (a read-only path, the hidden socket folder, the work tree under a HOME in /tmp).
  const { shared } = o;
  const keep = [...new Set([...o.plan.writable, ...o.plan.readOnly, ...o.plan.hide, ...o.plan.maskFiles, ...(o.plan.socket ? [o.plan.socket[0]] : [])])];
  const keepList = keep.map(shQuote).join(' ');
  // Inside: the marker, then fd 3 closed (nothing the command starts holds it), stderr back from fd 5.
  const inside = `printf ${STARTED} >&3; exec 3>&- 2>&5 5>&-; hermesd_c=$1; shift; trap ${shQuote(BACKGROUND_CHECK)} EXIT; eval "$hermesd_c"`;
  const sharedCase = shared.map((w) => `${shQuote(w)}/*`).join(' | ');
  return [
    "# hermesd: runs an agent's shell command ($1) in hermesd's sandbox plan: the work tree writable but what",
    '# the guard reads and what rules protect, the temporary folders writable, everything else read-only or',
    '# absent (src/guard/agent-shell.ts). Written by the daemon, named by its content: never edited.',
    `hermesd_sh=${shQuote(o.shell)}`,
    'case ${SHELL-} in */bash | */zsh) [ -x "$SHELL" ] && hermesd_sh=$SHELL ;; esac',
    '# $2: the record the refused writes go to (refused-preload.ts), where there is one.',
    'hermesd_c=$1 hermesd_r=${2-}',
    `set -- ${args.map(shQuote).join(' ')}`,
    '# Whether binding $1 leaves every mount above in place (none of them lies in it).',
    `hermesd_clear() { for hermesd_k in ${keepList}; do case $hermesd_k/ in "$1"/*) return 1 ;; esac; done; return 0; }`,
    ...(shared.length > 0
      ? [
          'for hermesd_n in ' + AGENT_ENV_DIRS.join(' ') + '; do',
          '  eval "hermesd_v=\\${$hermesd_n-}"',
          '  case $hermesd_v in /*) ;; *) continue ;; esac',
          '  [ -e "$hermesd_v" ] || continue',
          `  case $hermesd_v/ in ${sharedCase}) ;; *) continue ;; esac`,
          '  if hermesd_clear "$hermesd_v"; then set -- "$@" --ro-bind "$hermesd_v" "$hermesd_v"; continue; fi',
          `  for hermesd_f in ${USER_CONFIG_NAMES.join(' ')}; do [ -e "$hermesd_v/$hermesd_f" ] && hermesd_clear "$hermesd_v/$hermesd_f" && set -- "$@" --ro-bind "$hermesd_v/$hermesd_f" "$hermesd_v/$hermesd_f"; done`,
          'done',
          "# The agent's own temporary folder, where it lies in one of those (Codex's TMPDIR under its HOME): writable, as /tmp is,",
          '# unless it would uncover what is kept from the command or hold configuration.',
          'case ${TMPDIR-} in',
          '  /?*)',
          '    hermesd_t=${TMPDIR%/}',
          `    if [ -d "$hermesd_t" ] && hermesd_clear "$hermesd_t"; then`,
          '      for hermesd_n in ' +
            AGENT_ENV_DIRS.join(' ') +
            '; do eval "hermesd_v=\\${$hermesd_n-}"; case $hermesd_v/ in "$hermesd_t"/*) hermesd_t= ;; esac; done',
          `      case $hermesd_t/ in ${USER_CONFIG_NAMES.map((n) => `*/${n}/*`).join(' | ')}) hermesd_t= ;; esac`,
          `      case $hermesd_t/ in ${sharedCase}) [ -n "$hermesd_t" ] && set -- "$@" --bind "$hermesd_t" "$hermesd_t" ;; esac`,
          '    fi',
          '    ;;',
          'esac',
        ]
      : []),
    ...(o.refused
      ? [
          '# Each process records the writes it is refused (src/guard/refused-writes.c), for the check after the call.',
          'case $hermesd_r in',
          "  '' | *[!0-9a-f]*) ;;",
          `  *) set -- "$@" ${recordEnv(o.refused.lib, `${shQuote(o.refused.folder)}/"$hermesd_r"`)
            .map(([name, value]) => `--setenv ${name} ${value}`)
            .join(' ')} ;;`,
          'esac',
        ]
      : []),
    'exec 4>&1',
    `hermesd_ran=$(${bwrap} "$@" -- "$hermesd_sh" -c ${shQuote(inside)} "$hermesd_sh" "$hermesd_c" 3>&1 >&4 4>&- 5>&2 2>&3)`,
    'hermesd_rc=$?',
    'case $hermesd_ran in',
    `  *${STARTED}*) exit "$hermesd_rc" ;;`,
    'esac',
    `if ${bwrap} --dev-bind / / /bin/true 2>/dev/null; then`,
    `  printf 'hermesd: not run: bubblewrap could not set up the confinement of this command (%s); run it again.\\n' "$hermesd_ran" >&2`,
    '  exit 126',
    'fi',
    'exec 4>&- "$hermesd_sh" -c "$hermesd_c"',
    '',
  ].join('\n');
}

/** How long a confine script no command was handed is kept (a command starts within seconds of its rewrite). */
const SCRIPT_KEEP_MS = 60 * 60_000;

/**
 * The file of a confine script in `dir` (`<git-dir>/hermesd/confine/`, read-only inside the
 * confinement), named by its content. A file already there is handed out only when it holds
 * these bytes (it may outlive the daemon that wrote it: a command given back just before its
 * daemon stopped still runs), else written again; handing it out touches it, and scripts not
 * handed out for an hour go when another is written.
 */
export function confineScriptFile(dir: string, text: string): string {
  const file = join(dir, `${sha256(text).slice(0, 16)}.sh`);
  if (holds(file, text)) {
    const now = new Date();
    utimesSync(file, now, now);
    return file;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Whatever holds the name is replaced, never written through (a link would take the script elsewhere).
  rmSync(file, { recursive: true, force: true });
  writeRuntimeFileSync(file, text, 0o600);
  for (const name of readdirSync(dir)) {
    // Only scripts: the library of refused writes beside them is replaced by each daemon.
    if (!name.endsWith('.sh')) continue;
    const old = join(dir, name);
    try {
      if (old !== file && Date.now() - statSync(old).mtimeMs > SCRIPT_KEEP_MS) rmSync(old, { force: true });
    } catch {
      // gone meanwhile
    }
  }
  return file;
}

/** True when `file` is a file of its own (not a link) holding exactly `text`. */
function holds(file: string, text: string): boolean {
  try {
    return lstatSync(file).isFile() && readTextIfAny(file) === text;
  } catch {
    return false;
  }
}

/**
 * The shell line the agent runs instead of `command`: the confine script with the command as its
 * argument. Short, so that the agent's own reading of the command (its permission checks parse
 * it) costs what it costs for the command itself; and not `exec`, so that what the agent's shell
 * does after a command (Claude Code records the directory, Gemini CLI the background processes)
 * still runs — skipping it made Gemini CLI's shell calls slower (docs/benchmarks.md#sandbox).
 */
export function confinedCommand(script: string, command: string, record?: string): string {
  return `/bin/sh ${shQuote(script)} ${shQuote(command)}${record ? ` ${record}` : ''}`;
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
 * command it runs, and one that is not there costs it more on every shell call than one that is
 * (docs/benchmarks.md#sandbox); a path that appears later is not in the profile, so the confinement does
 * not count on it (codexProfileCovers). Named by its content.
 */
export function codexProfile(config: GuardConfig, root: string, alsoThere: readonly string[] = []): CodexProfile {
  const candidates = [
    ...CODEX_METADATA,
    '.hermes',
    ...HOOK_MANAGER_FILES,
    ...AGENT_CONFIG_PATHS,
    ...agentSandboxDenyWrite(config).paths.map((p) => p.replace(/^\.\//, '')),
  ];
  // `alsoThere`: what the init writing the profile creates (.codex itself, other agents' folders).
  const paths = [...new Set(candidates)].filter((p) => alsoThere.includes(p) || existsSync(join(root, p))).sort();
  return { name: `hermesd-${sha256(paths.join('\n')).slice(0, 12)}`, paths };
}

/**
 * Whether every read-only path of the confinement inside the work tree `root` (real paths) is
 * inside one of the profile's paths, as Codex resolves them: against its workspace root, the
 * folder its session runs in (`workspaceRoot`; the work tree's root when init's paths are to mean
 * what they say). Outside the work tree Codex's `:workspace` writes nothing but its temporary
 * folders; what hermesd keeps there is held by other means (the hook client checks whose socket
 * it reaches; $HERMES_HOME lies in the user's home).
 */
export function codexProfileCovers(profile: CodexProfile, workspaceRoot: string, root: string, readOnly: readonly string[]): boolean {
  const base = realOf(workspaceRoot) ?? workspaceRoot;
  const tree = realOf(root) ?? root;
  const held = profile.paths.map((p) => join(base, p));
  return readOnly.filter((r) => within(tree, r)).every((r) => held.some((h) => within(h, r)));
}

/**
 * The shell line Codex runs instead of `command` where its sandbox runs hermesd's profile
 * (`CODEX_PERMISSION_PROFILE`, which Codex sets in every command's environment, names it): the
 * command as written, in Codex's own shell — the profile already holds what the confinement
 * would, and bubblewrap cannot start inside Codex's sandbox anyway. Anywhere else (Codex's
 * sandbox off, or running another profile), the confine script, as for every agent.
 */
export function codexConfinedCommand(profile: CodexProfile, script: string, command: string, record?: { lib: string; folder: string; name: string }): string {
  // Codex's sandbox refuses the write; the processes the command starts record it, as inside hermesd's.
  const env = record
    ? `${recordEnv(record.lib, shQuote(`${record.folder}/${record.name}`))
        .map(([name, value]) => `${name}=${value} `)
        .join('')}`
    : '';
  return `if [ "\${CODEX_PERMISSION_PROFILE-}" = ${profile.name} ]; then trap ${shQuote(BACKGROUND_CHECK)} EXIT; ${env}eval ${shQuote(command)}; else ${confinedCommand(script, command, record?.name)}; fi`;
}
