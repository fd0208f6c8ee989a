/**
 * Test fixtures: real temporary git repositories, an isolated HERMES_HOME and socket dir,
 * and the real CLI run as a child process. Every daemon a test starts is stopped in
 * `cleanup()` (call it in afterEach/afterAll).
 */
import { execFileSync, spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI as the package installs it (package.json's bin): the bundle in dist/cli. */
export const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

export type TestEnv = {
  home: string;
  socketDir: string;
  env: NodeJS.ProcessEnv;
  /** Makes a temp git repository with one commit; files maps relative path → content. */
  repo(files?: Record<string, string>): string;
  /** Runs the hermesd CLI; resolves with exit code and output. */
  cli(args: string[], opts?: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<CliResult>;
  cleanup(): Promise<void>;
};

export type CliResult = { code: number; stdout: string; stderr: string; json: () => any };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
}

/** The developer's extra certificates, for a test's own npm install that may reach the registry (baseEnv drops them). */
export function npmCaCerts(): NodeJS.ProcessEnv {
  return process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};
}

/** Environment without the developer's own hermes/git settings leaking into a test. */
function baseEnv(home: string, socketDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('HERMESD_') || k.startsWith('GIT_') || k === 'OPENAI_BASE_URL' || k === 'OPENAI_API_KEY') delete env[k];
  }
  // Every Node process a test starts (the CLI, the daemon, the agents' CLIs, hook managers,
  // formatters) would read these certificates at its start, and none of them reaches a TLS
  // server: the model is local, installs from npm run with the developer's own environment
  // (npm-cache.ts), and the packed install hands them back (npmCaCerts, above).
  delete env.NODE_EXTRA_CA_CERTS;
  return {
    ...env,
    HERMES_HOME: home,
    HERMESD_SOCKET_DIR: socketDir,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    NO_COLOR: '1',
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  };
}

export function makeEnv(): TestEnv {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-')));
  const home = join(base, 'home');
  mkdirSync(home);
  // Short, private socket dir: sun_path is ~107 bytes.
  const socketDir = join(base, 's');
  // Codex's own state (trust of projects and hooks) is read by doctor: never the user's.
  const env = { ...baseEnv(home, socketDir), CODEX_HOME: join(base, 'codex-home') };
  const repos: string[] = [];

  const cli: TestEnv['cli'] = (args, opts = {}) =>
    new Promise((resolvePromise, reject) => {
      const spawnOpts: SpawnOptions = { cwd: opts.cwd ?? base, env: { ...env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] };
      const child = spawn(process.execPath, [CLI, ...args], spawnOpts);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 25_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({
          code: code ?? -1,
          stdout,
          stderr,
          json: () => {
            try {
              return JSON.parse(stdout);
            } catch {
              throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
            }
          },
        });
      });
      if (opts.input !== undefined) child.stdin!.end(opts.input);
      else child.stdin!.end();
    });

  return {
    home,
    socketDir,
    env,
    cli,
    repo(files = { 'README.md': '# test repo\n' }) {
      const dir = join(base, `repo${repos.length}`);
      mkdirSync(dir);
      repos.push(dir);
      git(dir, 'init', '-q', '-b', 'main');
      git(dir, 'config', 'user.name', 'Test');
      git(dir, 'config', 'user.email', 'test@example.com');
      git(dir, 'config', 'commit.gpgsign', 'false');
      writeFiles(dir, files);
      git(dir, 'add', '-A');
      execFileSync('git', ['commit', '-qm', 'initial'], { cwd: dir, env });
      return dir;
    },
    async cleanup() {
      for (const dir of repos) {
        await cli(['stop'], { cwd: dir }).catch(() => undefined);
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * `hermesd config approve` as a person runs it: at a terminal (a pty, from util-linux `script`),
 * typing "yes" at its question. Without a terminal it approves nothing (docs/guardrails.md).
 */
export function approveAtTerminal(t: TestEnv, cwd: string, env: NodeJS.ProcessEnv = {}, answer = 'yes'): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const command = `${shq(process.execPath)} ${shq(CLI)} config approve`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env: { ...t.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) });
    });
    // Typed once the question is there: a pty drops what comes before its reader switches modes.
    const typed = setInterval(() => {
      if (!stdout.includes('Type "yes"') && !stdout.includes('nothing to approve')) return;
      clearInterval(typed);
      child.stdin!.write(`${answer}\n`);
    }, 20);
    child.on('close', () => clearInterval(typed));
  });
}

/** True while `pid` runs (a zombie awaiting its reaper counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * A second install of hermesd at `dir` (its dist, templates, sources and package.json copied,
 * node_modules linked), as another version would be installed (`version`, else this one's);
 * its CLI's entry is returned.
 */
export function copyInstall(dir: string, opts: { version?: string } = {}): string {
  mkdirSync(dir, { recursive: true });
  for (const part of ['dist', 'templates', 'src']) cpSync(join(REPO_ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version: opts.version ?? pkg.version }));
  return join(dir, 'dist', 'cli', 'main.js');
}

/** Each repository's MEMORY.md under HERMES_HOME/projects (the folder also holds the daemon's config parse cache). */
export function repoMemoryFiles(home: string): string[] {
  const projects = join(home, 'projects');
  if (!existsSync(projects)) return [];
  return readdirSync(projects).filter((d) => existsSync(join(projects, d, 'MEMORY.md')));
}

/** Polls `cond` until it holds; throws after `ms`. */
export async function waitFor(cond: () => boolean, ms = 10_000, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs git in `cwd` with the test environment (so hooks reach the test daemon); throws on failure. */
export function gitIn(t: TestEnv, cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: t.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** `git commit …` with the test environment: exit code, stdout+stderr, and how long it took. */
export function commitIn(t: TestEnv, repo: string, args: string[], env: NodeJS.ProcessEnv = {}): { code: number; out: string; ms: number } {
  const started = Date.now();
  const r = spawnSync('git', ['commit', ...args], { cwd: repo, env: { ...t.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`, ms: Date.now() - started };
}
