import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { checkSocketPath, findRepo, hermesHome, repoPaths, SOCKET_PATH_MAX_BYTES } from '../../daemon/paths.js';
import { probe } from '../../daemon/lifecycle.js';
import { action, color, globals, output } from '../runtime.js';

type Check = { name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string };

/** Extra checks contributed by subsystems (skills index, model endpoint, ...). */
export const doctorChecks: Array<() => Check | Promise<Check> | Check[] | Promise<Check[]>> = [];

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
      out.push({ name: 'fts5', status: 'fail', detail: String(err), fix: 'Reinstall better-sqlite3 (npm rebuild better-sqlite3); its bundled SQLite has FTS5.' });
    }
    db.close();
    return out;
  } catch (err) {
    return [{ name: 'sqlite', status: 'fail', detail: `better-sqlite3 does not load: ${(err as Error).message.split('\n')[0]}`, fix: 'Run npm rebuild better-sqlite3 (needs python3, make, g++).' }];
  }
}

function socketCheck(): Check {
  try {
    const paths = repoPaths(findRepo());
    checkSocketPath(paths.socket);
    return { name: 'socket', status: 'ok', detail: `${paths.socket} (${Buffer.byteLength(paths.socket)}/${SOCKET_PATH_MAX_BYTES} bytes)` };
  } catch (err) {
    return { name: 'socket', status: 'fail', detail: (err as Error).message, fix: 'Set HERMESD_SOCKET_DIR to a short directory, or run inside a git work tree.' };
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

function gitCheck(): Check {
  try {
    const v = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
    const m = /(\d+)\.(\d+)/.exec(v);
    const ok = m && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 25));
    return ok ? { name: 'git', status: 'ok', detail: v } : { name: 'git', status: 'warn', detail: v, fix: 'Git 2.25 or newer is recommended.' };
  } catch {
    return { name: 'git', status: 'fail', detail: 'git not found', fix: 'Install git.' };
  }
}

async function daemonCheck(): Promise<Check> {
  try {
    const paths = repoPaths(findRepo());
    const s = await probe(paths);
    if (!s) return { name: 'daemon', status: 'ok', detail: 'not running (starts on demand)' };
    const warnings = Array.isArray(s.warnings) ? (s.warnings as string[]) : [];
    return warnings.length
      ? { name: 'daemon', status: 'warn', detail: `pid ${s.pid}: ${warnings.join('; ')}` }
      : { name: 'daemon', status: 'ok', detail: `running, pid ${s.pid}` };
  } catch (err) {
    return { name: 'daemon', status: 'warn', detail: (err as Error).message };
  }
}

/** Bound on the model endpoint probe: doctor must answer quickly even when the endpoint hangs. */
const MODEL_PROBE_TIMEOUT_MS = 3_000;

/** Asks the configured OpenAI-compatible endpoint for its model list (GET /models). */
async function modelCheck(): Promise<Check> {
  const [{ loadConfig }, { modelSettings }] = await Promise.all([import('../../config/load.js'), import('../../agent/model.js')]);
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
    return { name: 'config', status: 'fail', detail: (err as Error).message, fix: 'Fix the file and line named above.' };
  }
  const where = `${settings.baseUrl} (model ${settings.name})`;
  try {
    const res = await fetch(`${settings.baseUrl}/models`, {
      headers: { authorization: `Bearer ${settings.apiKey}` },
      signal: AbortSignal.timeout(MODEL_PROBE_TIMEOUT_MS),
    });
    if (res.status === 401 || res.status === 403)
      return { name: 'model', status: 'fail', detail: `${where}: HTTP ${res.status}, the API key was refused`, fix: 'Set OPENAI_API_KEY (or model.apiKey in config.yaml).' };
    if (!res.ok) return { name: 'model', status: 'warn', detail: `${where}: GET /models answered HTTP ${res.status}`, fix: 'Check OPENAI_BASE_URL; it should end in /v1 for most servers.' };
    const body = (await res.json().catch(() => ({}))) as { data?: Array<{ id?: string }> };
    const ids = (body.data ?? []).map((m) => m.id);
    if (ids.length > 0 && !ids.includes(settings.name))
      return { name: 'model', status: 'warn', detail: `${where}: reachable, but it does not list ${settings.name}`, fix: `Set HERMESD_MODEL to one of: ${ids.slice(0, 5).join(', ')}` };
    return { name: 'model', status: 'ok', detail: `${where}: reachable` };
  } catch (err) {
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${MODEL_PROBE_TIMEOUT_MS} ms` : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
    return { name: 'model', status: 'warn', detail: `${where}: unreachable (${why})`, fix: 'Set OPENAI_BASE_URL (and OPENAI_API_KEY, HERMESD_MODEL) to your endpoint; everything but `hermesd run` and fix requests works without one.' };
  }
}

export async function runDoctor(): Promise<Check[]> {
  const checks: Check[] = [nodeCheck(), ...sqliteCheck(), socketCheck(), inotifyCheck(), gitCheck(), await daemonCheck(), await modelCheck()];
  for (const extra of doctorChecks) {
    try {
      const r = await extra();
      checks.push(...(Array.isArray(r) ? r : [r]));
    } catch (err) {
      checks.push({ name: 'check', status: 'warn', detail: String(err) });
    }
  }
  return checks;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description('check the environment: node, native SQLite with FTS5, socket path, inotify limits, git, model endpoint')
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
