/**
 * A configuration the agent cannot loosen. The guard-relevant part of the effective config
 * (rules, git policy, secret paths, sandbox, the pre-commit rule check, what a hook does
 * when the daemon is unreachable) is recorded per work tree as approved. A change that
 * tightens it applies at once and becomes the new record; a change that loosens it —
 * however it arrived: a checkout, a pull, a hand edit — is held: the approved value stays in
 * force until the user runs `hermesd config approve` (or POST /v1/config/approve), which
 * a sandboxed command cannot reach. The first config a daemon sees is recorded as approved.
 */
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '../config/load.js';
import { defaults, type HermesConfig, type Rule } from '../config/schema.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { GIT_POLICY_NAMES, type GitPolicy } from './guard-config.js';
import { approvalRequestsDir, approvalsDir } from '../paths/index.js';
import { Refused } from '../errors/index.js';

type GuardRule = Pick<Rule, 'id' | 'message'> & Partial<Pick<Rule, 'protect' | 'exclude' | 'generator' | 'forbid' | 'secrets' | 'allow' | 'paths'>>;

/** The part of a config the guard enforces with: what a loosening is measured on. */
export type GuardSettings = {
  rules: GuardRule[];
  gitPolicy: GitPolicy;
  secretPaths: string[];
  sandbox: { enabled: boolean; ifUnavailable: 'refuse' | 'unsandboxed'; network: boolean; writable: string[]; env: string[]; bwrap?: string };
  preCommitRules: boolean;
  onUnavailable: 'allow' | 'block';
  /** agents.onUnavailable (absent in records written before other agents' hooks). */
  agentsOnUnavailable?: 'allow' | 'block';
};

/** One loosening: the dotted key, the approved value and the one the files ask for. */
export type Loosening = { key: string; approved: string; requested: string };

export type ApprovalRecord = { root: string; approvedAt: string; settings: GuardSettings };

export function guardSettingsOf(config: HermesConfig): GuardSettings {
  return {
    rules: config.rules.map((r) => {
      const out: GuardRule = { id: r.id, message: r.message };
      for (const k of ['protect', 'exclude', 'generator', 'forbid', 'secrets', 'allow', 'paths'] as const)
        if (r[k] !== undefined) (out as Record<string, unknown>)[k] = r[k];
      return out;
    }),
    gitPolicy: { ...config.guard.gitPolicy },
    secretPaths: [...config.guard.secretPaths],
    sandbox: { ...config.guard.sandbox, writable: [...config.guard.sandbox.writable], env: [...config.guard.sandbox.env] },
    preCommitRules: config.hooks['pre-commit'].rules,
    onUnavailable: config.hooks.onUnavailable,
    agentsOnUnavailable: config.agents.onUnavailable,
  };
}

const subset = (a: readonly string[] | undefined, b: readonly string[] | undefined) => (a ?? []).every((x) => (b ?? []).includes(x));
const show = (v: unknown) => (v === undefined ? '(none)' : Array.isArray(v) ? `[${v.join(', ')}]` : String(v));

/** How `current` loosens an approved rule (empty: the same or stricter). */
function ruleLoosenings(a: GuardRule, c: GuardRule): Loosening[] {
  const out: Loosening[] = [];
  const key = (k: string) => `rules.${a.id}.${k}`;
  if (!subset(a.protect, c.protect)) out.push({ key: key('protect'), approved: show(a.protect), requested: show(c.protect) });
  if (!subset(c.exclude, a.exclude)) out.push({ key: key('exclude'), approved: show(a.exclude), requested: show(c.exclude) });
  if (c.generator !== undefined && c.generator !== a.generator) out.push({ key: key('generator'), approved: show(a.generator), requested: show(c.generator) });
  if (a.forbid !== undefined && a.forbid !== c.forbid) out.push({ key: key('forbid'), approved: show(a.forbid), requested: show(c.forbid) });
  // Secrets: turned off, or more values allowed as fixtures.
  if (a.secrets === true && c.secrets !== true) out.push({ key: key('secrets'), approved: 'true', requested: show(c.secrets ?? false) });
  if (!subset(c.allow, a.allow)) out.push({ key: key('allow'), approved: show(a.allow), requested: show(c.allow) });
  // `paths` unset means every file; naming paths narrows it unless '**' is among them.
  if ((a.forbid !== undefined && c.forbid === a.forbid) || (a.secrets === true && c.secrets === true)) {
    const wide = (p: string[] | undefined) => p === undefined || p.includes('**');
    if (!wide(c.paths) && (wide(a.paths) || !subset(a.paths, c.paths)))
      out.push({ key: key('paths'), approved: show(a.paths ?? ['**']), requested: show(c.paths) });
  }
  return out;
}

/** Every way `current` is looser than `approved`. */
export function loosenings(approved: GuardSettings, current: GuardSettings): Loosening[] {
  const out: Loosening[] = [];
  for (const a of approved.rules) {
    const c = current.rules.find((r) => r.id === a.id);
    if (!c) out.push({ key: `rules.${a.id}`, approved: 'present', requested: 'removed' });
    else out.push(...ruleLoosenings(a, c));
  }
  for (const name of GIT_POLICY_NAMES) {
    if (approved.gitPolicy[name] === 'refuse' && current.gitPolicy[name] === 'allow')
      out.push({ key: `guard.gitPolicy.${name}`, approved: 'refuse', requested: 'allow' });
  }
  if (!subset(approved.secretPaths, current.secretPaths))
    out.push({ key: 'guard.secretPaths', approved: show(approved.secretPaths), requested: show(current.secretPaths) });
  const [a, c] = [approved.sandbox, current.sandbox];
  if (a.enabled && !c.enabled) out.push({ key: 'guard.sandbox.enabled', approved: 'true', requested: 'false' });
  if (a.ifUnavailable === 'refuse' && c.ifUnavailable === 'unsandboxed')
    out.push({ key: 'guard.sandbox.ifUnavailable', approved: 'refuse', requested: 'unsandboxed' });
  if (!a.network && c.network) out.push({ key: 'guard.sandbox.network', approved: 'false', requested: 'true' });
  if (!subset(c.writable, a.writable)) out.push({ key: 'guard.sandbox.writable', approved: show(a.writable), requested: show(c.writable) });
  if (!subset(c.env, a.env)) out.push({ key: 'guard.sandbox.env', approved: show(a.env), requested: show(c.env) });
  // Another bubblewrap, or none (HERMESD_BWRAP): whatever it names, it decides what confines a command.
  if (c.bwrap !== undefined && c.bwrap !== a.bwrap) out.push({ key: 'guard.sandbox.bwrap (HERMESD_BWRAP)', approved: show(a.bwrap), requested: c.bwrap });
  if (approved.preCommitRules && !current.preCommitRules) out.push({ key: 'hooks.pre-commit.rules', approved: 'true', requested: 'false' });
  if (approved.onUnavailable === 'block' && current.onUnavailable === 'allow') out.push({ key: 'hooks.onUnavailable', approved: 'block', requested: 'allow' });
  if (approved.agentsOnUnavailable === 'block' && current.agentsOnUnavailable === 'allow')
    out.push({ key: 'agents.onUnavailable', approved: 'block', requested: 'allow' });
  return out;
}

/** `config` with every loosening of `approved` held back (the approved value in force), everything stricter kept. */
export function holdLoosenings(config: HermesConfig, approved: GuardSettings): HermesConfig {
  const current = guardSettingsOf(config);
  const rules = config.rules.map((r) => {
    const a = approved.rules.find((x) => x.id === r.id);
    return a && ruleLoosenings(a, guardSettingsOf({ ...config, rules: [r] }).rules[0]!).length > 0 ? (a as Rule) : r;
  });
  for (const a of approved.rules) if (!config.rules.some((r) => r.id === a.id)) rules.push(a as Rule);
  const gitPolicy = { ...config.guard.gitPolicy };
  for (const name of GIT_POLICY_NAMES) if (approved.gitPolicy[name] === 'refuse') gitPolicy[name] = 'refuse';
  const [a, c] = [approved.sandbox, current.sandbox];
  return {
    ...config,
    rules,
    guard: {
      ...config.guard,
      gitPolicy,
      secretPaths: [...new Set([...config.guard.secretPaths, ...approved.secretPaths])],
      sandbox: {
        enabled: c.enabled || a.enabled,
        ifUnavailable: a.ifUnavailable === 'refuse' ? 'refuse' : c.ifUnavailable,
        network: c.network && a.network,
        writable: c.writable.filter((w) => a.writable.includes(w)),
        env: c.env.filter((e) => a.env.includes(e)),
        ...(c.bwrap !== undefined && c.bwrap === a.bwrap ? { bwrap: c.bwrap } : {}),
      },
    },
    hooks: {
      ...config.hooks,
      'pre-commit': { ...config.hooks['pre-commit'], rules: config.hooks['pre-commit'].rules || approved.preCommitRules },
      onUnavailable: approved.onUnavailable === 'block' ? 'block' : config.hooks.onUnavailable,
    },
    agents: { ...config.agents, onUnavailable: approved.agentsOnUnavailable === 'block' ? 'block' : config.agents.onUnavailable },
  };
}

/** `$HERMES_HOME/guard/approved/<hash of the work tree>.json`: per work tree, outside it, where no sandboxed command writes. */
export function approvalFile(home: string, root: string): string {
  return join(approvalsDir(home), `${createHash('sha256').update(root).digest('hex').slice(0, 16)}.json`);
}

export function readApproval(home: string, root: string): ApprovalRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(approvalFile(home, root), 'utf8')) as ApprovalRecord;
    return r && r.settings && Array.isArray(r.settings.rules) ? r : undefined;
  } catch {
    return undefined;
  }
}

function writeApproval(home: string, root: string, settings: GuardSettings): void {
  const record: ApprovalRecord = { root, approvedAt: new Date().toISOString(), settings };
  mkdirSync(dirname(approvalFile(home, root)), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(approvalFile(home, root), JSON.stringify(record, null, 2) + '\n', 0o600);
}

export type Approval = { config: HermesConfig; pending: Loosening[] };

/**
 * Records the files' settings as approved (they are the same or stricter). A record that cannot
 * be written (a full disk) leaves the last one: it is stricter or equal, so the config in force
 * is the files' either way, and a later load records it.
 */
function keepRecord(home: string, root: string, settings: GuardSettings): void {
  try {
    writeApproval(home, root, settings);
  } catch {
    // the next load tries again
  }
}

/**
 * The config in force: the files' config with pending loosenings held back. Records the
 * files' guard settings as approved when there is no record yet or when they are the same
 * or stricter than the record.
 */
export function applyApproval(home: string, root: string, config: HermesConfig, opts: { record?: boolean } = {}): Approval {
  const record = opts.record ?? true;
  const current = guardSettingsOf(config);
  let approved = readApproval(home, root);
  if (!approved) {
    // The first config a daemon sees is approved as it is, but for the bubblewrap the environment names: that one the user approves.
    const { bwrap: _fromEnv, ...sandbox } = current.sandbox;
    const first = { ...current, sandbox };
    if (record) keepRecord(home, root, first);
    approved = { root, approvedAt: new Date().toISOString(), settings: first };
  }
  const pending = loosenings(approved.settings, current);
  if (pending.length === 0) {
    if (record && JSON.stringify(approved.settings) !== JSON.stringify(current)) keepRecord(home, root, current);
    return { config, pending };
  }
  return { config: holdLoosenings(config, approved.settings), pending };
}

/** The user's confirmation: the files' guard settings become the approved ones; returns what that loosened. */
export function approveConfig(home: string, root: string, config: HermesConfig): Loosening[] {
  const current = guardSettingsOf(config);
  const record = readApproval(home, root);
  const loosened = record ? loosenings(record.settings, current) : [];
  writeApproval(home, root, current);
  return loosened;
}

/** How long a request to approve is good for: made by the command that posts it, a moment before. */
const APPROVAL_REQUEST_TTL_MS = 5 * 60_000;
const PROOF = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * Writes a request to approve the loosenings of the work tree at `root`, and returns its name
 * (POST /v1/config/approve takes it). Writing it is the proof: $HERMES_HOME is read-only in every
 * sandbox hermesd runs a command in, and outside the user's home in an agent's own.
 */
export function writeApprovalRequest(home: string, root: string): string {
  const proof = randomBytes(18).toString('base64url');
  const dir = approvalRequestsDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, proof), root, { mode: 0o600, flag: 'wx' });
  return proof;
}

/**
 * Takes (and removes) the request `proof` for `root`: a regular file this user made in the last
 * minutes, naming this work tree. A Refused error otherwise: the approval is not made.
 */
export function takeApprovalRequest(home: string, root: string, proof: string): void {
  const refused = (why: string) =>
    new Refused(
      `Not approved: ${why}. A loosening is approved with \`hermesd config approve\` at a terminal (or by writing a request under ${approvalRequestsDir(home)} and posting its name: docs/api.md).`,
    );
  if (!PROOF.test(proof)) throw refused('the request name is not one hermesd makes');
  const file = join(approvalRequestsDir(home), proof);
  let st;
  try {
    st = lstatSync(file);
  } catch {
    throw refused(`there is no request ${proof}`);
  }
  try {
    if (!st.isFile()) throw refused('the request is not a file');
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw refused("the request belongs to another user than the daemon's");
    if (Date.now() - st.mtimeMs > APPROVAL_REQUEST_TTL_MS) throw refused('the request is too old');
    if (readFileSync(file, 'utf8') !== root) throw refused(`the request names another work tree than ${root}`);
  } finally {
    rmSync(file, { force: true });
  }
}

/** One line per pending loosening, for status and doctor. */
export function describeLoosenings(pending: Loosening[]): string {
  return pending.map((l) => `${l.key}: ${l.approved} → ${l.requested}`).join('; ');
}

/**
 * The config in force outside the daemon (init, doctor), as the daemon judges with it: a
 * loosening held until approved, nothing recorded; a config that does not load, the last
 * approved guard settings, else the defaults.
 */
export function configInForce(home: string, root: string): HermesConfig {
  try {
    return applyApproval(home, root, loadConfig({ root, home }), { record: false }).config;
  } catch {
    return configWhenBroken(home, root);
  }
}

/** The config a judgement uses (a judge may need only part of it); `broken`: the files do not load (why), and `config` is the last valid one. */
export type JudgingConfig<C = HermesConfig> = { config: C; broken?: string };

/**
 * What judges while the config files do not load and no valid config was seen: the defaults
 * with the guard settings last approved for this work tree (its rules among them), never "no
 * rules".
 */
export function configWhenBroken(home: string, root: string): HermesConfig {
  const approved = readApproval(home, root);
  return approved ? holdLoosenings(defaults(), approved.settings) : defaults();
}
