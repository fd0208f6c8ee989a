/**
 * The git policy, judged on the argv git would receive (the shim sees it after the shell
 * has expanded variables, `sh -c`, and so on; aliases are expanded here the way git
 * would). A judgement is a tagged value; the repository facts it needs (ignored files,
 * pushed commits, aliases) come from a GitProbe so the rules read as a table.
 */
import type { GitPolicy, GitPolicyName } from './guard-config.js';

export type GitProbe = {
  /** The alias value git would use for `name` under this invocation's config, if any. */
  alias(name: string): string | undefined;
  /** Untracked, ignored files the pathspecs match (what `add -f` would newly stage). */
  ignoredAmong(pathspecs: string[]): string[];
  /** Whether the revision is reachable from a remote-tracking branch. */
  isPushed(rev: string): boolean;
  /** Whether rewriting the commits `base..tip` (all of tip without base) would rewrite pushed ones. */
  rewritesPushed(tip: string, base: string | undefined): boolean;
  /** Whether `arg` names a commit. */
  isCommit(arg: string): boolean;
  /** Whether the effective core.hooksPath differs from the repository's own (env, -c, included files). */
  hooksPathOverridden(): boolean;
  /** Whether configured push refspecs or mirror mode force-push (for a push without refspecs). */
  configForcesPush(remote: string | undefined): boolean;
};

export type Judgement =
  | { action: 'exec'; argv: string[] }
  | { action: 'shell-alias'; command: string; args: string[] }
  | { action: 'refuse'; policy: GitPolicyName; message: string };

/** Builtins git runs before ever looking at aliases; anything else may be an alias. */
const BUILTINS = new Set(
  (
    'add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap check-ref-format checkout ' +
    'checkout-index cherry cherry-pick citool clean clone column commit commit-graph commit-tree config count-objects credential describe ' +
    'diff diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref ' +
    'for-each-repo format-patch fsck gc get-tar-commit-id grep hash-object help hook index-pack init init-db interpret-trailers log ' +
    'ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-ours merge-recursive ' +
    'merge-tree mktag mktree mv name-rev notes pack-objects pack-refs patch-id prune prune-packed pull push range-diff read-tree ' +
    'rebase receive-pack reflog remote repack replace rerere reset restore rev-list rev-parse revert rm send-pack shortlog show ' +
    'show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file ' +
    'unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag ' +
    'version whatchanged worktree write-tree'
  ).split(' '),
);

/** Commands that cannot bypass a hook or rewrite anything the policy covers; the sh shim hands these straight to git. */
export const READ_ONLY_COMMANDS = (
  'status diff log show rev-parse ls-files ls-tree ls-remote cat-file blame annotate grep describe rev-list for-each-ref merge-base ' +
  'check-ignore check-attr check-ref-format check-mailmap diff-index diff-files diff-tree show-ref show-branch shortlog name-rev cherry ' +
  'count-objects var version help whatchanged fetch'
).split(' ');

/**
 * Commands the policy has nothing to say about and that run no hook a policy protects: the sh
 * shim hands these straight to git too (a Node start per plumbing call made
 * scripted git slow). What they do to refs and files is judged after the command, by content.
 */
export const UNJUDGED_COMMANDS = [
  ...READ_ONLY_COMMANDS,
  ...(
    'hash-object update-index write-tree commit-tree update-ref read-tree mktree mktag symbolic-ref merge-tree merge-file apply mv rm restore ' +
    'switch checkout checkout-index branch tag stash clean notes reflog pack-refs prune gc repack'
  ).split(' '),
];

type Parsed = { globals: string[]; configKeys: string[]; sub?: string; rest: string[] };

/** Global options that take the next argument when not written with `=`. */
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--attr-source', '--super-prefix']);

export function parseGlobal(argv: string[]): Parsed {
  const globals: string[] = [];
  const configKeys: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) break;
    if (a === '--') {
      i++;
      break;
    }
    if (GLOBAL_WITH_VALUE.has(a)) {
      const v = argv[i + 1] ?? '';
      globals.push(a, v);
      if (a === '-c') configKeys.push(v.split('=')[0]!);
      if (a === '--config-env') configKeys.push(v.split('=')[0]!);
      i++;
      continue;
    }
    if (a.startsWith('--config-env=')) configKeys.push(a.slice('--config-env='.length).split('=')[0]!);
    globals.push(a);
  }
  return { globals, configKeys, sub: argv[i], rest: argv.slice(i + 1) };
}

/** Keys that decide which hooks run; overriding them for one command skips the repository's hooks. */
const HOOK_CONFIG_KEY = /^(core\.hookspath|hook\..*|include\.path|includeif\..*\.path)$/i;

/** Splits an alias value as git's split_cmdline does: whitespace, single and double quotes, backslashes. */
export function splitCmdline(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < s.length) cur += s[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (has || cur) out.push(cur);
  return out;
}

type Opts = {
  /** Short options that take a value (attached or next argument). */
  shortWithValue?: string;
  /** Long options that take the next argument when written without `=`. */
  longWithValue?: string[];
};

type Scan = { longs: string[]; shorts: string[]; positionals: string[]; afterDashDash: string[] };

/** Tokenises a subcommand's arguments into long options, short flags and positionals, skipping option values. */
export function scanArgs(args: string[], opts: Opts = {}): Scan {
  const scan: Scan = { longs: [], shorts: [], positionals: [], afterDashDash: [] };
  const withValue = new Set(opts.longWithValue ?? []);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      scan.afterDashDash = args.slice(i + 1);
      break;
    }
    if (a.startsWith('--')) {
      scan.longs.push(a);
      if (!a.includes('=') && withValue.has(a)) i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        scan.shorts.push(c);
        if (opts.shortWithValue?.includes(c)) {
          if (j === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    scan.positionals.push(a);
  }
  return scan;
}

/** `--no-verify` or any abbreviation git accepts for it (git takes unique prefixes of long options). */
function isNoVerify(long: string): boolean {
  return long.length >= '--no-veri'.length && '--no-verify'.startsWith(long);
}

/** Whether the last verify switch in the arguments turns hooks off. */
function skipsHooks(scan: Scan, shortN: boolean): boolean {
  let skip = false;
  for (const l of scan.longs) {
    if (isNoVerify(l)) skip = true;
    else if (l === '--verify') skip = false;
  }
  if (shortN && scan.shorts.includes('n')) skip = true;
  return skip;
}

const BYPASS_HINT: Record<GitPolicyName, string> = {
  noVerify: 'Run the command without it and fix what the hooks report.',
  forcePush: 'Push without force; if the remote has diverged, fetch and merge or rebase your unpushed commits first, or ask the user.',
  addIgnored: 'Ignored files stay out of the repository (they often hold secrets or build output); ask the user if one really belongs in git.',
  rewritePushed: 'Those commits are already on a remote; make a new commit (e.g. git revert) instead of rewriting them, or ask the user.',
  hookConfig: "The repository's hooks are configured by the user; leave core.hooksPath, hooks and hook-bypassing aliases as they are.",
};

function refuse(policy: GitPolicyName, what: string): Judgement {
  return {
    action: 'refuse',
    policy,
    message: `${what} ${BYPASS_HINT[policy]} (hermesd guard policy guard.gitPolicy.${policy} = refuse; the user can set it to allow in .hermes/config.yaml)`,
  };
}

export type JudgeInput = { argv: string[]; env: NodeJS.ProcessEnv; policy: GitPolicy; probe: GitProbe };

/** Alias expansion stops here, as git's own loop detection would. */
const MAX_ALIAS_DEPTH = 16;

/** Decides what to do with one git invocation. */
export function judgeGit({ argv, env, policy, probe }: JudgeInput): Judgement {
  let current = argv;
  const seen = new Set<string>();
  for (let depth = 0; depth < MAX_ALIAS_DEPTH; depth++) {
    const p = parseGlobal(current);
    const readOnly = p.sub !== undefined && READ_ONLY_COMMANDS.includes(p.sub);
    if (policy.hookConfig === 'refuse') {
      const key = p.configKeys.find((k) => HOOK_CONFIG_KEY.test(k));
      if (key) return refuse('hookConfig', `\`git -c ${key}=…\` overrides the repository's hook configuration for one command.`);
      const envKey = configKeysFromEnv(env).find((k) => HOOK_CONFIG_KEY.test(k));
      if (envKey) return refuse('hookConfig', `The environment (GIT_CONFIG_*) overrides ${envKey}, which decides which hooks run.`);
      if (!readOnly && p.sub !== undefined && probe.hooksPathOverridden()) {
        return refuse(
          'hookConfig',
          "This invocation would run git with a different core.hooksPath than the repository's (set through the environment or an included config file).",
        );
      }
    }
    if (policy.noVerify === 'refuse' && !readOnly && p.sub !== undefined) {
      if (truthy(env.HERMESD_SKIP)) return refuse('noVerify', 'HERMESD_SKIP is set, which turns the hermesd hooks off.');
      if (env.HUSKY === '0') return refuse('noVerify', 'HUSKY=0 is set, which turns the husky hooks off.');
    }
    if (p.sub === undefined) return { action: 'exec', argv: current };
    if (BUILTINS.has(p.sub)) {
      const verdict = judgeBuiltin(p.sub, p.rest, policy, probe);
      return verdict ?? { action: 'exec', argv: current };
    }
    const value = probe.alias(p.sub);
    if (value === undefined || seen.has(p.sub)) return { action: 'exec', argv: current };
    seen.add(p.sub);
    if (value.startsWith('!')) return { action: 'shell-alias', command: value.slice(1), args: p.rest };
    current = [...p.globals, ...splitCmdline(value), ...p.rest];
  }
  return { action: 'exec', argv: current };
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

/** Config keys set for this invocation through GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT/KEY_n. */
export function configKeysFromEnv(env: NodeJS.ProcessEnv): string[] {
  const keys: string[] = [];
  const params = env.GIT_CONFIG_PARAMETERS;
  if (params) {
    // Entries are sq-quoted: 'key'='value' or the older 'key=value'.
    for (const m of params.matchAll(/'((?:[^']|'\\'')*)'(?:=|\s|$)/g)) {
      const word = m[1]!.replace(/'\\''/g, "'");
      keys.push(word.split('=')[0]!);
    }
  }
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let i = 0; i < count && i < 1000; i++) {
    const k = env[`GIT_CONFIG_KEY_${i}`];
    if (k) keys.push(k);
  }
  return keys;
}

function judgeBuiltin(sub: string, rest: string[], policy: GitPolicy, probe: GitProbe): Judgement | undefined {
  switch (sub) {
    case 'commit': {
      const s = scanArgs(rest, {
        shortWithValue: 'mFcCtuS',
        longWithValue: [
          '--message',
          '--file',
          '--reedit-message',
          '--reuse-message',
          '--template',
          '--author',
          '--date',
          '--cleanup',
          '--fixup',
          '--squash',
          '--trailer',
          '--pathspec-from-file',
        ],
      });
      if (policy.noVerify === 'refuse' && skipsHooks(s, true))
        return refuse('noVerify', "`git commit --no-verify` (-n) skips the pre-commit and commit-msg hooks that enforce the repository's rules.");
      if (policy.rewritePushed === 'refuse' && s.longs.some((l) => l === '--amend' || (l.length >= 4 && '--amend'.startsWith(l))) && probe.isPushed('HEAD')) {
        return refuse('rewritePushed', '`git commit --amend` would rewrite HEAD, which is already pushed.');
      }
      return undefined;
    }
    case 'am': {
      const s = scanArgs(rest, {
        shortWithValue: 'CpS',
        longWithValue: ['--directory', '--exclude', '--include', '--whitespace', '--resolvemsg', '--patch-format', '--quoted-cr', '--empty'],
      });
      if (policy.noVerify === 'refuse' && skipsHooks(s, true)) return refuse('noVerify', '`git am --no-verify` (-n) skips the applypatch hooks.');
      return undefined;
    }
    case 'merge':
    case 'pull': {
      const s = scanArgs(rest, {
        shortWithValue: 'mFsX',
        longWithValue: [
          '--message',
          '--file',
          '--strategy',
          '--strategy-option',
          '--cleanup',
          '--into-name',
          '--depth',
          '--upload-pack',
          '--shallow-since',
          '--shallow-exclude',
          '--negotiation-tip',
          '--server-option',
        ],
      });
      if (policy.noVerify === 'refuse' && skipsHooks(s, false))
        return refuse('noVerify', `\`git ${sub} --no-verify\` skips the pre-merge-commit and commit-msg hooks.`);
      return undefined;
    }
    case 'push': {
      const s = scanArgs(rest, { shortWithValue: 'o', longWithValue: ['--push-option', '--repo', '--receive-pack', '--exec', '--signed'] });
      if (policy.noVerify === 'refuse' && skipsHooks(s, false)) return refuse('noVerify', '`git push --no-verify` skips the pre-push hook.');
      if (policy.forcePush === 'refuse') {
        const forceLong = s.longs.find((l) => /^--force(-with-lease)?(=|$)/.test(l) || l === '--mirror' || (l.length >= 5 && '--force'.startsWith(l)));
        if (forceLong) return refuse('forcePush', `\`git push ${forceLong}\` overwrites commits on the remote.`);
        if (s.shorts.includes('f')) return refuse('forcePush', '`git push -f` overwrites commits on the remote.');
        const refspecs = s.positionals.slice(1);
        const plus = refspecs.find((r) => r.startsWith('+'));
        if (plus) return refuse('forcePush', `The refspec \`${plus}\` force-pushes (a leading + overwrites the remote branch).`);
        if (refspecs.length === 0 && probe.configForcesPush(s.positionals[0])) {
          return refuse('forcePush', 'The configured push refspec (remote.<name>.push with a leading + or remote.<name>.mirror) force-pushes.');
        }
      }
      return undefined;
    }
    case 'rebase': {
      const s = scanArgs(rest, {
        shortWithValue: 'xsXC',
        longWithValue: ['--onto', '--exec', '--strategy', '--strategy-option', '--whitespace', '--empty', '--rebase-merges', '--gpg-sign'],
      });
      if (policy.noVerify === 'refuse' && skipsHooks(s, false)) return refuse('noVerify', '`git rebase --no-verify` skips the pre-rebase hook.');
      const control = s.longs.some((l) => /^--(continue|abort|skip|quit|edit-todo|show-current-patch)$/.test(l));
      if (policy.rewritePushed === 'refuse' && !control) {
        const root = s.longs.includes('--root');
        const upstream = root ? undefined : (s.positionals[0] ?? '@{upstream}');
        const tip = s.positionals[root ? 0 : 1] ?? 'HEAD';
        if (probe.rewritesPushed(tip, upstream)) return refuse('rewritePushed', `\`git rebase\` would rewrite commits of ${tip} that are already pushed.`);
      }
      return undefined;
    }
    case 'reset': {
      const s = scanArgs(rest, { longWithValue: ['--pathspec-from-file'] });
      if (
        policy.rewritePushed === 'refuse' &&
        !s.shorts.includes('p') &&
        !s.longs.includes('--patch') &&
        s.afterDashDash.length === 0 &&
        s.positionals.length === 1
      ) {
        const target = s.positionals[0]!;
        if (probe.isCommit(target) && probe.rewritesPushed('HEAD', target)) {
          return refuse('rewritePushed', `\`git reset ${target}\` would move the branch back past commits that are already pushed.`);
        }
      }
      return undefined;
    }
    case 'filter-branch':
      if (policy.rewritePushed === 'refuse' && probe.rewritesPushed('HEAD', undefined))
        return refuse('rewritePushed', '`git filter-branch` rewrites history that is already pushed.');
      return undefined;
    case 'add':
    case 'stage': {
      if (policy.addIgnored === 'refuse') {
        const s = scanArgs(rest, { longWithValue: ['--chmod', '--pathspec-from-file'] });
        const force = s.shorts.includes('f') || s.longs.some((l) => l === '--force' || (l.length >= 4 && '--force'.startsWith(l)));
        if (!force) return undefined;
        let specs = [...s.positionals, ...s.afterDashDash];
        if (specs.length === 0 && (s.shorts.includes('A') || s.shorts.includes('u') || s.longs.some((l) => /^--(all|update|no-ignore-removal)$/.test(l))))
          specs = ['.'];
        if (s.longs.some((l) => l.startsWith('--pathspec-from-file')))
          return refuse('addIgnored', '`git add -f --pathspec-from-file` may stage ignored files the guard cannot see in advance.');
        if (specs.length === 0) return undefined;
        const ignored = probe.ignoredAmong(specs);
        if (ignored.length > 0) {
          const shown = ignored.slice(0, 5).join(', ') + (ignored.length > 5 ? ` and ${ignored.length - 5} more` : '');
          return refuse('addIgnored', `\`git add -f\` would stage ignored files (${shown}).`);
        }
      }
      return undefined;
    }
    case 'config':
      return policy.hookConfig === 'refuse' ? judgeConfig(rest, policy, probe) : undefined;
    default:
      return undefined;
  }
}

const CONFIG_WRITE_ACTIONS = /^--(add|replace-all|unset|unset-all|rename-section|remove-section|edit)$/;
const CONFIG_READ_ACTIONS = /^--(get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|list)$/;

function judgeConfig(rest: string[], policy: GitPolicy, probe: GitProbe): Judgement | undefined {
  const s = scanArgs(rest, { shortWithValue: 'f', longWithValue: ['--file', '--blob', '--type', '--default', '--comment', '--value'] });
  let positionals = s.positionals;
  let mode: 'read' | 'write' | 'edit' | 'section' = 'read';
  const sub = positionals[0];
  if (sub && /^(list|get|set|unset|rename-section|remove-section|edit)$/.test(sub)) {
    positionals = positionals.slice(1);
    mode = sub === 'set' || sub === 'unset' ? 'write' : sub === 'edit' ? 'edit' : sub.endsWith('-section') ? 'section' : 'read';
  } else if (s.longs.some((l) => l === '--edit') || s.shorts.includes('e')) {
    mode = 'edit';
  } else if (s.longs.some((l) => /^--(rename|remove)-section$/.test(l))) {
    mode = 'section';
  } else if (s.longs.some((l) => CONFIG_WRITE_ACTIONS.test(l))) {
    mode = 'write';
  } else if (!s.longs.some((l) => CONFIG_READ_ACTIONS.test(l)) && !s.shorts.includes('l') && positionals.length >= 2) {
    mode = 'write';
  }
  if (mode === 'read') return undefined;
  if (mode === 'edit') return refuse('hookConfig', '`git config --edit` can change the hook configuration out of sight; set single keys instead.');
  const key = positionals[0] ?? '';
  if (mode === 'section') {
    if (/^(core|hook(\..*)?|include|includeif\..*)$/i.test(key))
      return refuse('hookConfig', `Renaming or removing the config section [${key}] changes which hooks run.`);
    return undefined;
  }
  if (HOOK_CONFIG_KEY.test(key)) return refuse('hookConfig', `\`git config ${key}\` changes which hooks run.`);
  const alias = /^alias\.(.+)$/i.exec(key);
  const value = positionals[1];
  if (alias && value !== undefined) {
    if (value.startsWith('!')) {
      if (/--no-verify|hookspath|HERMESD_SKIP|HUSKY=0|\bcommit\s+(-[a-zA-Z]*n|.*\s-[a-zA-Z]*n\b)/i.test(value)) {
        return refuse('hookConfig', `The alias ${alias[1]} would run git in a way that skips hooks.`);
      }
      return undefined;
    }
    const inner = judgeGit({ argv: splitCmdline(value), env: {}, policy, probe });
    if (inner.action === 'refuse')
      return refuse('hookConfig', `The alias ${alias[1]} = "${value}" would be refused when run: ${inner.message.split(' (hermesd')[0]}`);
  }
  return undefined;
}
