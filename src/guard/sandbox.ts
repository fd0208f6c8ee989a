/**
 * The sandbox a `terminal` command runs in. On Linux, bubblewrap: the whole file system
 * read-only, the work tree (and the git directories) writable except what the guard reads
 * or protects, secret files masked, a private /tmp, the git policy shim bound over every
 * git binary, the daemon reachable only through its agent socket (git hooks and the push
 * broker), new user, pid and (unless allowed) network namespaces, no capabilities, and
 * nothing that outlives the command. On macOS, a sandbox-exec (Seatbelt) profile with the
 * same file rules (no pid namespace there). Learned from Codex's linux-sandbox, Anthropic's
 * sandbox-runtime and Claude Code's sandboxing docs; none of them is a dependency.
 *
 *   const plan: SandboxPlan = { cwd, writable: [root], readOnly: [...], ... };
 *   const { file, args } = sandboxCommand(sandboxAvailability(), plan, 'npm test');
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { sandboxDir } from '../paths/index.js';
import { findOnPath } from '../process/path.js';

export type SandboxAvailability =
  | { kind: 'bwrap'; path: string; disableUserns: boolean }
  | { kind: 'sandbox-exec'; path: string }
  | { kind: 'none'; reason: string; install: string };

/** What a command may see and touch. Every path is absolute and real (symlinks resolved). */
export type SandboxPlan = {
  cwd: string;
  /** Writable trees: the work tree, git directories outside it, `guard.sandbox.writable`. */
  writable: string[];
  /** Paths inside writable trees that stay read-only (what the guard reads, protected paths, hooks). */
  readOnly: string[];
  /** Secret files: unreadable inside. */
  maskFiles: string[];
  /** Secret directories (~/.ssh): empty inside. */
  maskDirs: string[];
  /** Read-only paths the private /tmp would hide (a HOME or HERMES_HOME under /tmp). */
  visible: string[];
  /** Host directory bound at /tmp: the command's scratch space, kept between its commands (undefined: /tmp as it is, writable when in `writable`). */
  tmp?: string;
  /** An empty host directory (masks directories; needed only when there are `maskDirs`). */
  empty: string;
  /** Read-only file binds, [source, target]: the git shim over git binaries, the real git at its hidden path. */
  files: Array<[string, string]>;
  /** Writable file binds, [source, target]: scratch files a hook writes inside a read-only directory. */
  scratch?: Array<[string, string]>;
  /** Directories replaced by an empty one (the daemon's socket directory). */
  hide: string[];
  /** The agent socket, [host path, path inside]: git hooks and the push broker reach the daemon here. */
  socket?: [string, string];
  network: boolean;
};

/** Debian/Ubuntu, Fedora, Arch: how to get bubblewrap. */
export const BWRAP_INSTALL = 'install bubblewrap: sudo apt-get install bubblewrap (Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)';

const cache = new Map<string, SandboxAvailability>();

/**
 * Which sandbox this machine offers (probed once: bubblewrap must be able to create its
 * namespaces). HERMESD_BWRAP names the bwrap binary to use, or `none` for no sandbox.
 */
export function sandboxAvailability(env: NodeJS.ProcessEnv = process.env): SandboxAvailability {
  const key = env.HERMESD_BWRAP ?? '';
  let found = cache.get(key);
  if (!found) cache.set(key, (found = probeSandbox(env)));
  return found;
}

function probeSandbox(env: NodeJS.ProcessEnv): SandboxAvailability {
  if (env.HERMESD_BWRAP === 'none')
    return { kind: 'none', reason: 'HERMESD_BWRAP=none turns the sandbox off', install: 'unset HERMESD_BWRAP in the environment the daemon starts from' };
  if (process.platform === 'darwin') {
    return existsSync('/usr/bin/sandbox-exec')
      ? { kind: 'sandbox-exec', path: '/usr/bin/sandbox-exec' }
      : { kind: 'none', reason: 'sandbox-exec is missing', install: 'sandbox-exec ships with macOS' };
  }
  if (process.platform !== 'linux')
    return { kind: 'none', reason: `no sandbox on ${process.platform}`, install: 'run hermesd on Linux (bubblewrap) or macOS (sandbox-exec)' };
  const bwrap = env.HERMESD_BWRAP ? realOf(env.HERMESD_BWRAP) : bwrapOnPath(env);
  if (!bwrap) return { kind: 'none', reason: 'bubblewrap (bwrap) is not installed', install: BWRAP_INSTALL };
  const probe = (extra: string[]) =>
    spawnSync(bwrap, ['--unshare-user', ...extra, '--ro-bind', '/', '/', '--unshare-pid', '--die-with-parent', '/bin/true'], {
      stdio: 'pipe',
      timeout: 10_000,
    });
  const full = probe(['--disable-userns']);
  if (full.status === 0) return { kind: 'bwrap', path: bwrap, disableUserns: true };
  // bubblewrap before 0.8 has no --disable-userns: the rest of the sandbox still holds.
  if (probe([]).status === 0) return { kind: 'bwrap', path: bwrap, disableUserns: false };
  const why =
    String(full.stderr ?? '')
      .trim()
      .split('\n')[0] || `exit ${full.status}`;
  return {
    kind: 'none',
    reason: `bubblewrap cannot create its namespaces here (${why})`,
    install: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap)',
  };
}

/**
 * The sandbox a repository's commands run in, with the bubblewrap binary its config in force names
 * (`guard.sandbox.bwrap`, set by HERMESD_BWRAP): an environment that names another binary, or
 * `none`, is a loosening the user approves (approval.ts); until then bubblewrap on PATH.
 */
export function sandboxFor(config: { guard?: { sandbox?: { bwrap?: string } } } | undefined, env: NodeJS.ProcessEnv = process.env): SandboxAvailability {
  const bwrap = config?.guard?.sandbox?.bwrap;
  // Probed once per setting (every shell call of every agent asks).
  const found = cache.get(bwrap ?? '');
  if (found) return found;
  const { HERMESD_BWRAP: _ignored, ...rest } = env;
  return sandboxAvailability(bwrap === undefined ? rest : { ...rest, HERMESD_BWRAP: bwrap });
}

/** bwrap on PATH, as its real path. */
function bwrapOnPath(env: NodeJS.ProcessEnv): string | undefined {
  const found = findOnPath('bwrap', env);
  try {
    return found && realpathSync(found);
  } catch {
    return undefined;
  }
}

/** True when `child` is `parent` or below it. */
export function within(parent: string, child: string): boolean {
  const r = relative(parent, child);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The real path of an existing path, or undefined. */
export function realOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

type Mount = { op: '--bind' | '--ro-bind' | '--ro-bind-try' | '--tmpfs'; src?: string; dest: string; order: number };

/**
 * bubblewrap's file system arguments for a plan: everything read-only (`--ro-bind / /`), a fresh
 * /dev and /proc (the pid namespace's own: no other process, the daemon's root included, is
 * reachable through it), then the plan's mounts, parents before children (a read-only path
 * inside a writable tree comes after the tree), and at one depth in plan order.
 */
export function bwrapMountArgs(plan: SandboxPlan): string[] {
  const mounts: Mount[] = [];
  const add = (op: Mount['op'], dest: string, src: string | undefined, order: number) => mounts.push({ op, src, dest, order });
  if (plan.tmp) add('--bind', '/tmp', plan.tmp, 0);
  for (const p of plan.visible) add('--ro-bind', p, p, 1);
  for (const p of plan.writable) add('--bind', p, p, 2);
  for (const p of plan.hide) add('--tmpfs', p, undefined, 3);
  for (const p of plan.readOnly) add('--ro-bind', p, p, 4);
  for (const p of plan.maskDirs) add('--ro-bind', p, plan.empty, 5);
  for (const p of plan.maskFiles) add('--ro-bind', p, '/dev/null', 5);
  for (const [src, dest] of plan.files) add('--ro-bind', dest, src, 6);
  for (const [src, dest] of plan.scratch ?? []) add('--bind', dest, src, 6);
  // The agent socket goes with its daemon: a command that starts after the stop runs without it (its hooks find no daemon and refuse).
  if (plan.socket) add('--ro-bind-try', plan.socket[1], plan.socket[0], 7);
  const depth = (p: string) => (p === '/' ? 0 : p.split(sep).length);
  mounts.sort((a, b) => depth(a.dest) - depth(b.dest) || a.order - b.order);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const m of mounts) {
    if (m.op === '--tmpfs') args.push('--tmpfs', m.dest);
    else args.push(m.op, m.src!, m.dest);
  }
  return args;
}

/**
 * bubblewrap's isolation arguments, the same for every command hermesd confines: its own user,
 * pid, ipc and uts namespaces (no further user namespace where bubblewrap can forbid it), no
 * capability (root included: no mount, no remount of what is read-only), a session of its own
 * (no keystrokes pushed into the caller's terminal), and every process gone when the command's
 * shell ends (the pid namespace dies with its first process; `--die-with-parent` ends it with
 * its caller). The network is the plan's to give.
 */
export function bwrapIsolationArgs(avail: Extract<SandboxAvailability, { kind: 'bwrap' }>, plan: Pick<SandboxPlan, 'network'>): string[] {
  const args = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (avail.disableUserns) args.push('--disable-userns');
  if (!plan.network) args.push('--unshare-net');
  args.push('--cap-drop', 'ALL', '--die-with-parent', '--new-session');
  return args;
}

/** bubblewrap's argument list for `sh -c command` in `plan`. */
export function bwrapArgs(avail: Extract<SandboxAvailability, { kind: 'bwrap' }>, plan: SandboxPlan, command: string): string[] {
  return [...bwrapMountArgs(plan), ...bwrapIsolationArgs(avail, plan), '--chdir', plan.cwd, '--', '/bin/sh', '-c', command];
}

const sbString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * The Seatbelt profile of a plan (macOS sandbox-exec). Writes are allowed only below the
 * writable trees and the temporary directories, and never to the read-only paths; masked
 * files cannot be read; the network is denied unless allowed, except the agent socket.
 * There is no pid namespace on macOS: a background process can outlive its command, and
 * the after-the-fact checks are what catch its writes. Not tested on Linux CI.
 */
export function seatbeltProfile(plan: SandboxPlan): string {
  const sub = (p: string) => `(subpath ${sbString(p)})`;
  const lit = (p: string) => `(literal ${sbString(p)})`;
  const pathFilter = (p: string) => (isDirectory(p) ? sub(p) : lit(p));
  const writable = [...plan.writable, ...(plan.tmp ? [plan.tmp] : []), '/private/tmp', '/private/var/folders', '/dev'].map(sub);
  const lines = ['(version 1)', '(allow default)', `(deny file-write* (require-not (require-any ${writable.join(' ')})))`];
  if (plan.readOnly.length > 0) lines.push(`(deny file-write* ${plan.readOnly.map(pathFilter).join(' ')})`);
  const masked = [...plan.maskFiles.map(lit), ...plan.maskDirs.map(sub)];
  if (masked.length > 0) lines.push(`(deny file-read* ${masked.join(' ')})`);
  if (!plan.network) lines.push('(deny network-outbound (remote ip))', '(deny network-inbound (local ip))');
  if (plan.socket) lines.push(`(allow network-outbound (remote unix-socket (path-literal ${sbString(plan.socket[0])})))`);
  return lines.join('\n') + '\n';
}

function isDirectory(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The program and arguments that run `command` in the sandbox. */
export function sandboxCommand(avail: SandboxAvailability, plan: SandboxPlan, command: string): { file: string; args: string[] } {
  if (avail.kind === 'bwrap') return { file: avail.path, args: bwrapArgs(avail, plan, command) };
  if (avail.kind === 'sandbox-exec') return { file: avail.path, args: ['-p', seatbeltProfile(plan), '/bin/sh', '-c', command] };
  throw new Error(`no sandbox: ${avail.reason}`);
}

/** The real paths of those of `paths` that exist, without duplicates. */
export function existingReal(paths: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const r = realOf(p);
    if (r) out.add(r);
  }
  return [...out];
}

/**
 * The daemon's pid namespace, recorded in its runtime dir (read-only inside the sandbox), so
 * a git hook can tell it runs inside a sandboxed command — a task's commit — whatever that
 * command did to its environment: the sandbox has a pid namespace of its own.
 */
function namespaceFile(gitDir: string): string {
  return join(sandboxDir(gitDir), 'daemon-pidns');
}

function ownPidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

export function recordDaemonNamespace(gitDir: string): void {
  const ns = ownPidNamespace();
  if (!ns) return;
  const file = namespaceFile(gitDir);
  try {
    if (readFileSync(file, 'utf8') === ns) return;
  } catch {
    // not recorded yet
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, ns);
}
