import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import {
  checkSocketPath,
  clientPath,
  findRepo,
  hermesHome,
  prepareHome,
  prepareSocketFolder,
  repoPaths,
  sharedRuntimeDirOf,
  socketDir,
  SOCKET_PATH_MAX_BYTES,
  type RepoPaths,
} from '../../paths/index.js';
import { clientProblem } from '../../hook-client/build.js';
import { modelEnvWarnings } from '../../protocol/model-env.js';
import { MODEL_PROBE_TIMEOUT_MS, probeModel } from '../../model/probe.js';
import { DaemonClient } from '../../client/daemon-client.js';
import { probe, socketMismatch, type Status } from '../../client/lifecycle.js';
import { NotARepository, RemoteError } from '../../errors/index.js';
import { action, color, globals, output } from '../runtime.js';
import type { DoctorCheck } from '../runtime.js';

type Check = DoctorCheck;

/** The checks other commands' modules own (the skills index, the sandbox), loaded when doctor runs. */
const contributedChecks: Array<() => Promise<Check>> = [
  async () => (await import('./skills.js')).skillsCheck(),
  async () => (await import('./config.js')).sandboxCheck(),
];

/** inotify watches needed: one per watched directory, so a few thousand is comfortable. */
const MIN_INOTIFY_WATCHES = 8192;

function nodeCheck(): Check {
  const [maj, min] = process.versions.node.split('.').map(Number) as [number, number];
  const ok = maj > 20 || (maj === 20 && min >= 19);
  return ok
    ? { name: 'node', status: 'ok', detail: `Node ${process.versions.node}` }
    : { name: 'node', status: 'fail', detail: `Node ${process.versions.node}`, fix: 'Install Node 20.19 or newer.' };
}

function sqliteCheck(): Check[] {
  try {
    const require = createRequire(import.meta.url);
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(':memory:');
    const version = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
    const out: Check[] = [{ name: 'sqlite', status: 'ok', detail: `better-sqlite3 loads, SQLite ${version}` }];
    try {
      db.exec("create virtual table t using fts5(x); create virtual table g using fts5(x, tokenize='trigram')");
      out.push({ name: 'fts5', status: 'ok', detail: 'FTS5 with the trigram tokenizer' });
    } catch (err) {
      out.push({
        name: 'fts5',
        status: 'fail',
        detail: String(err),
        fix: 'Reinstall better-sqlite3 (npm rebuild better-sqlite3); its bundled SQLite has FTS5.',
      });
    }
    db.close();
    return out;
  } catch (err) {
    return [
      {
        name: 'sqlite',
        status: 'fail',
        detail: `better-sqlite3 does not load: ${(err as Error).message.split('\n')[0]}`,
        fix: 'Run npm rebuild better-sqlite3 (needs python3, make, g++).',
      },
    ];
  }
}

/** The socket folder made and written as a daemon would; inside a work tree, its socket's path within sun_path. */
function socketCheck(): Check {
  const dir = socketDir();
  try {
    prepareSocketFolder(dir);
  } catch (err) {
    return { name: 'socket', status: 'fail', detail: (err as Error).message };
  }
  let paths: RepoPaths;
  try {
    paths = repoPaths(findRepo());
  } catch {
    return { name: 'socket', status: 'ok', detail: `folder ${dir} usable (each work tree's daemon listens there)` };
  }
  try {
    checkSocketPath(paths.socket);
    return { name: 'socket', status: 'ok', detail: `${paths.socket} (${Buffer.byteLength(paths.socket)}/${SOCKET_PATH_MAX_BYTES} bytes)` };
  } catch (err) {
    return { name: 'socket', status: 'fail', detail: (err as Error).message };
  }
}

/** $HERMES_HOME made and written as a daemon would. */
function homeCheck(): Check {
  const home = hermesHome();
  try {
    prepareHome(home);
    return { name: 'home', status: 'ok', detail: `${home} usable` };
  } catch (err) {
    return { name: 'home', status: 'fail', detail: (err as Error).message };
  }
}

function inotifyCheck(): Check {
  try {
    const watches = Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim());
    const instances = Number(readFileSync('/proc/sys/fs/inotify/max_user_instances', 'utf8').trim());
    const detail = `max_user_watches ${watches}, max_user_instances ${instances}`;
    if (watches < MIN_INOTIFY_WATCHES || instances < 16)
      return { name: 'inotify', status: 'warn', detail, fix: 'sudo sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512' };
    return { name: 'inotify', status: 'ok', detail };
  } catch {
    return { name: 'inotify', status: 'warn', detail: 'inotify limits not readable (not Linux?)', fix: 'The watcher falls back to the platform watcher.' };
  }
}

/** Git's version as simple-git parses it (doctor runs once, by hand: a few ms of task queue are nothing here). */
async function gitCheck(): Promise<Check> {
  const { userGit } = await import('../../git/simple.js');
  try {
    const v = await userGit(process.cwd()).version();
    if (!v.installed) return { name: 'git', status: 'fail', detail: 'git not found', fix: 'Install git.' };
    const detail = `git version ${v.major}.${v.minor}${v.patch === '' ? '' : `.${v.patch}`}${v.agent ? ` (${v.agent})` : ''}`;
    const ok = v.major > 2 || (v.major === 2 && v.minor >= 25);
    return ok ? { name: 'git', status: 'ok', detail } : { name: 'git', status: 'warn', detail, fix: 'Git 2.25 or newer is recommended.' };
  } catch (err) {
    return {
      name: 'git',
      status: 'fail',
      detail: `git did not run: ${(err as Error).message.split('\n')[0]}`,
      fix: 'Install git, or check that the git on PATH runs.',
    };
  }
}

async function daemonCheck(): Promise<{ check: Check; status?: Status }> {
  try {
    const paths = repoPaths(findRepo());
    const s = await probe(paths);
    if (!s) return { check: { name: 'daemon', status: 'ok', detail: 'not running (starts on demand)' } };
    const warnings = [...(Array.isArray(s.warnings) ? s.warnings : []), ...[socketMismatch(paths, s)].filter((w): w is string => w !== undefined)];
    return {
      status: s,
      check: warnings.length
        ? { name: 'daemon', status: 'warn', detail: `pid ${s.pid}: ${warnings.join('; ')}` }
        : { name: 'daemon', status: 'ok', detail: `running, pid ${s.pid}, socket ${s.socket}` },
    };
  } catch (err) {
    return { check: { name: 'daemon', status: 'warn', detail: (err as Error).message } };
  }
}

/** The model endpoint as the daemon sees it (a daemon started by a hook keeps that hook's environment); without one, as this shell would start it. */
async function modelCheck(status: Status | undefined): Promise<Check[]> {
  const out: Check[] = [];
  if (status) {
    for (const w of modelEnvWarnings(status.modelEnv)) out.push({ name: 'model-env', status: 'warn', detail: w.replace(/^model-env: /, '') });
    try {
      const c = await new DaemonClient(String(status.socket)).call<Check>('GET', '/v1/model/check', undefined, { timeoutMs: MODEL_PROBE_TIMEOUT_MS + 2_000 });
      out.push({ ...c, detail: `${c.detail} (as the daemon, pid ${status.pid}, sees it)` });
      return out;
    } catch (err) {
      if (err instanceof RemoteError && err.code === 'config-error')
        return [...out, { name: 'config', status: 'fail', detail: err.message, fix: 'Fix the file and line named above.' }];
      // an older daemon without the route: probe from here
    }
  }
  const [{ loadConfig }, { modelSettings }] = await Promise.all([import('../../config/load.js'), import('../../model/client.js')]);
  let root: string | undefined;
  try {
    root = findRepo().root;
  } catch {
    root = undefined;
  }
  let settings;
  try {
    settings = modelSettings(loadConfig({ root, home: hermesHome() }).model);
  } catch (err) {
    return [...out, { name: 'config', status: 'fail', detail: (err as Error).message, fix: 'Fix the file and line named above.' }];
  }
  return [...out, await probeModel(settings)];
}

/** Whether git runs hermesd's hooks, and where core.hooksPath points. */
async function hooksChecks(): Promise<Check[]> {
  let repo;
  try {
    repo = findRepo();
  } catch {
    return [];
  }
  const [{ hookHealth }, { userGit }] = await Promise.all([import('../../githooks/health.js'), import('../../git/simple.js')]);
  const h = hookHealth(repo);
  // As the user's git reads it (their environment: a GIT_CONFIG_GLOBAL changes the answer).
  const hooksPath = (await userGit(repo.root).getConfig('core.hooksPath')).value;
  const pathCheck: Check = {
    name: 'hookspath',
    status: h.installed && !h.active && h.problems.some((p) => p.includes('core.hooksPath')) ? 'fail' : 'ok',
    detail:
      hooksPath !== null
        ? `core.hooksPath = ${hooksPath} (git runs hooks from ${h.hooksDir ?? '?'})`
        : `core.hooksPath unset (git runs hooks from ${h.hooksDir ?? '.git/hooks'})`,
  };
  if (!h.installed) return [{ name: 'hooks', status: 'warn', detail: 'not installed in this repository', fix: 'hermesd init' }, pathCheck];
  if (h.active)
    return [
      {
        name: 'hooks',
        status: 'ok',
        detail: `installed and active (${h.manager === 'git' ? '.git/hooks' : h.manager}${h.via ? `, git reaches hermesd through ${h.via}` : ''})`,
      },
      pathCheck,
    ];
  return [{ name: 'hooks', status: 'fail', detail: `installed with ${h.manager} but NOT active: ${h.problems.join('; ')}`, fix: 'hermesd init' }, pathCheck];
}

/** The paths the Codex permission profile `init --agents codex` would write now (the config in force, the paths there). */
async function expectedCodexPaths(root: string): Promise<string[]> {
  const [{ configInForce }, { codexProfile }] = await Promise.all([import('../../guard/approval.js'), import('../../guard/agent-shell.js')]);
  return codexProfile(configInForce(hermesHome(), root), root).paths;
}

/** Whether each agent set up with `init --agents` still has hermesd's hooks and MCP server in its configs. */
async function agentsChecks(): Promise<Check[]> {
  let repo;
  try {
    repo = findRepo();
  } catch {
    return [];
  }
  const [{ agentsHealth }, { readCodexProfile }, { codexUserConfig }] = await Promise.all([
    import('../../other-agents/health.js'),
    import('../../other-agents/codex-profile.js'),
    import('../../other-agents/codex-trust.js'),
  ]);
  const h = agentsHealth(repo);
  if (h.unsetUp.length) {
    return [
      {
        name: 'agents',
        status: 'warn',
        detail: `the committed configs of ${h.unsetUp.join(', ')} run hermesd, but it is not set up in this clone: their hooks do nothing and the hermesd MCP server does not start`,
        fix: `hermesd init --agents ${h.unsetUp.join(',')}`,
      },
    ];
  }
  if (!h.installed.length) return [];
  const fix = `hermesd init --agents ${h.installed.join(',')}`;
  const wanted = h.installed.includes('codex') ? await expectedCodexPaths(repo.root) : [];
  const root = repo.root;
  const checks = h.agents.map((a): Check => {
    if (a.notInstalled)
      return { name: a.agent, status: 'ok', detail: `not installed (${a.notInstalled}): hermesd's entries in its project configs wait for it` };
    if (a.problems.length)
      return {
        name: a.agent,
        status: 'fail',
        detail: `hermesd's entries are not all in ${a.agent}'s configs, so it runs without them: ${a.problems.join('; ')}`,
        fix,
      };
    if (a.skipped)
      return {
        name: a.agent,
        status: 'fail',
        detail: `hermesd's hooks and MCP server are in its project configs, but it will not run them: ${a.skipped.detail}`,
        fix: a.skipped.fix,
      };
    if (a.agent !== 'codex') return { name: a.agent, status: 'ok', detail: "hermesd's hooks and MCP server in its project configs" };
    const trusted = "hermesd's hooks and MCP server in its project configs; the project and the hooks trusted";
    const written = readCodexProfile(repo.root);
    if (!written)
      return {
        name: a.agent,
        status: 'ok',
        detail: `${trusted}; Codex's sandbox is as your config chooses it: protected files a shell command changes there are put back after the call`,
      };
    // Codex prefers the older sandbox settings wherever sandbox_mode is set: then the project's profile is not used.
    const user = codexUserConfig();
    if ('sandbox_mode' in user.parsed) {
      return {
        name: a.agent,
        status: 'ok',
        detail: `${trusted}; Codex's sandbox follows sandbox_mode in ${user.path}, not hermesd's permission profile: protected files a shell command changes there are put back after the call`,
      };
    }
    const missing = wanted.filter((p) => !written.paths.includes(p));
    if (missing.length) {
      return {
        name: a.agent,
        status: 'warn',
        detail: `${trusted}; but hermesd's permission profile for Codex's sandbox (${written.name}) was written before ${missing.join(', ')} (a rule since, or a path there since): in Codex's sandbox those are writable, and put back only after each shell call`,
        fix: 'hermesd init --agents codex',
      };
    }
    return { name: a.agent, status: 'ok', detail: `${trusted}; Codex's sandbox runs hermesd's permission profile (the protected paths read-only)` };
  });
  return [...checks, ...(await authorityChecks(root, h))];
}

/**
 * An agent whose own setting could name the authority, but does not now (the authority changed
 * since init: HERMES.md added, say): it is given the authority at session start meanwhile, and
 * init again writes the setting.
 */
async function authorityChecks(root: string, h: { agents: Array<{ agent: string; notInstalled?: string }> }): Promise<Check[]> {
  const [{ loadAuthority }, { agentViews, NATIVE_READING }] = await Promise.all([
    import('../../context/authority.js'),
    import('../../other-agents/instruction-files.js'),
  ]);
  const authority = await loadAuthority({ cwd: root, root });
  const present = new Set(h.agents.filter((a) => !a.notInstalled).map((a) => a.agent));
  return agentViews(root, authority)
    .filter((v) => present.has(v.agent) && v.delivery === 'session-start' && v.settingFor)
    .map((v) => {
      const setting = NATIVE_READING[v.agent].setting!;
      return {
        name: `${v.agent} authority`,
        status: 'warn' as const,
        detail: `the authority is ${v.authority.join(', ')}, but ${setting.key} in ${setting.file} ${v.settingNames ? `names ${v.settingNames.join(', ')}` : 'is not set'}: hermesd gives the authority at its session start until the setting names it`,
        fix: `hermesd init --agents ${v.agent}`,
      };
    });
}

/**
 * How the hooks reach the daemon: hermesd's client, built for this clone (src/hook-client/client.c),
 * else curl (slower, and the same meaning of every fault); neither: every hook fails closed.
 */
function clientCheck(): Check[] {
  let repo;
  try {
    repo = findRepo();
  } catch {
    return [];
  }
  const client = clientPath(repo.commonDir);
  if (!existsSync(sharedRuntimeDirOf(repo.commonDir))) return [];
  const problem = clientProblem(client);
  if (!problem) {
    const v = spawnSync(client, ['-V'], { encoding: 'utf8' });
    if (v.status === 0) return [{ name: 'hook client', status: 'ok', detail: `${v.stdout.trim()} (${client}): every hook asks the daemon through it` }];
    return [
      {
        name: 'hook client',
        status: 'fail',
        detail: `${client} does not run (${(v.stderr || v.error?.message || '').trim()}); the hooks refuse what they cannot ask`,
        fix: 'hermesd init',
      },
    ];
  }
  const curl = spawnSync('curl', ['--version'], { encoding: 'utf8' });
  if (curl.status === 0)
    return [
      {
        name: 'hook client',
        status: 'warn',
        detail: `not built (${problem}); the hooks ask the daemon with curl instead (a few ms more each)`,
        fix: 'Install a C compiler (the one better-sqlite3 needed), then: hermesd init',
      },
    ];
  return [
    {
      name: 'hook client',
      status: 'fail',
      detail: `not built (${problem}) and curl is not here either: every hook refuses, as it cannot ask the daemon`,
      fix: 'Install a C compiler, then: hermesd init (or install curl)',
    },
  ];
}

/** What doctor says outside a work tree: what it checked, and what applies only inside one. */
function outsideCheck(why: string): Check {
  return {
    name: 'repo',
    status: 'ok',
    detail: `${why.replace(/ Run hermesd .*$/, '')} The hooks, agents, hook client, daemon and skills are checked inside a work tree; run doctor there for them.`,
  };
}

export async function runDoctor(): Promise<Check[]> {
  let outside: string | undefined;
  try {
    findRepo();
  } catch (err) {
    if (!(err instanceof NotARepository)) throw err;
    outside = err.message;
  }
  const daemon = outside === undefined ? await daemonCheck() : { check: outsideCheck(outside), status: undefined };
  const checks: Check[] = [
    nodeCheck(),
    ...sqliteCheck(),
    socketCheck(),
    homeCheck(),
    inotifyCheck(),
    await gitCheck(),
    ...(await hooksChecks()),
    ...(await agentsChecks()),
    ...clientCheck(),
    daemon.check,
    ...(await modelCheck(daemon.status)),
  ];
  for (const extra of contributedChecks) {
    try {
      const r = await extra();
      checks.push(...(Array.isArray(r) ? r : [r]));
    } catch (err) {
      // A check of a work tree's own, outside one: the repo line says so.
      if (err instanceof NotARepository) continue;
      checks.push({ name: 'check', status: 'warn', detail: String(err) });
    }
  }
  return checks;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the environment: node, native SQLite with FTS5, the socket folder and path, HERMES_HOME, inotify limits, git, hooks installed and active, core.hooksPath, agent configs still running hermesd (init --agents; an agent not installed is said so), the hook client (or curl), the daemon, the model endpoint as the daemon sees it (contacted only when one is configured)',
    )
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const checks = await runDoctor();
        const failed = checks.some((c) => c.status === 'fail');
        output(globals(cmd), { ok: !failed, checks }, () =>
          checks
            .map((c) => {
              const tag = c.status === 'ok' ? color.green('ok  ') : c.status === 'warn' ? color.yellow('warn') : color.red('fail');
              return `${tag} ${c.name.padEnd(8)} ${c.detail}${c.fix ? `\n              fix: ${c.fix}` : ''}`;
            })
            .join('\n'),
        );
        if (failed) process.exitCode = 1;
      }),
    );
}
