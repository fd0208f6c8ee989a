/**
 * Builds session prompts for one repository and caches what is expensive to gather (the
 * authority files per cwd, the identity, the workspace snapshot) until told it is stale.
 * Knows nothing about the daemon: the caller wires invalidation to its watcher.
 */
import { relative, sep } from 'node:path';
import { loadAuthority, type Authority } from './authority.js';
import { prepareContextText, readContextFile } from './files.js';
import { sha256 } from '../text/hash.js';
import {
  ALL_TOOL_NAMES,
  contextTier,
  DEFAULT_IDENTITY,
  joinTiers,
  stableTier,
  tierReport,
  volatileTier,
  workspaceText,
  type WorkspaceSnapshot,
} from './tiers.js';
import type { TierReport } from '../protocol/context-report.js';
import { readWorkspace } from './workspace.js';
import { soulPath } from '../paths/index.js';
import { defaults } from '../config/schema.js';

/** Without a tree watcher, a cached workspace snapshot is trusted this long. */
export const WORKSPACE_TTL_MS = 2_000;

export type SessionPrompt = Readonly<{
  /** The joined system prompt: stable, context, volatile, separated by blank lines. */
  system: string;
  tiers: Readonly<{ stable: TierReport; context: TierReport; volatile: TierReport }>;
  /** Authority files in force, relative to cwd. */
  authority: readonly string[];
  warnings: readonly string[];
  sha256: string;
}>;

export type BuildOptions = {
  /** Directory the session works in; defaults to the root. */
  cwd?: string;
  /** A system message supplied by the caller (API client, editor); part of the context tier. */
  callerSystem?: string;
  /** Tools offered to the model this session; defaults to the full tool set. */
  toolNames?: readonly string[];
  /** The session's clock; only its date reaches the prompt. */
  now?: Date;
};

/** The memory blocks of the volatile tier; `repo` is the repository's own MEMORY.md. */
export type MemoryBlocks = { memory: string; user: string; repo?: string };

export type BuilderDeps = {
  root: string;
  gitDir?: string;
  home: string;
  maxFileChars?: () => number;
  /** The global MEMORY.md, the repository's MEMORY.md and USER.md prompt blocks, as frozen at session start. */
  memorySnapshot?: () => Promise<MemoryBlocks> | MemoryBlocks;
  /** The skill index of the volatile tier. */
  skillIndex?: () => Promise<string> | string;
  /** True while a watcher reports workspace changes; otherwise the snapshot expires after WORKSPACE_TTL_MS. */
  workspaceWatched?: () => boolean;
  /** Extra warnings to show (for example a config file that failed to load). */
  extraWarnings?: () => string[];
};

type Identity = { text: string; warnings: string[] };

export class ContextBuilder {
  private authorityCache = new Map<string, Promise<Authority>>();
  private identityCache: Promise<Identity> | undefined;
  private workspaceCache: { at: number; value: Promise<WorkspaceSnapshot> } | undefined;
  private authorityGen = 0;
  private workspaceGen = 0;

  constructor(private readonly deps: BuilderDeps) {}

  /** An authority file, SOUL.md or the context cap changed: the next build rereads them. */
  invalidateAuthority(): void {
    this.authorityGen++;
    this.authorityCache.clear();
    this.identityCache = undefined;
  }

  /** HEAD, the index or the tree changed: the next build reruns git status. */
  invalidateWorkspace(): void {
    this.workspaceGen++;
    this.workspaceCache = undefined;
  }

  private maxChars(): number {
    return this.deps.maxFileChars?.() ?? defaults().context.maxFileChars;
  }

  authority(cwd: string): Promise<Authority> {
    const hit = this.authorityCache.get(cwd);
    if (hit) return hit;
    const gen = this.authorityGen;
    const p = loadAuthority({ cwd, root: this.deps.root, maxFileChars: this.maxChars() });
    this.authorityCache.set(cwd, p);
    // An invalidation that raced with this load must not leave a stale result cached.
    p.then(
      () => {
        if (gen !== this.authorityGen) this.authorityCache.delete(cwd);
      },
      () => this.authorityCache.delete(cwd),
    );
    return p;
  }

  identity(): Promise<Identity> {
    if (!this.identityCache) {
      const gen = this.authorityGen;
      const p = loadIdentity(this.deps.home, this.maxChars());
      this.identityCache = p;
      p.then(
        () => {
          if (gen !== this.authorityGen && this.identityCache === p) this.identityCache = undefined;
        },
        () => {
          if (this.identityCache === p) this.identityCache = undefined;
        },
      );
    }
    return this.identityCache;
  }

  workspace(): Promise<WorkspaceSnapshot> {
    const watched = this.deps.workspaceWatched?.() ?? false;
    const c = this.workspaceCache;
    if (c && (watched || Date.now() - c.at < WORKSPACE_TTL_MS)) return c.value;
    const gen = this.workspaceGen;
    const value = readWorkspace(this.deps.root, this.deps.gitDir);
    const entry = { at: Date.now(), value };
    this.workspaceCache = entry;
    value.then(
      () => {
        if (gen !== this.workspaceGen && this.workspaceCache === entry) this.workspaceCache = undefined;
      },
      () => {
        if (this.workspaceCache === entry) this.workspaceCache = undefined;
      },
    );
    return value;
  }

  /** Joins the three tiers once; the result is frozen and meant to be kept for the whole session. */
  async build(opts: BuildOptions = {}): Promise<SessionPrompt> {
    const cwd = opts.cwd ?? this.deps.root;
    const [identity, authority, ws, memory, skillIndex] = await Promise.all([
      this.identity(),
      this.authority(cwd),
      this.workspace(),
      Promise.resolve(this.deps.memorySnapshot?.() ?? { memory: '', user: '', repo: '' }),
      Promise.resolve(this.deps.skillIndex?.() ?? ''),
    ]);
    const cwdLabel = relative(this.deps.root, cwd).split(sep).join('/') || '.';
    const stable = stableTier({ identity: identity.text, toolNames: opts.toolNames ?? ALL_TOOL_NAMES });
    const context = contextTier({ workspace: workspaceText(ws, this.deps.root, cwdLabel), callerSystem: opts.callerSystem, authority: authority.text });
    const volatile = volatileTier({ skillIndex, memory: memory.memory, repoMemory: memory.repo, user: memory.user, date: opts.now ?? new Date() });
    const system = joinTiers({ stable, context, volatile });
    const prompt: SessionPrompt = {
      system,
      tiers: Object.freeze({
        stable: Object.freeze(tierReport(stable)),
        context: Object.freeze(tierReport(context)),
        volatile: Object.freeze(tierReport(volatile)),
      }),
      authority: Object.freeze(authority.files.map((f) => f.label)),
      warnings: Object.freeze([...identity.warnings, ...authority.warnings, ...(this.deps.extraWarnings?.() ?? [])]),
      sha256: sha256(system),
    };
    return Object.freeze(prompt);
  }
}

/**
 * SOUL.md is the user's identity for the agent, the same in every repository; a default stands
 * in when it is absent. The user writes it, so a threat pattern in its visible text is named in a
 * warning and the file loads; only text hidden from its author blocks it.
 */
async function loadIdentity(home: string, maxChars: number): Promise<Identity> {
  const label = '$HERMES_HOME/SOUL.md';
  const out = await readContextFile(soulPath(home));
  if (out.kind === 'missing') return { text: DEFAULT_IDENTITY, warnings: [] };
  if (out.kind === 'skipped') return { text: DEFAULT_IDENTITY, warnings: [`${label} ${out.reason}; the default identity was used.`] };
  const f = prepareContextText(out.text, label, soulPath(home), maxChars, 'user');
  if (f.blocked.length > 0) {
    return {
      text: `${f.text}\n\n${DEFAULT_IDENTITY}`,
      warnings: [`${label} was blocked: ${f.blocked.map((h) => `${h.id} (${h.excerpt})`).join('; ')}; the default identity was used.`],
    };
  }
  const warnings = f.cautions.map(
    (h) =>
      `${label} matches threat pattern ${h.id} (${h.excerpt}); it was loaded because you wrote it (files under $HERMES_HOME are yours). ` +
      'The same text in a repository file would be blocked; if you did not write it, remove it.',
  );
  if (f.truncated) warnings.push(`${label} is over the ${maxChars}-character cap; it was truncated (head 70%, tail 20%).`);
  return { text: f.text.trim() ? f.text : DEFAULT_IDENTITY, warnings };
}
