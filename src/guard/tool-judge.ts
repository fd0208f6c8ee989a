/**
 * The guard's judgement of another agent's tool call, before it runs: the same rules that
 * bind hermesd's own tools. Writes (edits, patches, notebook edits, deletions, and the files
 * a shell command would write) may not touch a path a repository rule protects, a file the
 * guard reads (config, hook managers, agents' hooks) or the git directory; shell commands
 * go through the git policy (no --no-verify, no hooks bypass, no force push, no `add -f` of
 * ignored files); secret files are not read. A denial names the rule and what to do instead.
 */
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import picomatch from 'picomatch';
import { protectMatcher, gitPolicyOf, type GuardConfig } from './guard-config.js';
import { judgeGit, parseGlobal } from './git-policy.js';
import { makeProbe } from './git-probe.js';
import { guardOwnedPath, planAllowsWrite, USER_CONFIG_NAMES } from './sandbox-plan.js';
import type { SandboxPlan } from './sandbox.js';
import { GIT_READ_REASON, gitReadHit, gitReadPaths } from './git-reads.js';
import { hardLinkedProtected } from './protect.js';
import { relativeTo, resolvePhysical } from '../rules/protected-paths.js';
import { isSecretPath, secretPathMessage } from '../security/secret-paths.js';
import { analyseShell, type Reach } from './shell-reach.js';
import type { Denial, ToolAction } from './tool-call.js';

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
  /** $HERMES_HOME: hermesd's own state, never an agent's to write. */
  hermesHome?: string;
  /**
   * hermesd's sandbox plan of this repository's shell commands: outside the work tree a tool may
   * write only where a confined command could (the temporary folders, `guard.sandbox.writable`).
   */
  plan?: () => Pick<SandboxPlan, 'writable' | 'readOnly' | 'maskFiles' | 'maskDirs' | 'hide' | 'tmp'>;
  /** The protect rule of a protected file `abs` is a hard link of (the same inode), if any. */
  hardLinkOf?: (abs: string, st: Stats) => { id: string; message: string } | undefined;
  /** What git reads as configuration or runs as hooks outside the git directory (git-reads.ts): never a tool's to write. */
  gitReads?: () => string[];
};

/**
 * The context a write is judged in, for one work tree: its rules, the hard links of its
 * protected files, what git reads there. hermesd's own file tools are judged in it as it is;
 * other agents' calls add the sandbox plan (writes outside the work tree) and the homes.
 */
export function writeJudgeContext(o: {
  root: string;
  gitDir: string;
  commonDir: string;
  config: GuardConfig;
  gitBin: string;
  gitEnv: NodeJS.ProcessEnv;
}): JudgeContext {
  // Read once per judgement: a shell command's every write reach asks.
  let reads: string[] | undefined;
  return {
    root: o.root,
    config: o.config,
    gitBin: o.gitBin,
    gitEnv: o.gitEnv,
    hardLinkOf: (_abs, st) => hardLinkedProtected(o.root, o.config, o.gitBin, st),
    gitReads: () => (reads ??= gitReadPaths(o, o.gitBin)),
  };
}

/** Outside the work tree, a path through one of the names of USER_CONFIG_NAMES is never a tool's to write, whatever folder holds it (a HOME under /tmp included). */
const CONFIG_NAMES_OUTSIDE: ReadonlySet<string> = new Set(USER_CONFIG_NAMES);

/** Files looked at under a directory or glob a command would remove or overwrite: a bound on a command like `rm -rf /`. */
const WALK_MAX_ENTRIES = 20_000;
/** A git alias that runs a shell command is judged too, this many levels deep. */
const MAX_ALIAS_DEPTH = 4;

/** The repository-relative path of `abs`, or undefined outside the work tree ('' is the root itself). */
function inRepo(root: string, abs: string): string | undefined {
  return relativeTo(root, abs);
}

/**
 * The repository-relative names of a path as a program would reach it (rules/protected-paths.ts:
 * every link followed where it stands) and as it is written (`..` taken lexically): a rule that
 * covers either refuses it.
 */
function namesInRepo(root: string, abs: string, cwd: string = root): string[] {
  const out = new Set<string>();
  for (const p of [resolve(cwd, abs), resolvePhysical(abs, cwd).path]) {
    const r = inRepo(root, p);
    if (r !== undefined) out.add(r);
  }
  return [...out];
}

const prefix = 'hermesd: ';

function writeDenial(jc: JudgeContext, rel: string, verb: string, how?: string): Denial | undefined {
  const what = how ? `\`${how}\` would ${verb} ${rel}` : `Refused to ${verb} ${rel}`;
  if (rel === '.git' || rel.startsWith('.git/')) {
    return {
      rule: 'git-dir',
      message: `${prefix}${how ? `Refused: ${what}` : what}: it is inside the git directory; hooks and config there decide what runs at commit time. Use git commands instead.`,
    };
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
  if (rule)
    return {
      rule: rule.id,
      message: `${prefix}${how ? `Refused: ${what}, which` : `${what}: it`} is protected by repository rule "${rule.id}": ${rule.message}`,
    };
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

/**
 * A write that lands outside the work tree: allowed where hermesd's sandbox plan lets a confined
 * command write (the temporary folders, `guard.sandbox.writable`), refused everywhere else, and
 * always for hermesd's own state and what agents and git read as configuration.
 */
function outsideDenial(jc: JudgeContext, real: string, verb: string, how: string | undefined): Denial | undefined {
  const what = how ? `Refused: \`${how}\` would ${verb} ${real}` : `Refused to ${verb} ${real}`;
  if (jc.hermesHome && relativeTo(jc.hermesHome, real) !== undefined) {
    return {
      rule: 'outside-sandbox',
      message: `${prefix}${what}: it is hermesd's own state ($HERMES_HOME: its configuration, approvals and memory); only the user changes it.`,
    };
  }
  const configName = real.split('/').find((part) => CONFIG_NAMES_OUTSIDE.has(part));
  if (configName || (jc.plan && !planAllowsWrite(jc.plan(), real))) {
    return {
      rule: 'outside-sandbox',
      message:
        `${prefix}${what}: it is outside what an agent's tools and commands may write here (the work tree and the temporary folders${configName ? `; ${configName} is configuration git or an agent reads` : ''}). ` +
        'Ask the user; a folder commands need (a build cache) can be added to guard.sandbox.writable in .hermes/config.yaml, which the user approves with `hermesd config approve`.',
    };
  }
  return undefined;
}

/** A write to what git reads as configuration or runs as a hook (git-reads.ts), or to a folder holding one. */
function gitReadDenial(jc: JudgeContext, paths: string[], verb: string, how: string | undefined): Denial | undefined {
  const hit = jc.gitReads ? gitReadHit(jc.gitReads(), paths) : undefined;
  if (hit === undefined) return undefined;
  const shown = inRepo(jc.root, hit) || hit;
  return { rule: 'git-config', message: `${prefix}${how ? `Refused: \`${how}\` would ${verb} ${shown}` : `Refused to ${verb} ${shown}`}: ${GIT_READ_REASON}` };
}

/** A write that reaches a protected file through a hard link of it: the same file under another name. */
function hardLinkDenial(jc: JudgeContext, real: string, st: Stats | undefined, verb: string, how: string | undefined): Denial | undefined {
  if (!st || !st.isFile() || st.nlink < 2 || !jc.hardLinkOf) return undefined;
  const rule = jc.hardLinkOf(real, st);
  if (!rule) return undefined;
  const rel = inRepo(jc.root, real) ?? real;
  return {
    rule: rule.id,
    message: `${prefix}${how ? `Refused: \`${how}\` would ${verb} ${rel}` : `Refused to ${verb} ${rel}`}: it is a hard link of a file protected by repository rule "${rule.id}": ${rule.message}`,
  };
}

/** A write to `abs` (a file, or a directory with everything under it), as the program that writes it reaches it. */
function judgeWriteTarget(
  jc: JudgeContext,
  abs: string,
  verb: string,
  how: string | undefined,
  budget: { left: number },
  cwd: string = jc.root,
): Denial | undefined {
  const names = namesInRepo(jc.root, abs, cwd);
  for (const rel of names) {
    if (rel === '') continue;
    const d = writeDenial(jc, rel, verb, how);
    if (d) return d;
  }
  const physical = resolvePhysical(abs, cwd);
  const read = gitReadDenial(jc, [resolve(cwd, abs), physical.path], verb, how);
  if (read) return read;
  if (inRepo(jc.root, physical.path) === undefined) return outsideDenial(jc, physical.path, verb, how);
  const linked = hardLinkDenial(jc, physical.path, physical.stat, verb, how);
  if (linked) return linked;
  const rel = inRepo(jc.root, resolve(cwd, abs));
  if (rel === undefined) return outsideDenial(jc, physical.path, verb, how);
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
  if (!hit && names.length === 0) hit = isSecretPath(resolvePhysical(abs).path, jc.config, { root: jc.root });
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
      // A tool's write is judged as a command's write to the same path (judgeWriteTarget): one way.
      for (const p of action.paths) {
        const d = judgeWriteTarget(jc, p, action.verb, undefined, budget, cwd);
        if (d) return d;
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
