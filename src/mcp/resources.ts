/**
 * The MCP resources: what hermesd's next session in this repository starts from, by URI.
 *
 *   hermesd://authority                  the authority files in force, as the prompt carries them
 *   hermesd://authority/{+path}          one of them (path from the work tree root)
 *   hermesd://agents                     per agent: what it reads, how the authority reaches it, where they disagree (JSON)
 *   hermesd://memory                     the memory snapshot (MEMORY.md, the repository's MEMORY.md and USER.md blocks)
 *   hermesd://skills                     the skill index
 *   hermesd://skills/{name}/{+path}      a skill's SKILL.md or one of its supporting files
 *
 * Every read goes through the daemon's API. ResourceChanges turns the daemon's change events
 * into `notifications/resources/updated` (for subscribed URIs whose content really changed)
 * and `notifications/resources/list_changed` (when a listed family gained or lost a URI).
 */
import { createHash } from 'node:crypto';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { RemoteError } from '../errors/index.js';
import type { SkillFileView, SkillSummary } from '../skills/store.js';
import type { AgentsReport } from '../other-agents/agent-drift.js';
import type { FollowedEvent, DaemonLink } from './link.js';

export type Family = 'authority' | 'memory' | 'skills';

export type Contents = ReadResourceResult['contents'];

export type ResourceKind = {
  name: string;
  title: string;
  description: string;
  family: Family;
  mimeType?: string;
  /** A fixed URI, or a URI template whose `list` enumerates the URIs that exist now. */
  uri?: string;
  template?: string;
  list?: (ctx: ResourceContext) => Promise<Resource[]>;
  read(ctx: ResourceContext, uri: string, vars: Record<string, string>): Promise<Contents>;
};

export type ResourceContext = { link: DaemonLink; cwd: string | undefined };

/** A resource the URI names but that does not exist (now): the read fails with this message. */
export class ResourceMissing extends Error {}

/** The digest of a resource that does not exist. */
const GONE = 'gone';

type AuthorityAnswer = {
  source: string | null;
  files: Array<{ path: string; label: string; text: string; sha256: string; truncated: boolean; blocked: string[] }>;
  text: string;
  warnings: string[];
};

const MARKDOWN = 'text/markdown';

/** Each path segment encoded, so a file name with spaces or `%` survives the URI. */
function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function decodePath(path: string): string {
  return path.split('/').map(decodeURIComponent).join('/');
}

function mimeOf(path: string): string {
  if (/\.(md|mdc|markdown)$/i.test(path)) return MARKDOWN;
  if (/\.json$/i.test(path)) return 'application/json';
  if (/\.ya?ml$/i.test(path)) return 'application/yaml';
  return 'text/plain';
}

function authority(ctx: ResourceContext): Promise<AuthorityAnswer> {
  return ctx.link.call<AuthorityAnswer>('GET', `/v1/context/authority${ctx.cwd ? `?cwd=${encodeURIComponent(ctx.cwd)}` : ''}`);
}

async function skills(ctx: ResourceContext): Promise<Array<SkillSummary & { files: string[] }>> {
  return (await ctx.link.call<{ skills: Array<SkillSummary & { files: string[] }> }>('GET', '/v1/skills?files=1')).skills;
}

export const RESOURCE_KINDS: readonly ResourceKind[] = [
  {
    name: 'authority',
    title: 'Authority files in force',
    description:
      "The repository's rules as hermesd's prompt carries them: the first of HERMES.md, the AGENTS.md chain, CLAUDE.md or Cursor rules that exists (scanned; capped).",
    family: 'authority',
    mimeType: MARKDOWN,
    uri: 'hermesd://authority',
    async read(ctx, uri) {
      const a = await authority(ctx);
      const text =
        a.text || 'No authority file is in force here (none of .hermes.md, HERMES.md, AGENTS.md, CLAUDE.md, .cursorrules or .cursor/rules/*.mdc exists).';
      return [{ uri, mimeType: MARKDOWN, text }];
    },
  },
  {
    name: 'authority-file',
    title: 'An authority file in force',
    description: 'One authority file in force (path from the work tree root), as the prompt carries it.',
    family: 'authority',
    mimeType: MARKDOWN,
    template: 'hermesd://authority/{+path}',
    async list(ctx) {
      const a = await authority(ctx);
      return a.files.map((f) => ({ uri: `hermesd://authority/${encodePath(f.path)}`, name: f.path, title: `Authority: ${f.path}`, mimeType: mimeOf(f.path) }));
    },
    async read(ctx, uri, vars) {
      const path = decodePath(vars.path ?? '');
      const file = (await authority(ctx)).files.find((f) => f.path === path);
      if (!file) throw new ResourceMissing(`${path} is not an authority file in force here; read hermesd://authority or list the resources.`);
      return [{ uri, mimeType: mimeOf(path), text: file.text }];
    },
  },
  {
    name: 'agents',
    title: 'The authority in every agent',
    description:
      'Per agent (Claude Code, Codex, Cursor, Gemini CLI): the instruction files it reads on its own, how the authority reaches it, the files it reads besides the authority, ' +
      'and each line where one disagrees with the authority on a build, test, lint, format or typecheck command or a protected path; as `hermesd context --agents --json` prints it.',
    family: 'authority',
    mimeType: 'application/json',
    uri: 'hermesd://agents',
    async read(ctx, uri) {
      const r = await ctx.link.call<AgentsReport>('GET', `/v1/context/agents${ctx.cwd ? `?cwd=${encodeURIComponent(ctx.cwd)}` : ''}`);
      return [{ uri, mimeType: 'application/json', text: JSON.stringify(r, null, 2) }];
    },
  },
  {
    name: 'memory',
    title: 'Memory snapshot',
    description:
      "What the next session's prompt carries from MEMORY.md (agent notes for every repository), this repository's own MEMORY.md (its environment facts) " +
      "and USER.md (the user's preferences), each labelled, with usage against the budgets. Write with the memory tool (scope: repo for this repository).",
    family: 'memory',
    mimeType: MARKDOWN,
    uri: 'hermesd://memory',
    async read(ctx, uri) {
      const s = await ctx.link.call<{ memory: string; user: string; repo?: string }>('GET', '/v1/memory/snapshot');
      const text = [s.memory, s.repo ?? '', s.user]
        .map((b) => b.trim())
        .filter(Boolean)
        .join('\n\n');
      return [{ uri, mimeType: MARKDOWN, text: text || "Every memory store (MEMORY.md, this repository's MEMORY.md, USER.md) is empty." }];
    },
  },
  {
    name: 'skills',
    title: 'Skill index',
    description:
      'The skill index as the prompt carries it: every skill with its description. Load one with skill_view or read hermesd://skills/<name>/SKILL.md.',
    family: 'skills',
    mimeType: MARKDOWN,
    uri: 'hermesd://skills',
    async read(ctx, uri) {
      const index = await ctx.link.call<{ text: string }>('GET', '/v1/skills-index');
      return [{ uri, mimeType: MARKDOWN, text: index.text || 'No skills yet. Create one with skill_manage (action: create).' }];
    },
  },
  {
    name: 'skill-file',
    title: 'A skill file',
    description:
      "A skill's SKILL.md or one of its supporting files (references/, templates/, scripts/, assets/), as stored (secret-shaped values redacted, as skill_view does).",
    family: 'skills',
    template: 'hermesd://skills/{name}/{+path}',
    async list(ctx) {
      const out: Resource[] = [];
      for (const s of await skills(ctx)) {
        for (const f of s.files) {
          out.push({
            uri: `hermesd://skills/${encodeURIComponent(s.name)}/${encodePath(f)}`,
            name: `${s.name}/${f}`,
            title: `Skill ${s.name}: ${f}`,
            mimeType: mimeOf(f),
            ...(f === 'SKILL.md' ? { description: s.description } : {}),
          });
        }
      }
      return out;
    },
    async read(ctx, uri, vars) {
      const name = decodeURIComponent(vars.name ?? '');
      const path = decodePath(vars.path ?? '');
      const f = await ctx.link.call<SkillFileView>('GET', `/v1/skills/${encodeURIComponent(name)}/file?path=${encodeURIComponent(path)}&encoding=base64`);
      if (f.binary) return [{ uri, mimeType: 'application/octet-stream', blob: f.base64 ?? '' }];
      // As skill_view shows it: the agent path redacts secret-shaped values in every tool result.
      const { redactSecrets } = await import('../security/redact.js');
      return [{ uri, mimeType: mimeOf(path), text: redactSecrets(f.content ?? '').text }];
    },
  },
];

const compiled = RESOURCE_KINDS.map((kind) => ({ kind, template: kind.template ? new UriTemplate(kind.template) : undefined }));

/** The kind a URI names and its template variables, or undefined for a URI this server does not serve. */
export function kindOf(uri: string): { kind: ResourceKind; vars: Record<string, string> } | undefined {
  for (const { kind } of compiled) {
    if (kind.uri === uri) return { kind, vars: {} };
  }
  for (const { kind, template } of compiled) {
    if (!template) continue;
    let vars: ReturnType<UriTemplate['match']>;
    try {
      vars = template.match(uri);
    } catch {
      continue;
    }
    if (vars) return { kind, vars: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v])) };
  }
  return undefined;
}

/** What each followed event may have changed ('config-changed': the context cap and the memory budgets). */
const FAMILIES_OF: Record<FollowedEvent, readonly Family[]> = {
  'authority-changed': ['authority'],
  'config-changed': ['authority', 'memory'],
  'skills-changed': ['skills'],
  'memory-changed': ['memory'],
};
export const ALL_FAMILIES: readonly Family[] = ['authority', 'memory', 'skills'];

export function familiesOf(event: FollowedEvent): readonly Family[] {
  return FAMILIES_OF[event];
}

export type Notify = { updated(uri: string): Promise<void> | void; listChanged(): void; log(message: string): void };

/**
 * Subscriptions and the last-seen state of each: a change event re-reads only what it may
 * have changed, and a notification goes out only when the content (or the list) differs.
 */
export class ResourceChanges {
  private readonly subscribed = new Map<string, string>();
  private readonly listed = new Map<Family, string>();
  private readonly pending = new Set<Family>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly ctx: ResourceContext,
    private readonly notify: Notify,
  ) {}

  async subscribe(uri: string): Promise<void> {
    this.subscribed.set(uri, await this.digest(uri).catch(() => GONE));
  }

  unsubscribe(uri: string): void {
    this.subscribed.delete(uri);
  }

  /** The URIs of a family as the client was last told them (resources/list). */
  recordList(family: Family, uris: readonly string[]): void {
    this.listed.set(family, [...uris].sort().join('\n'));
  }

  /** Re-checks the families; resolves when the notifications they call for are sent. */
  changed(families: readonly Family[]): Promise<void> {
    for (const f of families) this.pending.add(f);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) {
      const families = [...this.pending];
      this.pending.clear();
      try {
        await this.check(families);
      } catch (err) {
        this.notify.log(`could not re-read resources after a change: ${(err as Error).message}`);
      }
    }
  }

  private async check(families: Family[]): Promise<void> {
    let listChanged = false;
    for (const family of families) {
      const known = this.listed.get(family);
      if (known === undefined) continue;
      const now = (await listFamily(this.ctx, family)).sort().join('\n');
      if (now !== known) {
        this.listed.set(family, now);
        listChanged = true;
      }
    }
    if (listChanged) this.notify.listChanged();
    for (const [uri, before] of [...this.subscribed]) {
      const k = kindOf(uri);
      if (!k || !families.includes(k.kind.family)) continue;
      let after: string;
      try {
        after = await this.digest(uri);
      } catch (err) {
        // Not readable just now (the daemon is stopping): no news is not a change.
        this.notify.log(`could not re-read ${uri}: ${(err as Error).message}`);
        continue;
      }
      if (!this.subscribed.has(uri) || after === before) continue;
      this.subscribed.set(uri, after);
      await this.notify.updated(uri);
    }
  }

  /**
   * A digest of what reading `uri` gives now — its contents, or the daemon's answer why it
   * cannot be read (gone, refused as dangerous); throws when the daemon could not be asked.
   */
  private async digest(uri: string): Promise<string> {
    const k = kindOf(uri);
    if (!k) return GONE;
    let answer: unknown;
    try {
      answer = await k.kind.read(this.ctx, uri, k.vars);
    } catch (err) {
      if (err instanceof ResourceMissing) answer = GONE;
      else if (err instanceof RemoteError) answer = { code: err.code, message: err.message };
      else throw err;
    }
    return createHash('sha256').update(JSON.stringify(answer)).digest('hex');
  }
}

/** Every URI of a family: its fixed ones and what its templates list now. */
export async function listFamily(ctx: ResourceContext, family: Family): Promise<string[]> {
  const uris: string[] = [];
  for (const kind of RESOURCE_KINDS) {
    if (kind.family !== family) continue;
    if (kind.uri) uris.push(kind.uri);
    if (kind.list) uris.push(...(await kind.list(ctx)).map((r) => r.uri));
  }
  return uris;
}
