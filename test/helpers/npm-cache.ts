/**
 * Third-party tools the tests run for real (the agent CLIs, the MCP Inspector, old husky majors),
 * pinned and installed from npm into a cache outside the project's dependencies: a tool that needs
 * another Node than the project's (the Inspector asks for Node 22 in its engines) or compiles
 * native code never reaches `npm ci`.
 *
 *   const dir = await npmCached({ pkg: '@modelcontextprotocol/inspector', version: '1.0.3' });
 *
 * The cache: `node_modules/.cache/hermesd-agent-clis/<package>@<version>/`. A missing one is
 * installed by `npm install` into a private folder beside it and renamed into place once complete
 * (and checked, when the caller gives a check), so two test files asking at once each get a whole
 * install (the first rename wins; the other's copy is dropped) and an interrupted install leaves
 * nothing that looks finished. A failed install throws with npm's own words.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout: the first folder up from here with a package.json (test/helpers/ in tests, dist/test/helpers/ in the benchmark). */
function checkout(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

export const NPM_CACHE = join(checkout(), 'node_modules', '.cache', 'hermesd-agent-clis');
/** One package's download and install (~100–250 MB for an agent CLI): bounded, so a stalled registry fails the test instead of hanging it. */
export const INSTALL_TIMEOUT_MS = 300_000;

export type NpmPin = {
  pkg: string;
  version: string;
  /** npm install flags beyond the common ones. */
  flags?: string[];
  /** Whether its install script must run (npm 11 asks for that in the installing package.json). */
  script?: true;
  /** Other packages installed beside it (e.g. lint-staged with a husky), `name@version`. */
  with?: string[];
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export function runTool(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; out: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, timedOut });
    });
  });
}

export const tail = (s: string, n = 2_000) => (s.length > n ? `…${s.slice(-n)}` : s);

/**
 * The folder holding `node_modules/<pkg>` of the pinned version, installed when missing. `check`
 * runs on a fresh install before it is put in place (throw to refuse it).
 */
export async function npmCached(pin: NpmPin, check?: (dir: string) => Promise<void>): Promise<string> {
  const name = `${pin.pkg.replace('/', '+')}@${pin.version}${pin.with?.length ? `+${pin.with.join('+').replace(/\//g, '+')}` : ''}`;
  const dir = join(NPM_CACHE, name);
  if (existsSync(dir)) return dir;

  mkdirSync(NPM_CACHE, { recursive: true });
  // Private folders of installs whose process is gone (killed mid-install) are dropped.
  for (const entry of readdirSync(NPM_CACHE)) {
    const m = new RegExp(`^${name.replace(/[.+^$]/g, '\\$&')}\\.tmp-(\\d+)-`).exec(entry);
    if (m && !alive(Number(m[1]))) rmSync(join(NPM_CACHE, entry), { recursive: true, force: true });
  }
  const tmp = join(NPM_CACHE, `${name}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(tmp);
  try {
    writeFileSync(join(tmp, 'package.json'), JSON.stringify({ private: true, ...(pin.script ? { allowScripts: { [pin.pkg]: true } } : {}) }) + '\n');
    // The developer's npm config and cache as they are (registry, proxy, certificates); nothing of the test's environment.
    const r = await runTool(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...(pin.flags ?? []),
        `${pin.pkg}@${pin.version}`,
        ...(pin.with ?? []),
      ],
      { cwd: tmp, env: process.env, timeoutMs: INSTALL_TIMEOUT_MS },
    );
    if (r.timedOut)
      throw new Error(`installing ${pin.pkg}@${pin.version} from npm took longer than ${INSTALL_TIMEOUT_MS / 1000} s and was stopped:\n${tail(r.out)}`);
    if (r.code !== 0) throw new Error(`installing ${pin.pkg}@${pin.version} from npm failed (npm exited ${r.code}):\n${tail(r.out)}`);
    await check?.(tmp);
    try {
      renameSync(tmp, dir);
    } catch (err) {
      // Another test file finished the same install first: keep its copy.
      if (!existsSync(dir)) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
