/**
 * The one schema of hermesd's configuration (`$HERMES_HOME/config.yaml` and
 * `<repo>/.hermes/config.yaml` share it). Every object is strict: an unknown key is an
 * error, never a silently ignored setting. Regexes are compiled and globs parsed here, so
 * a rule that could not work is refused when the file is read, not when a commit is judged.
 */
import picomatch from 'picomatch';
import { z } from 'zod';

// Parsed once or a few times per process (a config, a hook's question): zod's JIT, which
// compiles each object schema with `new Function` on its first parse, costs more than it
// saves here, on a cold daemon's first verdict (docs/benchmarks.md#daemon).
z.config({ jitless: true });

/** Seed budget for MEMORY.md (chars): enough for a handful of durable facts, small enough to sit in every prompt. */
export const MEMORY_CHAR_LIMIT = 2200;
/** Seed budget for USER.md (chars). */
export const USER_CHAR_LIMIT = 1375;
/** Budget of a repository's own MEMORY.md (chars): the same as the global one, for facts about one repository. */
export const REPO_MEMORY_CHAR_LIMIT = 2200;
/** A classification by the model may take this long before the rule-based classifier answers instead. */
export const PLACEMENT_TIMEOUT_MS = 30_000;
/** Post-task review: a session with fewer tool calls holds too little to learn from (the seed's skill nudge counts 5+ for a skill). */
export const REVIEW_MIN_TOOL_CALLS = 2;
/** Post-task review: characters of the session's messages the model reads (about 3,000 tokens). */
export const REVIEW_MAX_INPUT_CHARS = 12_000;
/** Post-task review: tokens the model may answer with (a handful of short candidates). */
export const REVIEW_MAX_OUTPUT_TOKENS = 800;
/** Post-task review: one review may take this long, model call included. */
export const REVIEW_TIMEOUT_MS = 60_000;
/** Post-task review: how long a review waits for the daemon to be idle before it is skipped (10 min). */
export const REVIEW_DEFER_MS = 600_000;
/** Post-task review: reviews waiting at once; the oldest is dropped past this (the newest session has the freshest evidence). */
export const REVIEW_MAX_QUEUED = 8;
/** A user skill unused (neither viewed nor changed) this many days is proposed for archiving. */
export const SKILL_ARCHIVE_AFTER_DAYS = 90;
/** A context file past this many chars is truncated head 70% / tail 20%. */
export const CONTEXT_MAX_FILE_CHARS = 20_000;
/** How long a git hook waits for the daemon (its silence, while it works on a commit's checks): a commit must never hang. */
export const HOOK_TIMEOUT_MS = 10_000;
/**
 * How long another agent's hook waits for the daemon before applying `agents.onUnavailable`:
 * it runs before every tool call, so a hung daemon must cost little, and a warm one answers
 * in milliseconds.
 */
export const AGENT_HOOK_TIMEOUT_MS = 3_000;
/** Model turns per task before the loop stops: bounds a runaway agent. */
export const MODEL_MAX_TURNS = 20;
/** One model request may take this long (slow local models answer in tens of seconds). */
export const MODEL_TIMEOUT_MS = 120_000;
/**
 * Idle minutes before the daemon exits on its own: the next hook question or command starts a
 * new one (its first verdict: docs/benchmarks.md#daemon), so an idle work tree holds no process for long.
 */
export const DAEMON_IDLE_TIMEOUT_MINUTES = 30;
/** The model when none is configured: small, cheap and good at tool calls. */
export const MODEL_NAME = 'gpt-4o-mini';
/** Fix attempts the pre-commit hook asks the agent for before it gives up. */
export const HOOK_MAX_FIX_ATTEMPTS = 2;

/** Glob options used wherever rule globs are compiled; `dot` so `**` also covers `.env`. */
export const GLOB_OPTIONS = { dot: true, strictBrackets: true } as const;

/** The id and message a bare `- secrets: true` rule gets. */
export const SECRETS_RULE_ID = 'no-secrets';
const SECRETS_RULE_MESSAGE = 'Never commit credentials; use environment variables or a secret manager.';

/**
 * Builds the schemas. Building them is most of zod's own start in a cold process (each schema
 * object made and its first parse), so they are built on first use (`schemas()`): a cold daemon
 * whose config comes from its parse cache builds none before its first verdict.
 */
function build() {
  const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
  const kebabId = (what: string) => z.string().regex(KEBAB, `${what} must be kebab-case (lowercase letters, digits and single dashes), e.g. "no-aws-keys"`);

  /** A repository-relative glob that picomatch can compile. */
  const glob = z.string().superRefine((g, ctx) => {
    if (g.trim() === '') {
      ctx.addIssue({ code: 'custom', message: 'a glob must not be empty' });
      return;
    }
    if (g.startsWith('/') || g.startsWith('../') || g === '..') {
      ctx.addIssue({ code: 'custom', message: `glob "${g}" must be relative to the repository root (no leading "/" or "..")` });
      return;
    }
    try {
      picomatch(g, GLOB_OPTIONS);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid glob "${g}": ${(err as Error).message}` });
    }
  });
  const globs = z.array(glob).min(1, 'give at least one glob');

  /** A JavaScript regular expression source, compiled to prove it works. */
  const regex = z.string().superRefine((source, ctx) => {
    if (source === '') {
      ctx.addIssue({ code: 'custom', message: 'an empty regex matches every line' });
      return;
    }
    try {
      new RegExp(source);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid regular expression ${(err as Error).message.replace(/^Invalid regular expression: /, '')}` });
    }
  });

  const positiveInt = z.number().int().positive();

  const RuleSchema = z.preprocess(
    // `- secrets: true` alone is a whole rule: the kind names itself.
    (raw) =>
      raw && typeof raw === 'object' && !Array.isArray(raw) && (raw as Record<string, unknown>).secrets === true && !('id' in raw)
        ? { id: SECRETS_RULE_ID, message: SECRETS_RULE_MESSAGE, ...raw }
        : raw,
    z
      .strictObject({
        id: kebabId('rule id'),
        message: z.string().min(1, 'say why the rule exists; the message is shown with every violation'),
        /** Paths no tool may write and no commit may change (unless `generator` reproduces them). */
        protect: globs.optional(),
        /** Command that regenerates the protected files from their sources (run with sh -c). */
        generator: z.string().min(1).optional(),
        /** Regex no added line may match. */
        forbid: regex.optional(),
        /** No added line may hold a secret: gitleaks' rule set (token formats, keywords, entropy, allowlists, `gitleaks:allow`). */
        secrets: z.boolean().optional(),
        /** With `secrets`: values (regexes, tested against the secret found) that are known test fixtures, not secrets. */
        allow: z.array(regex).min(1, 'give at least one regex').optional(),
        /** Files `forbid` or `secrets` apply to. */
        paths: globs.optional(),
        /** Files the rule never applies to (`protect`, `forbid` and `secrets`). */
        exclude: globs.optional(),
      })
      .superRefine((rule, ctx) => {
        if (!rule.protect && rule.forbid === undefined && rule.secrets !== true) {
          ctx.addIssue({ code: 'custom', message: 'a rule needs `protect` (globs), `forbid` (regex) or `secrets: true`; this one would check nothing' });
        }
        if (rule.generator !== undefined && !rule.protect) {
          ctx.addIssue({ code: 'custom', path: ['generator'], message: '`generator` only applies with `protect`: say which generated files it reproduces' });
        }
        if (rule.paths && rule.forbid === undefined && rule.secrets !== true) {
          ctx.addIssue({
            code: 'custom',
            path: ['paths'],
            message: '`paths` only applies with `forbid` or `secrets` (use `protect` globs for protected paths)',
          });
        }
        if (rule.allow && rule.secrets !== true) {
          ctx.addIssue({ code: 'custom', path: ['allow'], message: '`allow` only applies with `secrets: true` (values that are test fixtures, not secrets)' });
        }
      }),
  );

  const CheckSchema = z.strictObject({
    id: kebabId('check id'),
    /** Shell command (sh -c) run from the repository root; exit 0 = pass. */
    run: z.string().min(1),
    /** A failure becomes a fix request for the agent. */
    fix: z.boolean().default(false),
    timeoutMs: positiveInt.optional(),
  });

  const policy = z.enum(['refuse', 'allow']).default('refuse');

  const ConfigSchema = z.strictObject({
    rules: z.array(RuleSchema).default([]),
    checks: z.array(CheckSchema).default([]),
    hooks: z
      .strictObject({
        'pre-commit': z
          .strictObject({
            rules: z.boolean().default(true),
            checks: z.array(kebabId('check id')).default([]),
            fix: z.enum(['propose', 'stage', 'off']).default('propose'),
            maxFixAttempts: z.number().int().min(0).default(HOOK_MAX_FIX_ATTEMPTS),
          })
          .prefault({}),
        timeoutMs: positiveInt.default(HOOK_TIMEOUT_MS),
        /**
         * A user's commit when no daemon runs and none could be started within hooks.timeoutMs: let
         * it through unchecked, saying so (default), or stop it. Every other fault (a hung daemon,
         * an answer cut off) stops the commit; a commit from hermesd's sandbox always stops.
         */
        onUnavailable: z.enum(['allow', 'block']).default('allow'),
      })
      .prefault({}),
    model: z
      .strictObject({
        /** OpenAI-compatible endpoint; unset = the openai package's default (api.openai.com). */
        baseUrl: z.url({ message: 'model.baseUrl must be a URL such as http://localhost:11434/v1' }).optional(),
        apiKey: z.string().optional(),
        name: z.string().min(1).default(MODEL_NAME),
        timeoutMs: positiveInt.default(MODEL_TIMEOUT_MS),
        maxTurns: positiveInt.default(MODEL_MAX_TURNS),
        stream: z.boolean().default(true),
      })
      .prefault({}),
    memory: z
      .strictObject({
        memoryCharLimit: positiveInt.default(MEMORY_CHAR_LIMIT),
        userCharLimit: positiveInt.default(USER_CHAR_LIMIT),
        repoCharLimit: positiveInt.default(REPO_MEMORY_CHAR_LIMIT),
      })
      .prefault({}),
    context: z.strictObject({ maxFileChars: positiveInt.default(CONTEXT_MAX_FILE_CHARS) }).prefault({}),
    daemon: z
      .strictObject({
        idleTimeoutMinutes: positiveInt.default(DAEMON_IDLE_TIMEOUT_MINUTES),
        /** No longer used (a daemon that fell asleep handed over to a fresh process): an idle daemon exits after idleTimeoutMinutes. Kept so configs that set it still load. */
        hibernateAfterMinutes: z.number().min(0).optional(),
      })
      .prefault({}),
    skills: z
      .strictObject({
        /** Days without a view or a change before a user skill is proposed for archiving (fractions allowed); 0: never. */
        archiveAfterDays: z.number().min(0).default(SKILL_ARCHIVE_AFTER_DAYS),
      })
      .prefault({}),
    /** `hermesd remember` and POST /v1/placement: who decides the owner of a sentence (docs/placement.md). */
    placement: z
      .strictObject({
        /** auto: the model when an endpoint is configured, else the rules; model: the model (the rules when it fails); rules: never the model. */
        classifier: z.enum(['auto', 'model', 'rules']).default('auto'),
        timeoutMs: positiveInt.default(PLACEMENT_TIMEOUT_MS),
      })
      .prefault({}),
    /** Post-task review: after a delivered task, a background job proposes memory entries and skill patches (docs/placement.md). */
    review: z
      .strictObject({
        enabled: z.boolean().default(true),
        minToolCalls: z.number().int().min(0).default(REVIEW_MIN_TOOL_CALLS),
        maxInputChars: positiveInt.default(REVIEW_MAX_INPUT_CHARS),
        maxOutputTokens: positiveInt.default(REVIEW_MAX_OUTPUT_TOKENS),
        timeoutMs: positiveInt.default(REVIEW_TIMEOUT_MS),
        deferMs: z.number().int().min(0).default(REVIEW_DEFER_MS),
        maxQueued: positiveInt.default(REVIEW_MAX_QUEUED),
      })
      .prefault({}),
    /** The guard: git policy for the agent's terminal, paths it must never read, and the terminal's sandbox. */
    guard: z
      .strictObject({
        gitPolicy: z
          .strictObject({
            noVerify: policy,
            forcePush: policy,
            addIgnored: policy,
            rewritePushed: policy,
            hookConfig: policy,
          })
          .prefault({}),
        secretPaths: z.array(glob).default(['.env', '.env.*', '**/*.pem', '**/*.key', '**/id_rsa*', '**/id_ed25519*', '**/.npmrc', '**/.netrc']),
        /** Where `terminal` commands run: bubblewrap on Linux, sandbox-exec on macOS (docs/guardrails.md). */
        sandbox: z
          .strictObject({
            /** false: commands run unsandboxed (the after-the-fact checks still apply); a loosening. */
            enabled: z.boolean().default(true),
            /** No sandbox on this machine: refuse to run commands, or run them unsandboxed with a warning on every call. */
            ifUnavailable: z.enum(['refuse', 'unsandboxed']).default('refuse'),
            /** Commands may reach the network (pushes still go through the daemon's broker). */
            network: z.boolean().default(false),
            /** Extra absolute paths commands may write (`~/` is the user's home), e.g. a build cache. */
            writable: z.array(z.string().min(1)).default([]),
            /** Extra environment variables passed into the sandbox by name (the daemon's own keys never are). */
            env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')).default([]),
            /** The bubblewrap binary commands run in, `none` for none (HERMESD_BWRAP); any value is a loosening until approved. */
            bwrap: z.string().min(1).optional(),
          })
          .prefault({}),
      })
      .prefault({}),
    /** Other agents' hooks (`hermesd init --agents`, docs/agents.md). */
    agents: z
      .strictObject({
        timeoutMs: positiveInt.default(AGENT_HOOK_TIMEOUT_MS),
        /**
         * A tool call when no daemon runs and none could be started within agents.timeoutMs: refuse
         * it (default) or let it run unchecked (a loosening: `hermesd config approve`). Every other
         * fault (a hung daemon, an answer cut off) refuses whatever this says.
         */
        onUnavailable: z.enum(['allow', 'block']).default('block'),
      })
      .prefault({}),
  });
  return { RuleSchema, CheckSchema, ConfigSchema };
}

type Schemas = ReturnType<typeof build>;
let built: Schemas | undefined;

/** The schemas, built on first use. */
function schemas(): Schemas {
  return (built ??= build());
}

/** The one schema of the configuration (both files). */
export function configSchema(): Schemas['ConfigSchema'] {
  return schemas().ConfigSchema;
}

/** The schema of one rule. */
export function ruleSchema(): Schemas['RuleSchema'] {
  return schemas().RuleSchema;
}

export type HermesConfig = z.infer<Schemas['ConfigSchema']>;

let defaultsValue: HermesConfig | undefined;

/** Every default, as the schema fills them in for empty files: the only place a default lives. */
export function defaults(): HermesConfig {
  return (defaultsValue ??= configSchema().parse({}));
}
export type Rule = z.infer<Schemas['RuleSchema']>;
export type Check = z.infer<Schemas['CheckSchema']>;
