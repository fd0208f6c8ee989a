/**
 * `hermesd init --server`: the pre-receive hook of a bare repository (the server's copy, pushed
 * to over ssh, git daemon, Gitea…). It judges every push with the repository's rules as
 * committed, in Node, in-process (`hermesd hook pre-receive`: no daemon, no work tree), and
 * refuses one whose new commits break them. A pre-receive the repository had keeps running
 * after hermesd's judgement, with the same input (as `pre-receive.before-hermesd`, beside it);
 * where hooks come from a `pre-receive.d/`
 * folder (Gitea), hermesd's is one file in it. `--uninstall` puts back exactly what was there.
 * What init changed is recorded in <git-dir>/hermesd/server-install.json.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, UsageError } from '../errors/index.js';
import { gitSync } from '../git/run.js';
import type { GitRepository } from '../paths/index.js';
import { runtimeDirOf } from '../paths/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { shQuote } from '../transport/runners.js';

/** First comment of hermesd's server hook: how init recognises its own file. */
const SERVER_HOOK_MARK = '# hermesd server hook';

type ServerInstall = {
  version: 1;
  /** The hook file hermesd wrote (absolute). */
  hook: string;
  /** A pre-receive that was there, moved aside to keep running after hermesd's judgement. */
  moved?: { from: string; to: string };
  installedAt: string;
};

export type ServerInstallReport = {
  gitDir: string;
  /** The hook file hermesd wrote. */
  hook: string;
  /** The repository's own pre-receive, which now runs after hermesd's judgement. */
  chained?: string;
  reinstalled: boolean;
};

export type ServerUninstallReport = { gitDir: string; wasInstalled: boolean; removed: string[]; restored: string[]; kept: string[] };

const recordPath = (repo: GitRepository) => join(runtimeDirOf(repo.gitDir), 'server-install.json');

function readRecord(repo: GitRepository): ServerInstall | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(repo), 'utf8')) as ServerInstall;
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const isDir = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** The hook: this install's node and CLI baked in; the repository's own pre-receive (if any) gets the same input after it. */
export function serverHookScript(opts: { nodePath: string; cliPath: string; chained?: string }): string {
  return [
    '#!/bin/sh',
    `${SERVER_HOOK_MARK} (written by \`hermesd init --server\`; \`hermesd init --server --uninstall\` puts back what was here).`,
    "# Judges every push with the repository's rules as committed (.hermes/config.yaml), in Node, without a daemon.",
    `HERMESD_NODE=${shQuote(opts.nodePath)}`,
    `HERMESD_CLI=${shQuote(opts.cliPath)}`,
    `chained=${shQuote(opts.chained ?? '')}`,
    'if [ ! -f "$HERMESD_CLI" ]; then',
    '  echo "hermesd: the CLI this hook runs ($HERMESD_CLI) is gone, so this push cannot be judged and is refused; reinstall hermesd and run: hermesd init --server" >&2',
    '  exit 1',
    'fi',
    'if [ -z "$chained" ] || [ ! -x "$chained" ]; then exec "$HERMESD_NODE" "$HERMESD_CLI" hook pre-receive; fi',
    'input=$(cat)',
    'printf \'%s\\n\' "$input" | "$HERMESD_NODE" "$HERMESD_CLI" hook pre-receive || exit $?',
    'printf \'%s\\n\' "$input" | exec "$chained" "$@"',
    '',
  ].join('\n');
}

/** The hooks directory git runs for this repository (core.hooksPath, else <git-dir>/hooks). */
function hooksDir(repo: GitRepository): string {
  return gitSync(['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], { cwd: repo.gitDir }).trim();
}

/** Installs (or refreshes) the server hook in a bare repository. */
export function installServerHook(repo: GitRepository, opts: { nodePath: string; cliPath: string }): ServerInstallReport {
  if (!repo.bare) {
    throw new UsageError(`hermesd init --server installs a server-side hook in a bare repository (the server's copy that is pushed to); ${repo.root ?? repo.gitDir} has a work tree: run hermesd init there for the client hooks.`);
  }
  const previous = readRecord(repo);
  let record: ServerInstall;
  if (previous) {
    record = previous;
  } else {
    const dir = hooksDir(repo);
    const folder = join(dir, 'pre-receive.d');
    const hook = isDir(folder) ? join(folder, 'hermesd') : join(dir, 'pre-receive');
    record = { version: 1, hook, installedAt: new Date().toISOString() };
    const there = readText(hook);
    if (there !== undefined && !there.includes(SERVER_HOOK_MARK)) {
      if (isDir(folder)) throw new ConfigError(`${hook} exists and is not hermesd's; move it out of the way and run hermesd init --server again.`);
      // Beside where it was, so a hook that finds its files from its own path still does.
      const to = `${hook}.before-hermesd`;
      if (existsSync(to)) throw new ConfigError(`${to} exists already; move it out of the way and run hermesd init --server again.`);
      renameSync(hook, to);
      record.moved = { from: hook, to };
    }
  }
  mkdirSync(dirname(record.hook), { recursive: true });
  writeFileSync(record.hook, serverHookScript({ ...opts, chained: record.moved?.to }), { mode: 0o755 });
  chmodSync(record.hook, 0o755);
  mkdirSync(dirname(recordPath(repo)), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(recordPath(repo), JSON.stringify(record, null, 2) + '\n');
  return { gitDir: repo.gitDir, hook: record.hook, ...(record.moved ? { chained: record.moved.to } : {}), reinstalled: previous !== undefined };
}

/** Removes the server hook and puts back the pre-receive that was there, byte for byte. */
export function uninstallServerHook(repo: GitRepository): ServerUninstallReport {
  const record = readRecord(repo);
  const report: ServerUninstallReport = { gitDir: repo.gitDir, wasInstalled: record !== undefined, removed: [], restored: [], kept: [] };
  if (!record) return report;
  const text = readText(record.hook);
  if (text !== undefined && text.includes(SERVER_HOOK_MARK)) {
    rmSync(record.hook);
    report.removed.push(record.hook);
  } else if (text !== undefined) report.kept.push(record.hook); // someone replaced it since: theirs now
  if (record.moved && existsSync(record.moved.to)) {
    if (existsSync(record.moved.from)) report.kept.push(record.moved.to);
    else {
      renameSync(record.moved.to, record.moved.from);
      report.restored.push(record.moved.from);
    }
  }
  rmSync(recordPath(repo), { force: true });
  return report;
}
