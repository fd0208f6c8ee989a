/**
 * The configuration in force in a daemon: loaded once, reloaded on 'config-changed' (the
 * watcher) and also when either file's stat changes, so a stale config is never served
 * even before the watcher is up. An invalid file is remembered as its ConfigError and
 * thrown to every caller of `get()` until it is fixed: the client sees a 400 config-error
 * (exit 2). What judges (hooks, other agents' tool calls) asks `forJudging()` instead: an
 * invalid file is judged with the last valid config, never as "no rules".
 */
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { loadConfigWithOrigins, preloadYaml, type LoadedConfig, type ParseCache } from '../../config/load.js';
import { fileParseCache, type FileParseCache } from '../../config/parse-cache.js';
import type { HermesConfig } from '../../config/schema.js';
import { projectDir, repoConfigPath, userConfigPath, type RepoPaths } from '../../paths/index.js';
import { fileStamp } from '../../storage/file-stamp.js';
import type { Logger } from '../../storage/log.js';
import { readTextIfAny } from '../../storage/read.js';
import { applyApproval, approveConfig, configWhenBroken, describeLoosenings, type JudgingConfig, type Loosening } from '../../guard/approval.js';

/** What the config in force needs of its daemon: where it is, its log, and its events ('config-changed' in, 'config-loaded' out). */
export type ConfigContext = {
  readonly root: string;
  readonly home: string;
  readonly paths: RepoPaths;
  readonly version: string;
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly events: EventEmitter;
};

export class ConfigInForce {
  private state: { stamp: string; value: LoadedConfig; pending: Loosening[] } | { stamp: string; error: unknown } | undefined;
  /** The last config that loaded, in this process. */
  private lastValid: HermesConfig | undefined;
  private readonly cache: FileParseCache;
  /** The user's and the repository's config files: where they are does not change while the daemon runs. */
  private readonly files: readonly [string, string];

  constructor(private readonly ctx: ConfigContext) {
    this.files = [userConfigPath(ctx.home), repoConfigPath(ctx.root)];
    this.cache = fileParseCache(join(projectDir(ctx.home, ctx.paths.commonDir), 'config-parsed.json'), ctx.version, (err) =>
      ctx.log.warn('config parse cache not written (the next daemon parses the files again)', { error: String(err) }),
    );
    ctx.events.on('config-changed', () => {
      this.state = undefined;
      this.current();
    });
  }

  /**
   * Ready to load: the YAML parser imported unless every config file's text is in the parse
   * cache. A cold daemon's first question awaits this; whoever loads without it gets the parser
   * at once, loaded the slower way (load.ts).
   */
  async ready(): Promise<void> {
    if (!this.cache.covers(this.files.map((file) => ({ file, text: readTextIfAny(file) })))) await this.preload();
  }

  /** Imports the YAML parser for the parses to come (a file edited while the daemon runs); never throws. */
  async preload(): Promise<void> {
    try {
      await preloadYaml();
    } catch (err) {
      this.ctx.log.warn('YAML parser not imported ahead (it loads when a file is parsed)', { error: String(err) });
    }
  }

  /** The effective configuration; throws the file's ConfigError while it is invalid. */
  get(): HermesConfig {
    return this.loaded().config;
  }

  /** The effective config with its origins; throws the file's ConfigError while it is invalid. */
  loaded(): LoadedConfig {
    const s = this.current();
    if ('error' in s) throw s.error;
    return s.value;
  }

  /**
   * The config to judge with: the files' while they load; while they do not, the last config
   * that loaded in this process, else the defaults with the guard settings last approved for
   * this work tree (its rules among them: `$HERMES_HOME/guard/approved/`).
   */
  forJudging(): JudgingConfig {
    const s = this.current();
    if (!('error' in s)) return { config: s.value.config };
    const broken = s.error instanceof Error ? s.error.message : String(s.error);
    if (this.lastValid) return { config: this.lastValid, broken };
    return { config: configWhenBroken(this.ctx.home, this.ctx.root), broken };
  }

  private current(): NonNullable<ConfigInForce['state']> {
    const stamp = this.stamp();
    if (this.state && this.state.stamp === stamp) return this.state;
    try {
      // The files read from the parse cache, and whether their validation was, for the log.
      const cached: string[] = [];
      let validCached = false;
      const cache: ParseCache = {
        get: (file, text) => {
          const raw = this.cache.get(file, text);
          if (raw) cached.push(file);
          return raw;
        },
        set: (file, text, raw) => this.cache.set(file, text, raw),
        getValid: (key) => {
          const config = this.cache.getValid(key);
          validCached = config !== undefined;
          return config;
        },
        setValid: (key, config) => this.cache.setValid(key, config),
      };
      const loaded = loadConfigWithOrigins({ root: this.ctx.root, home: this.ctx.home, env: this.ctx.env, cache });
      // a loosening of the guard waits for `hermesd config approve`.
      const { config, pending } = applyApproval(this.ctx.home, this.ctx.root, loaded.config);
      this.state = { stamp, value: { ...loaded, config }, pending };
      this.lastValid = config;
      this.ctx.log.info('config loaded', {
        files: this.state.value.files.filter((f) => f.exists).map((f) => f.file),
        ...(cached.length ? { fromParseCache: cached } : {}),
        ...(validCached ? { validatedBefore: true } : {}),
        ...(pending.length ? { heldForApproval: describeLoosenings(pending) } : {}),
      });
    } catch (error) {
      this.state = { stamp, error };
      this.ctx.log.warn('config invalid', { error: error instanceof Error ? error.message : String(error) });
    }
    this.cache.flush();
    // Whoever read the files first (a hook's judgement, a status answer, the watcher's event):
    // what follows the config (the runners' settings) follows it now, watcher or not.
    this.ctx.events.emit('config-loaded');
    return this.state;
  }

  /** Cheap change detector: two stat calls. */
  private stamp(): string {
    // Status reads this on every answer.
    return `${fileStamp(this.files[0])}|${fileStamp(this.files[1])}`;
  }

  /** Loosenings of the guard in the files that wait for the user's approval (none while the config is invalid). */
  pending(): Loosening[] {
    const s = this.current();
    return 'error' in s ? [] : s.pending;
  }

  /** The user's confirmation (never reachable from a sandboxed command): the files' guard settings apply. */
  approve(): Loosening[] {
    const loaded = loadConfigWithOrigins({ root: this.ctx.root, home: this.ctx.home, env: this.ctx.env, cache: this.cache });
    this.cache.flush();
    const approved = approveConfig(this.ctx.home, this.ctx.root, loaded.config);
    this.state = undefined;
    this.ctx.log.info('guard config approved', { loosened: describeLoosenings(approved) });
    this.ctx.events.emit('config-changed');
    return approved;
  }

  status(): { ok: boolean; error?: string } {
    return this.seen().status;
  }

  /** The status and the loosenings waiting for approval from one look at the files (GET /v1/status shows both). */
  seen(): { status: { ok: boolean; error?: string }; pending: Loosening[] } {
    const s = this.current();
    return 'error' in s
      ? { status: { ok: false, error: s.error instanceof Error ? s.error.message : String(s.error) }, pending: [] }
      : { status: { ok: true }, pending: s.pending };
  }
}
