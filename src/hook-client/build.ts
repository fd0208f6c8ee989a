/**
 * Building hermesd's client (client.c) with the machine's C compiler: the one better-sqlite3's
 * build already needed. `npm run build` (and so `npm pack`) builds it into `dist/client/`;
 * `hermesd init` copies that into the clone when it runs on this machine and speaks this
 * package's protocol and version, and compiles it there when it does not (a package built on
 * another machine). Where it cannot be built, the hooks use curl (runners/curl.sh) and
 * `status` and `doctor` say why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT, VERSION } from '../version.js';
import { agentHooksHeader } from '../protocol/agent-hooks.js';
import { PROTOCOL } from '../protocol/ask.js';

/** The client's source in this package. */
export const CLIENT_SOURCE = join(PACKAGE_ROOT, 'src', 'hook-client', 'client.c');
/** The client this package built (npm run build, or its install). */
export const PREBUILT_CLIENT = join(PACKAGE_ROOT, 'dist', 'client', 'hermesd-client');
/** A compile takes well under a second; one that hangs must not hold `init`. */
const COMPILE_TIMEOUT_MS = 60_000;

/** The compiler: $HERMESD_CC (tests, and a user whose `cc` is elsewhere), else $CC, else `cc`. */
function compiler(env: NodeJS.ProcessEnv): string {
  return env.HERMESD_CC || env.CC || 'cc';
}

/**
 * Compiles C `source` with `args` into `out` (written whole or not at all; `mode` its mode).
 * Returns why when it could not. Also builds the sandbox's record of refused writes
 * (guard/refused-preload.ts).
 */
export function compileC(source: string, out: string, args: string[], o: { env?: NodeJS.ProcessEnv; mode?: number; libs?: string[] } = {}): string | undefined {
  const env = o.env ?? process.env;
  const cc = compiler(env);
  const tmp = `${out}.${process.pid}.tmp`;
  mkdirSync(dirname(out), { recursive: true });
  try {
    execFileSync(cc, [...args, '-o', tmp, source, ...(o.libs ?? [])], { stdio: ['ignore', 'ignore', 'pipe'], timeout: COMPILE_TIMEOUT_MS, env });
    chmodSync(tmp, o.mode ?? 0o755);
    renameSync(tmp, out);
    return undefined;
  } catch (err) {
    rmSync(tmp, { force: true });
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    const said = e.stderr?.toString().trim().split('\n').slice(-3).join(' ');
    return e.code === 'ENOENT' ? `no C compiler (${cc} not found; install one, e.g. build-essential, or set CC)` : `${cc} failed: ${said || e.message}`;
  }
}

/** Whether a program started with the shared library `lib` preloaded runs and says nothing (one built for another machine makes the loader complain in every process). */
export function loadsHere(lib: string): boolean {
  const r = spawnSync('/bin/sh', ['-c', ':'], { env: { PATH: '/usr/bin:/bin', LD_PRELOAD: lib }, encoding: 'utf8', timeout: 5_000 });
  return r.status === 0 && !r.stderr;
}

/**
 * Compiles client.c into `out`, with the agents' table it includes generated from
 * agent-hooks.ts beside it. `as` builds another install's client (a test of a protocol change).
 * Returns why when it could not.
 */
export function compileClient(
  out: string,
  env: NodeJS.ProcessEnv = process.env,
  as: { protocol: number; version: string } = { protocol: PROTOCOL, version: VERSION },
): string | undefined {
  const include = mkdtempSync(join(tmpdir(), 'hermesd-client-'));
  try {
    writeFileSync(join(include, 'agent-hooks.h'), agentHooksHeader());
    const args = ['-O2', `-DHERMESD_PROTOCOL=${as.protocol}`, `-DHERMESD_VERSION="${as.version}"`, '-I', include];
    // Linked statically where the C library's static archive is here: every hook starts the client, and a static one
    // starts without the dynamic loader resolving libc (docs/benchmarks.md#agent-hooks). Position-independent, so that
    // its addresses stay random: it reads what an agent's model wrote and what a listener at the socket answers. It
    // takes the client's place only once it runs here and says what it is; else the client is linked as the system links.
    const trial = `${out}.${process.pid}.static`;
    if (compileC(CLIENT_SOURCE, trial, [...args, '-static-pie', '-s'], { env }) === undefined && runsHere(trial, as)) {
      renameSync(trial, out);
      return undefined;
    }
    rmSync(trial, { force: true });
    return compileC(CLIENT_SOURCE, out, args, { env });
  } finally {
    rmSync(include, { recursive: true, force: true });
  }
}

/**
 * Puts the client at `out` (a clone's `<common-dir>/hermesd/client`): a copy of the package's
 * build, else compiled here. Records why in `<out>.error` when neither worked, and removes
 * that record once it works.
 */
export function installClient(
  out: string,
  env: NodeJS.ProcessEnv = process.env,
  prebuilt = PREBUILT_CLIENT,
): { built: true } | { built: false; error: string } {
  const record = `${out}.error`;
  let error: string | undefined;
  if (runsHere(prebuilt)) {
    const tmp = `${out}.${process.pid}.tmp`;
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(prebuilt, tmp);
    chmodSync(tmp, 0o755);
    renameSync(tmp, out);
  } else {
    error = compileClient(out, env);
  }
  if (error === undefined) {
    rmSync(record, { force: true });
    return { built: true };
  }
  rmSync(out, { force: true });
  writeFileSync(record, `${error}\n`);
  return { built: false, error };
}

/** Whether `client` runs on this machine and is this package's (its `-V` names this version and protocol), or the one `as` names. */
function runsHere(client: string, as: { protocol: number; version: string } = { protocol: PROTOCOL, version: VERSION }): boolean {
  if (!existsSync(client)) return false;
  try {
    return execFileSync(client, ['-V'], { encoding: 'utf8', timeout: 5_000 }).trim() === `hermesd-client ${as.version} protocol ${as.protocol}`;
  } catch {
    return false;
  }
}

/** What `<client>.error` says: why this clone's hooks use curl (undefined: the client is built). */
export function clientProblem(out: string): string | undefined {
  if (existsSync(out)) return undefined;
  try {
    return readFileSync(`${out}.error`, 'utf8').trim() || 'not built';
  } catch {
    return 'not built (run hermesd init)';
  }
}
