/**
 * Each agent's view of the repository (instruction-files.ts) with where the files it reads
 * besides the authority disagree with it (context/instruction-drift.ts): what `hermesd context
 * --agents`, `hermesd check --context` and the MCP resource `hermesd://agents` show. The daemon
 * answers the first and the last; `check --context` runs it in its own process (CI has no daemon).
 */
import { join } from 'node:path';
import type { AgentName } from '../protocol/agent-hooks.js';
import type { HermesConfig } from '../config/schema.js';
import type { Authority } from '../context/authority.js';
import { readContextFile } from '../context/files.js';
import { claimsOf, compareClaims, protectLines, type Claims, type Drift } from '../context/instruction-drift.js';
import { agentViews, type AgentView } from './instruction-files.js';

export type AgentDrift = AgentView & { conflicts: Drift[] };

export type AgentsReport = {
  /** The authority's files, relative to the root. */
  authority: string[];
  agents: AgentDrift[];
  /** Each conflict once (a file two agents read is one conflict), with the agents that read the file. */
  conflicts: Array<Drift & { agents: AgentName[] }>;
  warnings: string[];
};

/** The repository config whose protect lines a conflict names (the user's config protects too, but is no file of the repository). */
const REPO_CONFIG = join('.hermes', 'config.yaml');

/**
 * The report for sessions started at `cwd` (the root by default): `authority` as loadAuthority
 * chose it, `config` the config in force (its protect rules, located in `.hermes/config.yaml`).
 */
export async function agentsReport(
  root: string,
  authority: Pick<Authority, 'source' | 'files'>,
  config: Pick<HermesConfig, 'rules'>,
  cwd: string = root,
): Promise<AgentsReport> {
  const views = agentViews(root, authority, cwd);
  const warnings: string[] = [];
  const texts = new Map<string, string | undefined>();
  const read = async (rel: string): Promise<string | undefined> => {
    if (!texts.has(rel)) {
      const out = await readContextFile(join(root, rel));
      if (out.kind === 'skipped') warnings.push(`${rel} ${out.reason}; it was not compared.`);
      texts.set(rel, out.kind === 'text' ? out.text : undefined);
    }
    return texts.get(rel);
  };
  const authorityFiles = views[0]?.authority ?? [];
  const ours: Claims = { commands: [], paths: [] };
  for (const f of authorityFiles) {
    const text = await read(f);
    if (text === undefined) continue;
    const c = claimsOf(f, text);
    ours.commands.push(...c.commands);
    ours.paths.push(...c.paths);
  }
  const configText = await read(REPO_CONFIG.split('\\').join('/'));
  const protect = protectLines(config.rules, configText === undefined ? [] : [{ file: '.hermes/config.yaml', text: configText }]);

  const byFile = new Map<string, Drift[]>();
  const agents: AgentDrift[] = [];
  for (const view of views) {
    const conflicts: Drift[] = [];
    for (const f of view.shadowed) {
      if (!byFile.has(f)) {
        const text = await read(f);
        byFile.set(f, text === undefined || authorityFiles.length === 0 ? [] : compareClaims(ours, claimsOf(f, text), protect));
      }
      conflicts.push(...byFile.get(f)!);
    }
    agents.push({ ...view, conflicts });
  }
  const conflicts = [...byFile.values()].flat().map((d) => ({ ...d, agents: agents.filter((a) => a.shadowed.includes(d.file)).map((a) => a.agent) }));
  return { authority: authorityFiles, agents, conflicts, warnings };
}

/** A conflict as two lines of text: the agent's file's line, then the authority's. */
export function conflictLines(d: Drift & { agents?: readonly string[] }): [string, string] {
  const who = d.agents && d.agents.length > 0 ? `  (read by ${d.agents.join(', ')})` : '';
  const where = (s: { file: string; line: number }) => (s.line > 0 ? `${s.file}:${s.line}` : s.file);
  return [`${where(d)}: ${d.text}${who}`, `  authority ${where(d.authority)}: ${d.authority.text || '(says nothing of it)'}`];
}

const DELIVERY_WORDS: Readonly<Record<AgentView['delivery'], string>> = {
  native: 'reads it itself',
  setting: "by hermesd's setting",
  'session-start': 'given at session start',
  none: 'none in force',
};

/** `hermesd context --agents` as text. */
export function formatAgentsReport(r: AgentsReport): string {
  const lines = [`authority  ${r.authority.length > 0 ? r.authority.join(', ') : '(none)'}`];
  for (const a of r.agents) {
    lines.push('', `${a.agent}`);
    lines.push(`  reads      ${a.reads.length > 0 ? a.reads.join(', ') : '(nothing of its own here)'}`);
    lines.push(`  authority  ${DELIVERY_WORDS[a.delivery]}`);
    lines.push(`  shadowed   ${a.shadowed.length > 0 ? a.shadowed.join(', ') : '(none)'}`);
    for (const d of a.conflicts) {
      const [own, theirs] = conflictLines(d);
      lines.push(`  disagrees  ${own}`, `           ${theirs}`);
    }
  }
  for (const w of r.warnings) lines.push('', `warning: ${w}`);
  const n = r.conflicts.length;
  lines.push(
    '',
    n === 0
      ? 'No instruction file disagrees with the authority.'
      : `${n} disagreement${n === 1 ? '' : 's'} with the authority (hermesd check --context exits 1).`,
  );
  return lines.join('\n');
}
