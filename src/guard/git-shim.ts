/**
 * Entry point of the `git` shim: `node git-shim.js <shim-dir> <git args…>`. The shim's
 * sh script sits first on the terminal's PATH, so every `git` the agent's shell resolves
 * by name (directly, `$g`, `sh -c`, xargs, scripts) lands here with git's real argv.
 * Invocations outside the guarded repository go straight to git.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { GitPolicy } from './config.js';
import { judgeGit, parseGlobal } from './git-policy.js';
import { makeProbe } from './git-probe.js';
import { runGit } from './git.js';

export type ShimSettings = { realGit: string; commonDir: string; policy: GitPolicy };

function main(): number {
  const [shimDir, ...argv] = process.argv.slice(2);
  const settings = JSON.parse(readFileSync(join(shimDir!, 'policy.json'), 'utf8')) as ShimSettings;
  const env = process.env;
  const cwd = process.cwd();
  const passThrough = () => exitOf(spawnSync(settings.realGit, argv, { stdio: 'inherit', env }));
  const { globals } = parseGlobal(argv);
  const common = runGit(settings.realGit, [...globals, 'rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd, env });
  if (common.code !== 0 || !sameDir(common.stdout.trim(), settings.commonDir)) return passThrough();

  const probe = makeProbe(settings.realGit, globals, cwd, env);
  const verdict = judgeGit({ argv, env, policy: settings.policy, probe });
  if (verdict.action === 'exec') return exitOf(spawnSync(settings.realGit, verdict.argv, { stdio: 'inherit', env }));
  if (verdict.action === 'shell-alias') {
    // As git runs a `!` alias: from the top of the work tree, GIT_PREFIX set, arguments appended.
    const top = runGit(settings.realGit, [...globals, 'rev-parse', '--show-toplevel', '--show-prefix'], { cwd, env });
    const [toplevel, prefix] = top.code === 0 ? top.stdout.split('\n') : [cwd, ''];
    const script = verdict.args.length > 0 ? `${verdict.command} "$@"` : verdict.command;
    return exitOf(spawnSync('/bin/sh', ['-c', script, verdict.command, ...verdict.args], { stdio: 'inherit', cwd: toplevel || cwd, env: { ...env, GIT_PREFIX: prefix ?? '' } }));
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

function exitOf(r: ReturnType<typeof spawnSync>): number {
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

process.exitCode = main();
