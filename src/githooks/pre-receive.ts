/**
 * `hermesd init --server`: the pre-receive hook of a bare repository (the server's copy, pushed
 * to over ssh, git daemon, Gitea…). It judges every push with the repository's rules as
 * committed, in Node, in-process (`hermesd hook pre-receive`: no daemon, no work tree), and
 * refuses one whose new objects break them. A pre-receive the repository had keeps running
 * after hermesd's judgement, with the same input (as `pre-receive.before-hermesd`, beside it);
 * where hooks come from a `pre-receive.d/`
 * folder (Gitea), hermesd's is one file in it. init also pins the server's rules: it writes
 * `<git-dir>/hermesd/server-config.yaml` (from the default branch's committed config, or init's
 * defaults where there is none), which judges every push beside the committed rules, so a push
 * that loosens the repository's file cannot loosen the server's; its admin edits it, and init
 * keeps it. `--uninstall` puts back exactly what was there (an edited pin stays, and is said).
 * What init changed is recorded in <git-dir>/hermesd/server-install.json.
 */
import { readTextIfAny } from '../storage/read.js';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadCommittedConfig } from '../config/load.js';
import { ConfigError, UsageError } from '../errors/index.js';
import { gitSync, gitTry } from '../git/run.js';
import type { GitRepository } from '../paths/index.js';
import { runtimeDirOf, serverConfigPath, serverInstallRecordPath } from '../paths/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { sha256 } from '../text/hash.js';
import { shQuote } from '../text/sh-quote.js';
import { INIT_CONFIG_TEMPLATE } from '../version.js';

/** First comment of hermesd's server hook: how init recognises its own file. */
const SERVER_HOOK_MARK = '# hermesd server hook';

type ServerInstall = {
  version: 1;
  /** The hook file hermesd wrote (absolute). */
  hook: string;
  /** A pre-receive that was there, moved aside to keep running after hermesd's judgement. */
  moved?: { from: string; to: string };
  /** The pinned rules: written by init (with the digest of what it wrote: an edited pin is the admin's), or there before it. */
  pin?: { path: string; written: boolean; sha256?: string };
  /** Whether init made `<git-dir>/hermesd/` (uninstall removes it when nothing else is left in it). */
  madeDir?: boolean;
  installedAt: string;
};

export type ServerInstallReport = {
  gitDir: string;
  /** The hook file hermesd wrote. */
  hook: string;
  /** The repository's own pre-receive, which now runs after hermesd's judgement. */
  chained?: string;
  reinstalled: boolean;
  /** The server's pinned rules: where, whether this run wrote them and from what, and whether they hold a secrets rule. */
  pinned: { path: string; written: boolean; from?: string; secretsRule: boolean };
};

export type ServerUninstallReport = { gitDir: string; wasInstalled: boolean; removed: string[]; restored: string[]; kept: string[] };

const recordPath = (repo: GitRepository) => serverInstallRecordPath(repo.gitDir);

function readRecord(repo: GitRepository): ServerInstall | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(repo), 'utf8')) as ServerInstall;
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
    "# Judges every push with the repository's rules as committed (.hermes/config.yaml) and the server's pinned ones",
    '# (hermesd/server-config.yaml in the git dir), in Node, without a daemon.',
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

/**
 * The text of a new pin: the config committed at HEAD (the default branch) when it has one that
 * parses, else init's defaults; with a header that says what it is and that it may be edited.
 */
function pinText(repo: GitRepository): { text: string; from: string } {
  const head = gitTry(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd: repo.gitDir }).stdout.trim();
  const committed = head ? gitTry(['cat-file', 'blob', `${head}:.hermes/config.yaml`], { cwd: repo.gitDir }) : undefined;
  let body: string | undefined;
  let from = "init's default rules";
  if (committed?.status === 0) {
    try {
      loadCommittedConfig(`${head.slice(0, 10)}:.hermes/config.yaml`, committed.stdout);
      body = committed.stdout;
      from = `.hermes/config.yaml as committed at ${head.slice(0, 10)} (HEAD)`;
    } catch {
      from = `init's default rules (.hermes/config.yaml at ${head.slice(0, 10)} does not parse)`;
    }
  }
  try {
    body ??= readFileSync(INIT_CONFIG_TEMPLATE, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError(`init's default config ${INIT_CONFIG_TEMPLATE} cannot be read (${why}): reinstall hermesd.`);
  }
  const header = [
    `# hermesd: this server's pinned rules, written by \`hermesd init --server\` from ${from}.`,
    '# Every push is judged by these rules AND by the rules of .hermes/config.yaml committed where',
    "# each ref was (init's defaults where there is none): the repository's own file can add rules,",
    '# never take these away. Edit this file to change them (it is read at every push; only its',
    '# rules count); hermesd init --server keeps your edits, and --uninstall removes it unless edited.',
    '',
  ].join('\n');
  return { text: `${header}${body.endsWith('\n') || body === '' ? body : `${body}\n`}`, from };
}

/** Whether the config at `path` has a secrets rule (false where it does not parse: the hook will say why). */
function hasSecretsRule(path: string): boolean {
  try {
    return loadCommittedConfig(path, readFileSync(path, 'utf8')).rules.some((r) => r.secrets === true);
  } catch {
    return false;
  }
}

/** Installs (or refreshes) the server hook in a bare repository, and pins its rules where no pin is. */
export function installServerHook(repo: GitRepository, opts: { nodePath: string; cliPath: string }): ServerInstallReport {
  if (!repo.bare) {
    throw new UsageError(
      `hermesd init --server installs a server-side hook in a bare repository (the server's copy that is pushed to); ${repo.root ?? repo.gitDir} has a work tree: run hermesd init there for the client hooks.`,
    );
  }
  const previous = readRecord(repo);
  let record: ServerInstall;
  if (previous) {
    record = previous;
  } else {
    const dir = hooksDir(repo);
    const folder = join(dir, 'pre-receive.d');
    const hook = isDir(folder) ? join(folder, 'hermesd') : join(dir, 'pre-receive');
    record = { version: 1, hook, madeDir: !existsSync(runtimeDirOf(repo.gitDir)), installedAt: new Date().toISOString() };
    const there = readTextIfAny(hook);
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
  // The pin: written where there is none; one that is there (the admin's, or an earlier install's) is kept as it is.
  const pinPath = serverConfigPath(repo.gitDir);
  let written: { from: string } | undefined;
  if (!existsSync(pinPath)) {
    const pin = pinText(repo);
    writeFileAtomicSync(pinPath, pin.text);
    record.pin = { path: pinPath, written: true, sha256: sha256(pin.text) };
    written = { from: pin.from };
  } else record.pin ??= { path: pinPath, written: false };
  writeFileAtomicSync(recordPath(repo), JSON.stringify(record, null, 2) + '\n');
  return {
    gitDir: repo.gitDir,
    hook: record.hook,
    ...(record.moved ? { chained: record.moved.to } : {}),
    reinstalled: previous !== undefined,
    pinned: { path: pinPath, written: written !== undefined, ...(written ? { from: written.from } : {}), secretsRule: hasSecretsRule(pinPath) },
  };
}

/** Removes the server hook and puts back the pre-receive that was there, byte for byte. */
export function uninstallServerHook(repo: GitRepository): ServerUninstallReport {
  const record = readRecord(repo);
  const report: ServerUninstallReport = { gitDir: repo.gitDir, wasInstalled: record !== undefined, removed: [], restored: [], kept: [] };
  if (!record) return report;
  const text = readTextIfAny(record.hook);
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
  // The pin init wrote goes; one the admin edited since (or that was there before init) stays theirs.
  if (record.pin?.written) {
    const pin = readTextIfAny(record.pin.path);
    if (pin !== undefined && sha256(pin) === record.pin.sha256) {
      rmSync(record.pin.path);
      report.removed.push(record.pin.path);
    } else if (pin !== undefined) report.kept.push(record.pin.path);
  }
  rmSync(recordPath(repo), { force: true });
  const dir = runtimeDirOf(repo.gitDir);
  if (record.madeDir && isDir(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
  return report;
}
