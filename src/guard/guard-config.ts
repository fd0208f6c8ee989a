/**
 * What the guard reads from the configuration: the repository's protect rules and the
 * `guard` key. Taken as a structural subset of HermesConfig so the guard can judge with a
 * partial config (tests, the git shim) and every missing policy means "refuse".
 */
import type { HermesConfig, Rule } from '../config/schema.js';
import { compileProtect, globBase, type CompiledProtect } from '../rules/protected-paths.js';

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

/** A compiled matcher of every `protect` rule: path → the first rule protecting it (rules/protected-paths.ts compiles each). */
export type ProtectMatcher = {
  rules: Array<CompiledProtect<ProtectRule>>;
  ruleFor(rel: string): ProtectRule | undefined;
  /** Static directory prefixes of the globs ('' when a glob can match anywhere). */
  bases: string[];
  empty: boolean;
};

/** Compiled once per config object: the terminal guard asks on every command (snapshot and restore). */
const matcherCache = new WeakMap<GuardConfig, ProtectMatcher>();

export function protectMatcher(config: GuardConfig | undefined): ProtectMatcher {
  if (!config) return compileMatcher(undefined);
  let m = matcherCache.get(config);
  if (!m) matcherCache.set(config, (m = compileMatcher(config)));
  return m;
}

function compileMatcher(config: GuardConfig | undefined): ProtectMatcher {
  const rules: Array<CompiledProtect<ProtectRule>> = [];
  for (const r of config?.rules ?? []) {
    const c = compileProtect({
      id: r.id,
      message: r.message,
      ...(r.protect ? { protect: r.protect } : {}),
      ...(r.exclude ? { exclude: r.exclude } : {}),
      ...(r.generator ? { generator: r.generator } : {}),
    });
    if (c) rules.push(c);
  }
  const bases = new Set<string>();
  for (const r of rules) for (const g of r.globs) bases.add(globBase(g));
  return {
    rules,
    bases: [...bases],
    empty: rules.length === 0,
    ruleFor(rel) {
      for (const r of rules) if (r.covers(rel)) return { id: r.rule.id, message: r.rule.message };
      return undefined;
    },
  };
}
