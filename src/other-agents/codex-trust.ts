/**
 * Whether Codex will run hermesd's hooks in this project: Codex (0.171) loads a project's
 * `.codex/` (hooks.json, config.toml: hooks and MCP servers) only when the project is trusted
 * (`[projects."<root>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`), and runs a
 * project hook only once the user reviewed it: `[hooks.state."<hooks file>:<event>:<group>:<handler>"]
 * trusted_hash = "sha256:…"` there, the hash of the hook as Codex normalises it
 * (codex-rs/hooks/src/engine/discovery.rs, `command_hook_hash`; codex-rs/config/src/fingerprint.rs,
 * `version_for_toml`). A hook that is new, or changed since it was reviewed, is skipped without
 * a word. Read only: hermesd never writes Codex's trust.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseJsonc } from './json-edit.js';
import { AGENT_STUB } from '../paths/index.js';
import { parseToml } from './toml-edit.js';

/** Codex's own bounds on a hook's timeout (seconds): the default, and SessionEnd's default and maximum. */
const DEFAULT_TIMEOUT_S = 600;
const SESSION_END_DEFAULT_S = 1;
const SESSION_END_MAX_S = 3;
/** The events whose matcher Codex ignores (and leaves out of the hash). */
const NO_MATCHER = new Set(['UserPromptSubmit', 'Stop']);

export type HookTrust = { event: string; key: string; state: 'trusted' | 'new' | 'changed' | 'disabled' };

export type CodexTrust = {
  /** The config.toml read (`$CODEX_HOME`, else ~/.codex). */
  config: string;
  /** Whether Codex loads this project's `.codex/` at all. */
  project: 'trusted' | 'untrusted' | 'not trusted yet';
  /** hermesd's hooks, each as Codex sees it. */
  hooks: HookTrust[];
};

/** `PreToolUse` → `pre_tool_use`: the label Codex keys and hashes hooks by. */
const label = (event: string) => event.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase();

/** Object keys sorted at every level, as Codex canonicalises before hashing. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** The hash Codex records when the user trusts a command hook (verified against Codex 0.171: a hook with this hash runs, one with another does not). */
export function codexHookHash(
  event: string,
  matcher: string | undefined,
  handler: { command: string; timeout?: number; async?: boolean; statusMessage?: string },
): string {
  const timeout =
    event === 'SessionEnd'
      ? Math.min(SESSION_END_MAX_S, Math.max(1, handler.timeout ?? SESSION_END_DEFAULT_S))
      : Math.max(1, handler.timeout ?? DEFAULT_TIMEOUT_S);
  const normalised: Record<string, unknown> = { type: 'command', command: handler.command, timeout, async: handler.async ?? false };
  if (handler.statusMessage !== undefined) normalised.statusMessage = handler.statusMessage;
  const identity: Record<string, unknown> = { event_name: label(event), hooks: [normalised] };
  if (matcher !== undefined && !NO_MATCHER.has(event)) identity.matcher = matcher;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex')}`;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

type Group = { matcher?: unknown; hooks?: unknown };

/** hermesd's hook handlers in the project's Codex hooks file, with the key Codex stores their state under. */
function ourHooks(root: string): Array<{ event: string; key: string; hash: string }> {
  const json = join(root, '.codex', 'hooks.json');
  const toml = join(root, '.codex', 'config.toml');
  let file: string;
  let events: Record<string, unknown>;
  try {
    if (existsSync(json)) {
      file = json;
      events = ((parseJsonc(readFileSync(json, 'utf8'), '.codex/hooks.json').value as { hooks?: Record<string, unknown> }) ?? {}).hooks ?? {};
    } else {
      file = toml;
      events = (parseToml(readFileSync(toml, 'utf8'), '.codex/config.toml').hooks as Record<string, unknown>) ?? {};
    }
  } catch {
    return [];
  }
  const out: Array<{ event: string; key: string; hash: string }> = [];
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((g: Group, gi) => {
      const handlers = Array.isArray(g?.hooks) ? g.hooks : [];
      handlers.forEach((h: Record<string, unknown>, hi) => {
        if (h?.type !== 'command' || typeof h.command !== 'string' || !h.command.includes(AGENT_STUB)) return;
        const matcher = typeof g.matcher === 'string' ? g.matcher : undefined;
        const handler = {
          command: h.command,
          ...(typeof h.timeout === 'number' ? { timeout: h.timeout } : {}),
          async: h.async === true,
          ...(typeof h.statusMessage === 'string' ? { statusMessage: h.statusMessage } : {}),
        };
        out.push({ event, key: `${real(file)}:${label(event)}:${gi}:${hi}`, hash: codexHookHash(event, matcher, handler) });
      });
    });
  }
  return out;
}

/** Where Codex keeps its own state: `$CODEX_HOME`, else ~/.codex. */
export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
}

/** Codex's user config (`$CODEX_HOME/config.toml`, else ~/.codex/config.toml), parsed; empty when there is none or it does not parse. */
export function codexUserConfig(env: NodeJS.ProcessEnv = process.env): { path: string; parsed: Record<string, unknown> } {
  const path = join(codexHome(env), 'config.toml');
  try {
    return { path, parsed: parseToml(readFileSync(path, 'utf8'), path) };
  } catch {
    // no config (Codex never ran, or never trusted anything)
    return { path, parsed: {} };
  }
}

/** What Codex will do with this project's `.codex/` and hermesd's hooks in it, from its config (read only). */
export function codexTrust(root: string, env: NodeJS.ProcessEnv = process.env): CodexTrust {
  const { path: config, parsed: user } = codexUserConfig(env);
  const projects = (user.projects ?? {}) as Record<string, { trust_level?: unknown }>;
  const levels = [root, real(root)].map((p) => projects[p]?.trust_level);
  const project = levels.includes('untrusted') ? 'untrusted' : levels.includes('trusted') ? 'trusted' : 'not trusted yet';
  const states = ((user.hooks as { state?: unknown } | undefined)?.state ?? {}) as Record<string, { enabled?: unknown; trusted_hash?: unknown }>;
  const hooks = ourHooks(root).map(({ event, key, hash }): HookTrust => {
    const s = states[key];
    const state = s?.enabled === false ? 'disabled' : s?.trusted_hash === hash ? 'trusted' : typeof s?.trusted_hash === 'string' ? 'changed' : 'new';
    return { event, key, state };
  });
  return { config, project, hooks };
}

/** Why Codex will not run hermesd here, and what to do, or undefined when it will. */
export function codexTrustProblem(root: string, env: NodeJS.ProcessEnv = process.env): { detail: string; fix: string } | undefined {
  const t = codexTrust(root, env);
  if (t.project === 'untrusted') {
    return {
      detail: `Codex ignores this project's .codex/ (hermesd's hooks and MCP server): it is marked untrusted in ${t.config}`,
      fix: `set [projects."${root}"] trust_level = "trusted" in ${t.config}`,
    };
  }
  if (t.project !== 'trusted') {
    return {
      detail: `Codex ignores this project's .codex/ (hermesd's hooks and MCP server) until you trust the project (${t.config} has no trust for ${root})`,
      fix: 'run `codex` here and trust the folder (or `codex exec --trust`), then review the hooks in /hooks',
    };
  }
  const skipped = t.hooks.filter((h) => h.state !== 'trusted');
  if (skipped.length === 0) return undefined;
  const by = (state: HookTrust['state']) => [...new Set(skipped.filter((h) => h.state === state).map((h) => h.event))];
  const parts = [
    by('new').length ? `not reviewed yet: ${by('new').join(', ')}` : '',
    by('changed').length ? `changed since you reviewed them: ${by('changed').join(', ')}` : '',
    by('disabled').length ? `disabled: ${by('disabled').join(', ')}` : '',
  ].filter(Boolean);
  return { detail: `Codex skips hermesd's hooks it has no trust for (${parts.join('; ')})`, fix: "open /hooks in Codex here and trust hermesd's hooks" };
}
