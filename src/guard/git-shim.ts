/**
 * Entry point of the `git` shim: `node git-shim.js <shim-dir> <git args…>`. The shim's
 * sh script sits first on the terminal's PATH, so every `git` the agent's shell resolves
 * by name (directly, `$g`, `sh -c`, xargs, scripts) lands here with git's real argv.
 * Invocations outside the guarded repository go straight to git.
 */
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { GitPolicy } from './guard-config.js';
import { judgeGit, parseGlobal } from './git-policy.js';
import { makeProbe } from './git-probe.js';
import { gitPassThrough, runGit, type Exit } from '../git/run.js';
import { binShell, runCommandSync } from '../process/run.js';

/** `broker`: inside the sandbox, the socket of the daemon that makes pushes. */
export type ShimSettings = { realGit: string; commonDir: string; policy: GitPolicy; broker?: string };

/** A push can take minutes (a slow remote, a pre-push hook running tests). */
const BROKER_TIMEOUT_MS = 15 * 60 * 1000;

/** Hands `git push <args>` to the daemon, which judges it by its effect and makes it (push-broker.ts). */
function brokerPush(socket: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ args });
    const req = request(
      {
        socketPath: socket,
        method: 'POST',
        path: '/v1/guard/push',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: BROKER_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          try {
            const r = JSON.parse(text) as { exitCode?: number; output?: string; error?: { message: string } };
            if (r.error) {
              process.stderr.write(`hermesd guard: the push broker failed: ${r.error.message}\n`);
              resolve(1);
              return;
            }
            process.stderr.write(r.output ?? '');
            resolve(r.exitCode ?? 1);
          } catch {
            process.stderr.write(`hermesd guard: the push broker answered HTTP ${res.statusCode} with something that is not JSON\n`);
            resolve(1);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => {
      process.stderr.write(`hermesd guard: cannot reach hermesd's push broker (${e.message}); pushes from the sandbox go through the daemon.\n`);
      resolve(1);
    });
    req.end(body);
  });
}

async function main(): Promise<number> {
  const [shimDir, ...argv] = process.argv.slice(2);
  const settings = JSON.parse(readFileSync(join(shimDir!, 'policy.json'), 'utf8')) as ShimSettings;
  const env = process.env;
  const cwd = process.cwd();
  const passThrough = () => exitOf(gitPassThrough(argv, { bin: settings.realGit, env }));
  const { globals } = parseGlobal(argv);
  const common = runGit(settings.realGit, [...globals, 'rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd, env });
  if (common.code !== 0 || !sameDir(common.stdout.trim(), settings.commonDir)) return passThrough();

  const probe = makeProbe(settings.realGit, globals, cwd, env);
  const verdict = judgeGit({ argv, env, policy: settings.policy, probe });
  if (verdict.action === 'exec' && settings.broker) {
    // In the sandbox the remote is read-only and the network off: the daemon pushes, after judging the push.
    const parsed = parseGlobal(verdict.argv);
    if (parsed.sub === 'push') return brokerPush(settings.broker, parsed.rest);
    if (parsed.sub === 'send-pack' || parsed.sub === 'http-push') {
      process.stderr.write(`hermesd guard: \`git ${parsed.sub}\` does not run in the sandbox; use \`git push\` (the daemon makes it after judging it).\n`);
      return 1;
    }
  }
  if (verdict.action === 'exec') return exitOf(gitPassThrough(verdict.argv, { bin: settings.realGit, env }));
  if (verdict.action === 'shell-alias') {
    // As git runs a `!` alias: from the top of the work tree, GIT_PREFIX set, arguments appended.
    const top = runGit(settings.realGit, [...globals, 'rev-parse', '--show-toplevel', '--show-prefix'], { cwd, env });
    const [toplevel, prefix] = top.code === 0 ? top.stdout.split('\n') : [cwd, ''];
    const script = verdict.args.length > 0 ? `${verdict.command} "$@"` : verdict.command;
    return exitOf(
      runCommandSync(script, {
        cwd: toplevel || cwd,
        env: { ...env, GIT_PREFIX: prefix ?? '' },
        wrap: binShell,
        args: [verdict.command, ...verdict.args],
        stdio: 'inherit',
      }),
    );
  }
  process.stderr.write(`hermesd guard: refused \`git ${argv.join(' ')}\` (policy ${verdict.policy}): ${verdict.message}\n`);
  const log = env.HERMESD_GUARD_LOG;
  if (log) {
    try {
      appendFileSync(log, JSON.stringify({ policy: verdict.policy, message: verdict.message, argv }) + '\n');
    } catch {
      // the refusal stands even when it cannot be logged
    }
  }
  return 1;
}

function sameDir(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

function exitOf(r: Exit): number {
  if (r.error) {
    process.stderr.write(`hermesd guard: could not run git: ${r.error.message}\n`);
    return 127;
  }
  if (r.signal) {
    process.kill(process.pid, r.signal);
    return 128;
  }
  return r.status ?? 1;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`hermesd guard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
