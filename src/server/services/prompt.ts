/**
 * The daemon's context: one ContextBuilder whose caches are dropped on watcher events,
 * composing the memory snapshot (src/memory) and the skill index (src/skills).
 * `buildSessionPrompt()` is what the agent calls once per session; `report()` is what
 * GET /v1/context and `hermesd context` show.
 */
import type { DaemonContext } from '../daemon-context.js';
import type { Memories } from '../../memory/memories.js';
import type { SkillStore } from '../../skills/store.js';
import type { ConfigInForce } from './config-in-force.js';
import type { WatcherService } from './watcher.js';
import type { Authority } from '../../context/authority.js';
import { ContextBuilder, type BuildOptions, type SessionPrompt } from '../../context/builder.js';
import { defaults } from '../../config/schema.js';
import type { ContextReport } from '../../protocol/context-report.js';

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class PromptService {
  readonly builder: ContextBuilder;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly deps: { config: ConfigInForce; memory: Memories; skills: SkillStore; watcher: WatcherService },
  ) {
    this.builder = new ContextBuilder({
      root: ctx.root,
      gitDir: ctx.paths.gitDir,
      home: ctx.home,
      maxFileChars: () => this.maxFileChars(),
      memorySnapshot: () => {
        try {
          return deps.memory.snapshot();
        } catch (err) {
          ctx.log.warn('memory snapshot failed', { error: message(err) });
          return { memory: '', user: '', repo: '' };
        }
      },
      skillIndex: async () => {
        try {
          return deps.skills.indexText();
        } catch (err) {
          ctx.log.warn('skill index failed', { error: message(err) });
          return '';
        }
      },
      workspaceWatched: () => deps.watcher.workspaceWatched(),
      extraWarnings: () => this.configWarnings(),
    });
    ctx.events.on('authority-changed', () => this.reloadAuthority('authority-changed'));
    // The cap on context files is a config key.
    ctx.events.on('config-changed', () => this.reloadAuthority('config-changed'));
    ctx.events.on('workspace-changed', () => this.builder.invalidateWorkspace());
  }

  private reloadAuthority(why: string): void {
    this.builder.invalidateAuthority();
    // Reload now rather than on the next request, so a new session finds it warm.
    this.builder.authority(this.ctx.root).then(
      (a) => this.ctx.log.info('authority reloaded', { why, files: a.files.map((f) => f.label) }),
      (err: unknown) => this.ctx.log.warn('authority reload failed', { error: message(err) }),
    );
  }

  // A broken config must not hide the repository's rules: the default cap applies and a warning says why.
  private maxFileChars(): number {
    try {
      return this.deps.config.get().context.maxFileChars;
    } catch {
      return defaults().context.maxFileChars;
    }
  }

  private configWarnings(): string[] {
    try {
      this.deps.config.get();
      return [];
    } catch (err) {
      return [`config not loaded (${message(err)}); context.maxFileChars is ${defaults().context.maxFileChars} and memory is left out until it is fixed.`];
    }
  }

  /** The frozen prompt of one session: keep it for the whole session, do not rebuild per turn. */
  async buildSessionPrompt(opts: BuildOptions = {}): Promise<SessionPrompt> {
    const cwd = opts.cwd ?? this.ctx.root;
    const [prompt, authority] = await Promise.all([this.builder.build({ ...opts, cwd }), this.builder.authority(cwd)]);
    this.deps.watcher.watchAuthorityDirs(authority.dirs);
    return prompt;
  }

  /** The authority files in force for `cwd`, as they enter the prompt (scanned, capped); the watcher follows their directories. */
  async authority(cwd: string = this.ctx.root): Promise<Authority> {
    const authority = await this.builder.authority(cwd);
    this.deps.watcher.watchAuthorityDirs(authority.dirs);
    return authority;
  }

  async report(opts: BuildOptions = {}): Promise<ContextReport> {
    const p = await this.buildSessionPrompt(opts);
    return { authority: [...p.authority], tiers: { ...p.tiers }, warnings: [...p.warnings], sha256: p.sha256 };
  }
}
