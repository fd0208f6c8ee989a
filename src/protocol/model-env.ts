/**
 * Model settings that live only in one environment. A daemon keeps the environment of whoever
 * started it — often a git hook from a GUI or another shell — so OPENAI_BASE_URL exported in
 * the user's interactive shell may never reach it, and fix requests then fail against the
 * default endpoint. The daemon reports what its environment holds (the key only as a
 * fingerprint); a client compares with its own and names what differs and the config key
 * that makes it hold everywhere.
 */
import { sha256 } from '../text/hash.js';

/** Environment variables that set the model, and the config key that does the same for every daemon. */
export const MODEL_ENV_KEYS = { OPENAI_BASE_URL: 'model.baseUrl', OPENAI_API_KEY: 'model.apiKey', HERMESD_MODEL: 'model.name' } as const;
export type ModelEnvKey = keyof typeof MODEL_ENV_KEYS;

/** What a process's environment says about the model: values, the API key as a fingerprint only. */
export type ModelEnv = Partial<Record<ModelEnvKey, string>>;

const fingerprint = (s: string) => `sha256:${sha256(s).slice(0, 8)}`;

export function modelEnvOf(env: NodeJS.ProcessEnv): ModelEnv {
  const out: ModelEnv = {};
  for (const k of Object.keys(MODEL_ENV_KEYS) as ModelEnvKey[]) {
    const v = env[k];
    if (v) out[k] = k === 'OPENAI_API_KEY' ? fingerprint(v) : v;
  }
  return out;
}

/**
 * One warning per model setting this environment has and the daemon's does not (or has
 * otherwise). Named `model-env`, with the config key to set.
 */
export function modelEnvWarnings(daemon: ModelEnv | undefined, mine: NodeJS.ProcessEnv = process.env): string[] {
  if (!daemon) return [];
  const here = modelEnvOf(mine);
  const out: string[] = [];
  for (const k of Object.keys(MODEL_ENV_KEYS) as ModelEnvKey[]) {
    if (here[k] === undefined || here[k] === daemon[k]) continue;
    const shown = k === 'OPENAI_API_KEY' ? '' : ` (${here[k]})`;
    out.push(
      `model-env: ${k} is set in this shell${shown} but ${daemon[k] === undefined ? 'not in' : 'differs in'} the daemon's environment (it was started from a git hook, a GUI or another shell), so the daemon does not use it. ` +
        `Set ${MODEL_ENV_KEYS[k]} in $HERMES_HOME/config.yaml (or the repository's .hermes/config.yaml) so every daemon uses it, or restart the daemon from this shell: hermesd restart`,
    );
  }
  return out;
}
