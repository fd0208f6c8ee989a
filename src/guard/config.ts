/**
 * What the guard reads from the configuration: the repository's protect rules and the
 * `guard` key. Taken as a structural subset of HermesConfig so the guard can judge with a
 * partial config (tests, the git shim) and every missing policy means "refuse".
 */
import picomatch from 'picomatch';
import type { HermesConfig, Rule } from '../config/schema.js';
import { GLOB_OPTIONS } from '../config/schema.js';

export type GitPolicyName = 'noVerify' | 'forcePush' | 'addIgnored' | 'rewritePushed' | 'hookConfig';
export type PolicyValue = 'refuse' | 'allow';
export type GitPolicy = Record<GitPolicyName, PolicyValue>;

export const GIT_POLICY_NAMES: GitPolicyName[] = ['noVerify', 'forcePush', 'addIgnored', 'rewritePushed', 'hookConfig'];

/** The parts of the configuration the guard uses; everything optional, defaults refuse. */
export type GuardConfig = {
  rules?: Array<Pick<Rule, 'id' | 'message'> & Partial<Pick<Rule, 'protect' | 'exclude' | 'generator'>>>;
  guard?: { gitPolicy?: Partial<GitPolicy>; secretPaths?: string[]; sandbox?: Partial<HermesConfig['guard']['sandbox']> };
};

export function gitPolicyOf(config: GuardConfig | undefined): GitPolicy {
  const given = config?.guard?.gitPolicy ?? {};
  const out = {} as GitPolicy;
  for (const name of GIT_POLICY_NAMES) out[name] = given[name] === 'allow' ? 'allow' : 'refuse';
  return out;
}

export type ProtectRule = { id: string; message: string };

/** A compiled matcher of every `protect` rule: path → the first rule protecting it. */
export type ProtectMatcher = {
  rules: Array<{ rule: ProtectRule; globs: string[]; exclude?: string[]; generator?: string; isMatch: (p: string) => boolean; isExcluded: (p: string) => boolean }>;
  ruleFor(rel: string): ProtectRule | undefined;
  /** Static directory prefixes of the globs ('' when a glob can match anywhere). */
  bases: string[];
  empty: boolean;
};

/** Compiled once per config object: the terminal guard asks on every command (snapshot and restore). */
const matcherCache = new WeakMap<GuardConfig, ProtectMatcher>();

export function protectMatcher(config: GuardConfig | undefined): ProtectMatcher {
  if (!config) return compileProtect(undefined);
  let m = matcherCache.get(config);
  if (!m) matcherCache.set(config, (m = compileProtect(config)));
  return m;
}

function compileProtect(config: GuardConfig | undefined): ProtectMatcher {
  const rules = (config?.rules ?? [])
    .filter((r) => r.protect && r.protect.length > 0)
    .map((r) => ({
      rule: { id: r.id, message: r.message },
      globs: r.protect!,
      exclude: r.exclude,
      generator: r.generator,
      isMatch: picomatch(r.protect!, GLOB_OPTIONS),
      isExcluded: r.exclude && r.exclude.length > 0 ? picomatch(r.exclude, GLOB_OPTIONS) : () => false,
    }));
  const bases = new Set<string>();
  for (const r of rules) for (const g of r.globs) bases.add(picomatch.scan(g).base);
  return {
    rules,
    bases: [...bases],
    empty: rules.length === 0,
    ruleFor(rel) {
      for (const r of rules) if (r.isMatch(rel) && !r.isExcluded(rel)) return r.rule;
      return undefined;
    },
  };
}
