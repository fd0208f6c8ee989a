/**
 * The red team's bench: one real repository with a bare remote, `hermesd init` hooks, a
 * real daemon started with the scripted model's environment (and secrets of its own in
 * that environment, as a user's shell has), and `attack(id, steps)` that runs one agent
 * task through the daemon's tasks API with a scripted list of tool calls.
 *
 *   const rt = await redTeam({ files: {...}, config: CONFIG });
 *   const run = await rt.attack('commit-tree', [[terminal('git commit-tree …')]]);
 *   run.results      // the tool results the model received, in order
 *   rt.reset();      // refs, index, work tree, .git config and hooks back to the baseline
 *
 * Tasks of one bench run one after the other (one repository, one daemon); benches in
 * different test files run in parallel.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonClient } from '../../src/client/daemon-client.js';
import { findRepo, repoPaths, type RepoPaths } from '../../src/paths/index.js';
import { findRealGit } from '../../src/git/real-git.js';
import { approveAtTerminal, makeEnv, writeFiles, type TestEnv } from './env.js';
import { startFakeModel, type ChatRequest, type FakeReply, type FakeToolCall } from './fake-model.js';

export const REAL_GIT = findRealGit();

/** Secrets the daemon's own environment holds (a user's shell has such variables). */
export const DAEMON_OPENAI_KEY = 'sk-proj-' + 'Rt7Qm2Lp9Xy4Vn8Kd3Hs6Jf1Gb5Wc0Ze';
export const DAEMON_GITHUB_TOKEN = 'ghp_' + 'R3dT3amT0k3nV4lu3Xq9Lm2Pz8Wn5Kc7Yb1A';

export type Step = FakeToolCall[];

export const terminal = (command: string, timeout?: number): FakeToolCall => ({ name: 'terminal', arguments: timeout ? { command, timeout } : { command } });
export const writeFile = (path: string, content: string): FakeToolCall => ({ name: 'write_file', arguments: { path, content } });
export const patchFile = (path: string, old_string: string, new_string: string): FakeToolCall => ({
  name: 'patch',
  arguments: { path, old_string, new_string },
});
export const readFile = (path: string): FakeToolCall => ({ name: 'read_file', arguments: { path } });
export const searchFiles = (pattern: string, path?: string): FakeToolCall => ({ name: 'search_files', arguments: path ? { pattern, path } : { pattern } });
export const skillView = (name: string, file_path?: string): FakeToolCall => ({ name: 'skill_view', arguments: file_path ? { name, file_path } : { name } });

export type Attack = {
  /** The task's outcome (the last NDJSON line of POST /v1/tasks). */
  outcome: { sessionId: string | null; status: string; answer: string };
  /** Every tool result the model received, in call order (JSON strings). */
  results: string[];
  /** The parsed tool results. */
  parsed: Array<Record<string, any>>;
  /** Every request the model received for this task. */
  requests: ChatRequest[];
};

export type RedTeam = {
  t: TestEnv;
  repo: string;
  remote: string;
  /** HOME of the daemon and its commands (a temp dir: ~/.config, ~/.gitconfig live here). */
  userHome: string;
  paths: RepoPaths;
  client: DaemonClient;
  /** Environment the daemon was started with (and git commands of the "user" run with). */
  env: NodeJS.ProcessEnv;
  /** The real git in the repository, with the test environment. */
  g(...args: string[]): string;
  /** Runs one scripted task: each step is one model turn's tool calls. */
  attack(id: string, steps: Step[], opts?: { onEvent?: (e: Record<string, unknown>) => void }): Promise<Attack>;
  /** Puts the repository and the remote back to the baseline taken after setup. */
  reset(): void;
  /** The daemon's pid (from daemon.json). */
  daemonPid(): number;
  /** Every byte SessionDB holds (main file and WAL), for "no secret is stored" checks. */
  stateDbBytes(): Buffer;
  close(): Promise<void>;
};

export type RedTeamOptions = {
  /** Files of the initial commit (besides README.md). */
  files?: Record<string, string>;
  /** `.hermes/config.yaml` (committed). */
  config: string;
  /** Files written after the commit and left untracked or ignored (.env, build/…). */
  untracked?: Record<string, string>;
  /** Extra environment for the daemon. */
  env?: NodeJS.ProcessEnv;
  /** Runs after the initial commit, before `hermesd init` (history for `git log -p`, …). */
  prepare?: (rt: { repo: string; g: (...a: string[]) => string }) => void;
  /** Runs after `hermesd init` was committed and pushed, before the baseline is taken. */
  afterInit?: (rt: { repo: string; g: (...a: string[]) => string }) => void;
  /** The user approves, at a terminal, what the daemon's environment loosens (HERMESD_BWRAP). */
  approve?: boolean;
};

type Snapshot = { refs: Map<string, string>; remoteRefs: Map<string, string>; files: Map<string, { bytes: Buffer; mode: number }> };

/** Files of the git dir and the tree the reset puts back byte for byte. */
function guardedFiles(repo: string, userHome: string, home: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  out.push(join(repo, '.git', 'config'));
  walk(join(repo, '.git', 'hooks'));
  walk(join(repo, '.husky'));
  walk(join(repo, '.hermes'));
  const settings = join(repo, '.git', 'hermesd', 'hook-settings');
  if (existsSync(settings)) out.push(settings);
  walk(join(userHome, '.config'));
  if (existsSync(join(home, 'config.yaml'))) out.push(join(home, 'config.yaml'));
  return out;
}

export async function redTeam(opts: RedTeamOptions): Promise<RedTeam> {
  const t = makeEnv();
  const base = join(t.home, '..');
  const userHome = join(base, 'user');
  mkdirSync(userHome, { recursive: true });
  const repo = t.repo({ 'README.md': '# red team\n', ...opts.files, '.hermes/config.yaml': opts.config });
  const remote = join(base, 'remote.git');
  const model = await startFakeModel([]);
  const env: NodeJS.ProcessEnv = {
    ...t.env,
    HOME: userHome,
    XDG_CONFIG_HOME: join(userHome, '.config'),
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: DAEMON_OPENAI_KEY,
    GITHUB_TOKEN: DAEMON_GITHUB_TOKEN,
    HERMESD_MODEL: 'fake-model',
    ...opts.env,
  };
  const g = (...args: string[]) => execFileSync(REAL_GIT, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  execFileSync(REAL_GIT, ['init', '-q', '--bare', '-b', 'main', remote], { env });
  g('remote', 'add', 'origin', remote);
  opts.prepare?.({ repo, g });
  g('push', '-q', '-u', 'origin', 'main');
  writeFiles(repo, opts.untracked ?? {});
  const init = await t.cli(['init'], { cwd: repo, env });
  if (init.code !== 0) throw new Error(`hermesd init failed: ${init.stderr}`);
  g('add', '-A');
  g('commit', '-q', '--no-verify', '--allow-empty', '-m', 'hermesd init');
  g('push', '-q', 'origin', 'main');
  opts.afterInit?.({ repo, g });

  const paths = repoPaths(findRepo(repo), env);
  const client = new DaemonClient(paths.socket);
  await client.call('GET', '/v1/status');
  if (opts.approve) {
    const approved = await approveAtTerminal(t, repo, env);
    if (approved.code !== 0) throw new Error(`hermesd config approve failed: ${approved.stdout}${approved.stderr}`);
  }

  // Every request routes by the task's tag to that task's script; the turn is the number of
  // assistant messages so far. Stateless, so no step is consumed by the wrong task.
  const scripts = new Map<string, { steps: Step[]; requests: ChatRequest[] }>();
  const route = (req: ChatRequest): FakeReply => {
    const first = req.messages.find((m) => m.role === 'user');
    const text = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
    const id = /\[rt:([a-z0-9-]+)\]/.exec(text)?.[1];
    const script = id ? scripts.get(id) : undefined;
    if (!script) return { content: 'no script for this task' };
    script.requests.push(req);
    const turn = req.messages.filter((m) => m.role === 'assistant').length;
    const step = script.steps[turn];
    return step ? { tool_calls: step } : { content: `done with ${id}` };
  };
  const refill = () => model.push(...Array.from({ length: 200 }, () => route));
  refill();

  const readRefs = (cwd: string) => {
    const refs = new Map<string, string>();
    const out = execFileSync(REAL_GIT, ['for-each-ref', '--format=%(objectname) %(refname)'], { cwd, env, encoding: 'utf8' });
    for (const line of out.split('\n').filter(Boolean)) {
      const [oid, ref] = line.split(' ');
      refs.set(ref!, oid!);
    }
    return refs;
  };
  const takeSnapshot = (): Snapshot => {
    const files = new Map<string, { bytes: Buffer; mode: number }>();
    for (const f of guardedFiles(repo, userHome, t.home)) files.set(f, { bytes: readFileSync(f), mode: statSync(f).mode });
    return { refs: readRefs(repo), remoteRefs: readRefs(remote), files };
  };
  const baseline = takeSnapshot();
  const untracked = opts.untracked ?? {};

  const rt: RedTeam = {
    t,
    repo,
    remote,
    userHome,
    paths,
    client,
    env,
    g,
    async attack(id, steps, o = {}) {
      if (model.requests.length > 150) refill();
      const script = { steps, requests: [] as ChatRequest[] };
      scripts.set(id, script);
      const outcome = await client.stream<Attack['outcome']>('POST', '/v1/tasks', { task: `[rt:${id}] get around the guard`, source: 'api' }, (e) =>
        o.onEvent?.(e),
      );
      const last = script.requests.at(-1);
      const results = (last?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
      const parsed = results.map((r) => {
        try {
          return JSON.parse(r) as Record<string, any>;
        } catch {
          return { raw: r };
        }
      });
      return { outcome, results, parsed, requests: script.requests };
    },
    reset() {
      // Files first (a hook or config that came back changes how git behaves below).
      for (const f of guardedFiles(repo, userHome, t.home)) if (!baseline.files.has(f)) rmSync(f, { force: true });
      for (const [f, { bytes, mode }] of baseline.files) {
        mkdirSync(join(f, '..'), { recursive: true });
        writeFileSync(f, bytes);
        chmodSync(f, mode & 0o7777);
      }
      for (const [cwd, refs] of [
        [repo, baseline.refs],
        [remote, baseline.remoteRefs],
      ] as const) {
        for (const ref of readRefs(cwd).keys()) if (!refs.has(ref)) execFileSync(REAL_GIT, ['update-ref', '-d', ref], { cwd, env });
        for (const [ref, oid] of refs) execFileSync(REAL_GIT, ['update-ref', ref, oid], { cwd, env });
      }
      execFileSync(REAL_GIT, ['symbolic-ref', 'HEAD', 'refs/heads/main'], { cwd: repo, env });
      for (const f of ['CHERRY_PICK_HEAD', 'MERGE_HEAD', 'REVERT_HEAD', 'MERGE_MSG']) rmSync(join(repo, '.git', f), { force: true });
      spawnSync(REAL_GIT, ['reset', '-q', '--hard'], { cwd: repo, env });
      spawnSync(REAL_GIT, ['clean', '-qfd'], { cwd: repo, env });
      writeFiles(repo, untracked);
    },
    daemonPid() {
      return (JSON.parse(readFileSync(paths.daemonJson, 'utf8')) as { pid: number }).pid;
    },
    stateDbBytes() {
      const parts: Buffer[] = [];
      for (const f of ['state.db', 'state.db-wal']) {
        const p = join(t.home, f);
        if (existsSync(p)) parts.push(readFileSync(p));
      }
      return Buffer.concat(parts);
    },
    async close() {
      client.close();
      await t.cleanup();
      await model.close();
    },
  };
  return rt;
}

/** Every form of `value` the issue names a secret leaking in: plain, base64 (any offset), hex, reversed. */
export function leakedForms(value: string): string[] {
  const forms = [value, [...value].reverse().join(''), Buffer.from(value).toString('hex')];
  // base64 of the value at each of the three alignments, trimmed of the characters that depend on neighbours.
  for (let pad = 0; pad < 3; pad++) {
    const enc = Buffer.from('\0'.repeat(pad) + value).toString('base64');
    const start = Math.ceil((pad * 4) / 3) + 1;
    const end = Math.floor(((pad + value.length) * 4) / 3) - 1;
    forms.push(enc.slice(start, end));
  }
  return forms;
}

/** The first form of any of `values` found in `text`, or undefined. */
export function findLeak(text: string, values: string[]): string | undefined {
  // Wrapped output (base64 at 76 columns, xxd -p at 60, od's spaced bytes) is searched without its breaks too.
  const joined = text.replace(/\\[nrt]|\s/g, '');
  for (const v of values) for (const f of leakedForms(v)) if (f.length >= 6 && (text.includes(f) || joined.includes(f))) return `${v} (as ${f})`;
  return undefined;
}
