/**
 * Which husky a repository runs, read from what each major version leaves on disk. `hermesd
 * init` keeps the layout it finds and never runs another husky's installer over it:
 *
 * - husky 4: its installer (npm's postinstall) writes a script for every git hook into
 *   `.git/hooks`, each sourcing `.git/hooks/husky.sh`, which runs what package.json's
 *   `"husky": {"hooks": …}` (or a `.huskyrc`) names. `core.hooksPath` is not used. Its switch
 *   is `HUSKY_SKIP_HOOKS=1`; it knows nothing of `HUSKY=0`.
 * - husky 5–8: `core.hooksPath = .husky`; each committed `.husky/<hook>` starts by sourcing
 *   `.husky/_/husky.sh` (not committed), which stops at `HUSKY=0`, sources `~/.huskyrc` and
 *   runs the file again with `sh -e`.
 * - husky 9: `core.hooksPath = .husky/_`, where a stub per hook sources husky's runner `h`,
 *   which stops at `HUSKY=0` and runs `.husky/<hook>` with `sh -e`. (Its `_/husky.sh` only
 *   prints a deprecation notice for files still sourcing it.)
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { readTextIfAny } from '../storage/read.js';

export type HuskyLayout = 'husky4' | 'husky5-8' | 'husky9';

export type HuskyFound = {
  layout: HuskyLayout;
  /** The husky directory, relative to the root (husky 5–9). */
  dir?: string;
  /** Whether husky's hooks are installed in this clone (core.hooksPath set, or husky 4's scripts in .git/hooks). */
  installed: boolean;
  /** What says so, in words (init prints it). */
  what: string;
};

/** What husky 9 writes as `_/husky.sh`: a notice for hook files that still source it. */
const HUSKY9_NOTICE = 'husky - DEPRECATED';
/** The line husky 5–8 put at the top of every hook file (`. "$(dirname -- "$0")/_/husky.sh"` in husky 8). */
const SOURCES_HUSKY_SH = /^\s*\.\s+"\$\(dirname (?:-- )?"\$0"\)\/_\/husky\.sh"/m;
/** The mark of husky 4's scripts in .git/hooks (husky 0.14 and before: `#husky`). */
const HUSKY4_MARK = '# husky';
/** Where husky 4 reads its config besides package.json (cosmiconfig's names for "husky"). */
const HUSKY4_RC = ['.huskyrc', '.huskyrc.json', '.huskyrc.yaml', '.huskyrc.yml', '.huskyrc.js', '.huskyrc.cjs', 'husky.config.js', 'husky.config.cjs'];

type PackageJson = {
  husky?: unknown;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
};

function packageJson(root: string): PackageJson | undefined {
  const text = readTextIfAny(join(root, 'package.json'));
  if (!text) return undefined;
  try {
    const pkg = JSON.parse(text) as unknown;
    return pkg && typeof pkg === 'object' ? (pkg as PackageJson) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether package.json names husky (a dependency, or a prepare script running it). */
function packageJsonUsesHusky(root: string): boolean {
  const pkg = packageJson(root);
  return Boolean(pkg && (pkg.devDependencies?.husky || pkg.dependencies?.husky || /\bhusky\b/.test(pkg.scripts?.prepare ?? '')));
}

/** husky's version: the installed package's, else what package.json asks for. */
function huskyVersion(root: string): string | undefined {
  const installed = readTextIfAny(join(root, 'node_modules', 'husky', 'package.json'));
  if (installed) {
    try {
      const v = (JSON.parse(installed) as { version?: unknown }).version;
      if (typeof v === 'string') return v;
    } catch {
      // fall back to package.json
    }
  }
  const pkg = packageJson(root);
  return pkg?.devDependencies?.husky ?? pkg?.dependencies?.husky;
}

function majorOf(version: string | undefined): number | undefined {
  const m = /(\d+)/.exec(version ?? '');
  return m ? Number(m[1]) : undefined;
}

/** "husky 7.0.4" (installed), "husky ^7.0.4" (asked for), or the layout's name. */
function named(root: string, fallback: string): string {
  const v = huskyVersion(root);
  return v ? `husky ${v}` : fallback;
}

/** The hooks husky 4 is configured to run (package.json's `"husky": {"hooks": …}`), when package.json says. */
export function husky4ConfiguredHooks(root: string): string[] {
  const husky = packageJson(root)?.husky;
  const hooks = husky && typeof husky === 'object' ? (husky as { hooks?: unknown }).hooks : undefined;
  return hooks && typeof hooks === 'object' ? Object.keys(hooks).filter((h) => /^[a-z]+(-[a-z]+)*$/.test(h)) : [];
}

function husky4Config(root: string): string | undefined {
  const husky = packageJson(root)?.husky;
  if (husky && typeof husky === 'object' && 'hooks' in husky) return 'package.json "husky": {"hooks": …}';
  return HUSKY4_RC.find((f) => existsSync(join(root, f)));
}

/** husky 4's scripts in a hooks directory (its husky.sh beside a hook carrying its mark). */
function husky4Installed(hooksDir: string): boolean {
  return existsSync(join(hooksDir, 'husky.sh')) && (readTextIfAny(join(hooksDir, 'pre-commit')) ?? '').includes(HUSKY4_MARK);
}

/** A directory inside the work tree, relative to it; undefined outside it. */
function inRoot(root: string, path: string): string | undefined {
  const rel = relative(root, isAbsolute(path) ? path : resolve(root, path));
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : undefined;
}

/** An existing husky 9 setup: core.hooksPath = <dir>/_ with husky's runner `h` in it; the directory. */
export function husky9Dir(root: string, hooksPath: string | null): string | undefined {
  if (!hooksPath) return undefined;
  const abs = isAbsolute(hooksPath) ? hooksPath : resolve(root, hooksPath);
  if (!abs.endsWith('/_') || !existsSync(join(abs, 'h'))) return undefined;
  return inRoot(root, dirname(abs));
}

/** An installed husky 5–8 setup: core.hooksPath = <dir> holding husky's `_/husky.sh` (not husky 9's notice); the directory. */
function husky58Dir(root: string, hooksPath: string | null): string | undefined {
  if (!hooksPath) return undefined;
  const dir = inRoot(root, hooksPath);
  if (!dir) return undefined;
  const sh = readTextIfAny(join(root, dir, '_', 'husky.sh'));
  return sh !== undefined && !sh.includes(HUSKY9_NOTICE) ? dir : undefined;
}

/** Whether a hook file of `dir` sources `_/husky.sh` (written for husky 5–8). */
function sourcesHuskySh(root: string, dir: string): string | undefined {
  let names: string[] = [];
  try {
    names = readdirSync(join(root, dir)).sort();
  } catch {
    return undefined;
  }
  return names.find((n) => n !== '_' && SOURCES_HUSKY_SH.test(readTextIfAny(join(root, dir, n)) ?? ''));
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The husky this repository runs, or undefined when nothing says husky. `hooksPath`: the
 * repository's own core.hooksPath; `hooksDir`: git's hooks directory without it (<common-dir>/hooks).
 */
export function findHusky(root: string, hooksPath: string | null, hooksDir: string): HuskyFound | undefined {
  const nine = husky9Dir(root, hooksPath);
  if (nine) return { layout: 'husky9', dir: nine, installed: true, what: `husky 9's layout (core.hooksPath = ${hooksPath}, husky's runner ${nine}/_/h)` };
  const classic = husky58Dir(root, hooksPath);
  if (classic) {
    return {
      layout: 'husky5-8',
      dir: classic,
      installed: true,
      what: `${named(root, 'husky 5–8')}'s layout (core.hooksPath = ${hooksPath}; its hook files source ${classic}/_/husky.sh)`,
    };
  }
  const config4 = husky4Config(root);
  const installed4 = husky4Installed(hooksDir);
  if (installed4 || config4) {
    return {
      layout: 'husky4',
      installed: installed4,
      what: `${named(root, 'husky 4')}'s layout (${installed4 ? "husky's scripts in .git/hooks" : "husky's scripts not installed in .git/hooks yet"}${config4 ? `, configured in ${config4}` : ''})`,
    };
  }
  const major = majorOf(huskyVersion(root));
  const dotHusky = isDir(join(root, '.husky'));
  const oldFile = dotHusky ? sourcesHuskySh(root, '.husky') : undefined;
  if ((oldFile && (major === undefined || major < 9)) || (major !== undefined && major >= 5 && major <= 8 && (dotHusky || packageJsonUsesHusky(root)))) {
    return {
      layout: 'husky5-8',
      dir: '.husky',
      installed: false,
      what: `${named(root, 'husky 5–8')}'s layout (${oldFile ? `.husky/${oldFile} sources .husky/_/husky.sh` : 'package.json'}), not installed in this clone (core.hooksPath is ${hooksPath ?? 'unset'})`,
    };
  }
  if (major !== undefined && major <= 4 && packageJsonUsesHusky(root))
    return { layout: 'husky4', installed: false, what: `${named(root, 'husky 4')}'s layout (husky's scripts not installed in .git/hooks yet)` };
  if (dotHusky) return { layout: 'husky9', dir: '.husky', installed: false, what: 'husky (a .husky/ directory)' };
  if (packageJsonUsesHusky(root)) return { layout: 'husky9', dir: '.husky', installed: false, what: 'husky in package.json' };
  return undefined;
}
