/**
 * The guard's judgement of another agent's tool call, before it runs: the same rules that
 * bind hermesd's own tools. Writes (edits, patches, notebook edits, deletions, and the files
 * a shell command would write) may not touch a path a repository rule protects, a file the
 * guard reads (config, hook managers, agents' hooks) or the git directory; shell commands
 * go through the git policy (no --no-verify, no hooks bypass, no force push, no `add -f` of
 * ignored files); secret files are not read. A denial names the rule and what to do instead.
 */
import { lstatSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { protectMatcher, gitPolicyOf, type GuardConfig } from '../guard/config.js';
import { judgeGit, parseGlobal } from '../guard/git-policy.js';
import { makeProbe } from '../guard/git-probe.js';
import { guardOwnedPath } from '../guard/sandbox-plan.js';
import { isSecretPath, secretPathMessage } from '../security/secret-paths.js';
import { analyseShell, type Reach } from './shell.js';
import type { Denial, ToolAction } from './event.js';

export type JudgeContext = {
  /** The work tree root (a realpath). */
  root: string;
  config: GuardConfig;
  /** The real git binary (never a shim). */
  gitBin: string;
  /** Environment git probes run with (the policy's questions: aliases, ignored files, pushed commits). */
  gitEnv: NodeJS.ProcessEnv;
  /** The user's home, for `~` in commands. */
  home?: string;
};

/** Files looked at under a directory or glob a command would remove or overwrite: a bound on a command like `rm -rf /`. */
const WALK_MAX_ENTRIES = 20_000;
/** A git alias that runs a shell command is judged too, this many levels deep. */
const MAX_ALIAS_DEPTH = 4;

const toPosix = (p: string) => p.split(sep).join('/');

/** The repository-relative path of `abs`, or undefined outside the work tree ('' is the root itself). */
function inRepo(root: string, abs: string): string | undefined {
  const r = relative(root, abs);
  if (r === '') return '';
  return r.startsWith('..') || isAbsolute(r) ? undefined : toPosix(r);
}

/** `abs` with symbolic links resolved along the part of it that exists (the rest appended as given). */
function realLoose(abs: string): string {
  const tail: string[] = [];
  let cur = abs;
  for (let i = 0; i < 256; i++) {
    try {
      const real = realpathSync(cur);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch {
      const up = dirname(cur);
      if (up === cur) return abs;
      tail.push(basename(cur));
      cur = up;
    }
  }
  return abs;
}

/** The repository-relative names of `abs`: as written and through symbolic links (a link may lead to a protected file). */
function namesInRepo(root: string, abs: string): string[] {
  const out = new Set<string>();
  for (const p of [abs, realLoose(abs)]) {
    const r = inRepo(root, p);
    if (r !== undefined) out.add(r);
  }
  return [...out];
}

const prefix = 'hermesd: ';

function writeDenial(jc: JudgeContext, rel: string, verb: string, how?: string): Denial | undefined {
  const what = how ? `\`${how}\` would ${verb} ${rel}` : `Refused to ${verb} ${rel}`;
  if (rel === '.git' || rel.startsWith('.git/')) {
    return { rule: 'git-dir', message: `${prefix}${how ? `Refused: ${what}` : what}: it is inside the git directory; hooks and config there decide what runs at commit time. Use git commands instead.` };
  }
  if (guardOwnedPath(rel)) {
    return {
      rule: 'guard-files',
      message:
        `${prefix}${how ? `Refused: ${what}` : what}: hermesd's guard reads this file (repository config, git hooks, agents' hooks); only the user changes it, ` +
        'and a change that loosens the guard applies only after `hermesd config approve`. Ask the user to make this change.',
    };
  }
  const rule = protectMatcher(jc.config).ruleFor(rel);
  if (rule) return { rule: rule.id, message: `${prefix}${how ? `Refused: ${what}, which` : `${what}: it`} is protected by repository rule "${rule.id}": ${rule.message}` };
  return undefined;
}

function lstat(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Every file (repository-relative) under `dirRel`, bounded; `.git` and node_modules are not entered. */
function filesUnder(root: string, dirRel: string, budget: { left: number }): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    if (budget.left-- <= 0) return;
    const st = lstat(join(root, rel));
    if (!st) return;
    if (st.isDirectory()) {
      const base = rel.slice(rel.lastIndexOf('/') + 1);
      if (base === '.git' || base === 'node_modules') {
        if (base === '.git') out.push(rel);
        return;
      }
      let names: string[] = [];
      try {
        names = readdirSync(join(root, rel));
      } catch {
        return;
      }
      for (const name of names.sort()) walk(rel ? `${rel}/${name}` : name);
    } else out.push(rel);
  };
  walk(dirRel);
  return out;
}

/** The paths (repository-relative) a shell glob written in the command would match, bounded. */
function expandGlob(root: string, absPattern: string, budget: { left: number }): string[] {
  const rel = inRepo(root, absPattern);
  if (rel === undefined) return [];
  const base = picomatch.scan(rel).base;
  const isMatch = picomatch(rel, { dot: false });
  const out: string[] = [];
  const walk = (dir: string) => {
    if (budget.left-- <= 0) return;
    let names: string[] = [];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      return;
    }
    for (const name of names) {
      const p = dir ? `${dir}/${name}` : name;
      if (name === '.git' || name === 'node_modules') {
        if (isMatch(p)) out.push(p);
        continue;
      }
      if (isMatch(p)) out.push(p);
      else if (lstat(join(root, p))?.isDirectory() && p.split('/').length < rel.split('/').length + 8) walk(p);
    }
  };
  walk(base);
  return out;
}

/** A write to `abs` (a file, or a directory with everything under it). */
function judgeWriteTarget(jc: JudgeContext, abs: string, verb: string, how: string | undefined, budget: { left: number }): Denial | undefined {
  const names = namesInRepo(jc.root, abs);
  for (const rel of names) {
    if (rel === '') continue;
    const d = writeDenial(jc, rel, verb, how);
    if (d) return d;
  }
  const rel = inRepo(jc.root, abs);
  if (rel === undefined) return undefined;
  const st = lstat(abs);
  if (how && st?.isDirectory()) {
    for (const f of filesUnder(jc.root, rel, budget)) {
      if (f === rel) continue;
      const d = writeDenial(jc, f, verb, how);
      if (d) return d;
    }
  }
  return undefined;
}

function judgeRead(jc: JudgeContext, abs: string, how: string | undefined): Denial | undefined {
  const rel = inRepo(jc.root, abs);
  const shown = rel === undefined || rel === '' ? abs : rel;
  const names = namesInRepo(jc.root, abs);
  let hit = isSecretPath(rel ?? abs, jc.config, { root: jc.root });
  for (const n of names) hit ??= n === '' ? undefined : isSecretPath(n, jc.config, { root: jc.root });
  if (!hit && names.length === 0) hit = isSecretPath(realLoose(abs), jc.config, { root: jc.root });
  if (!hit) return undefined;
  const base = secretPathMessage(shown, hit);
  return { rule: 'secret-file', message: prefix + (how ? base.replace(/^Refused: /, `Refused: \`${how}\` would read ${shown}; `) : base) };
}

function judgeReaches(jc: JudgeContext, reaches: Reach[], kind: 'write' | 'read', budget: { left: number }): Denial | undefined {
  for (const r of reaches) {
    const targets = r.glob ? expandGlob(jc.root, r.path, budget).map((p) => join(jc.root, p)) : [r.path];
    for (const t of targets) {
      const d = kind === 'write' ? judgeWriteTarget(jc, t, r.delete ? 'delete' : 'write', r.via, budget) : judgeRead(jc, t, r.via);
      if (d) return d;
    }
  }
  return undefined;
}

function judgeShell(jc: JudgeContext, command: string, cwd: string, depth: number, budget: { left: number }): Denial | undefined {
  const reach = analyseShell(command, cwd, { home: jc.home });
  const policy = gitPolicyOf(jc.config);
  for (const call of reach.git) {
    if (inRepo(jc.root, call.cwd) === undefined) continue;
    const { globals } = parseGlobal(call.argv);
    const env = { ...jc.gitEnv, ...call.env };
    const verdict = judgeGit({ argv: call.argv, env: call.env, policy, probe: makeProbe(jc.gitBin, globals, call.cwd, env, call.env) });
    if (verdict.action === 'refuse') {
      return { rule: `guard.gitPolicy.${verdict.policy}`, message: `${prefix}Refused \`${call.text}\`: ${verdict.message}` };
    }
    if (verdict.action === 'shell-alias' && depth < MAX_ALIAS_DEPTH) {
      const d = judgeShell(jc, [verdict.command, ...verdict.args].join(' '), call.cwd, depth + 1, budget);
      if (d) return d;
    }
  }
  return judgeReaches(jc, reach.writes, 'write', budget) ?? judgeReaches(jc, reach.reads, 'read', budget);
}

/** The guard's decision on one tool call; undefined when nothing refuses it. Paths are absolute or relative to `cwd`. */
export function judgeTool(jc: JudgeContext, action: ToolAction, cwd: string): Denial | undefined {
  const budget = { left: WALK_MAX_ENTRIES };
  switch (action.kind) {
    case 'write':
      for (const p of action.paths) {
        for (const rel of namesInRepo(jc.root, resolve(cwd, p))) {
          if (rel === '') continue;
          const d = writeDenial(jc, rel, action.verb);
          if (d) return d;
        }
      }
      return undefined;
    case 'read':
      for (const p of action.paths) {
        const d = judgeRead(jc, resolve(cwd, p), undefined);
        if (d) return d;
      }
      return undefined;
    case 'shell':
      return judgeShell(jc, action.command, action.cwd, 0, budget);
    default:
      return undefined;
  }
}
