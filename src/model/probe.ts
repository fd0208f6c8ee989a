/**
 * Is the model endpoint usable, as a given set of settings sees it: GET <baseUrl>/models,
 * bounded, and only when the settings name an endpoint (`configured`): none configured, nothing
 * is contacted. `doctor` asks the running daemon (whose environment may differ from the
 * shell's, when a git hook started it) and falls back to its own settings when no daemon runs.
 */
import type { ModelSettings } from './client.js';

/** Bound on the probe: doctor must answer quickly even when the endpoint hangs. */
export const MODEL_PROBE_TIMEOUT_MS = 3_000;

export type ModelProbe = { name: 'model'; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string };

export async function probeModel(settings: ModelSettings, timeoutMs = MODEL_PROBE_TIMEOUT_MS): Promise<ModelProbe> {
  if (!settings.configured)
    return {
      name: 'model',
      status: 'ok',
      detail:
        'no endpoint configured, none contacted: everything but `hermesd run` and fix requests works without one (remember and the review classify by rules); to use one, set OPENAI_BASE_URL and OPENAI_API_KEY, or model.baseUrl and model.apiKey in config.yaml',
    };
  const where = `${settings.baseUrl} (model ${settings.name})`;
  try {
    const res = await fetch(`${settings.baseUrl}/models`, { headers: { authorization: `Bearer ${settings.apiKey}` }, signal: AbortSignal.timeout(timeoutMs) });
    if (res.status === 401 || res.status === 403)
      return {
        name: 'model',
        status: 'fail',
        detail: `${where}: HTTP ${res.status}, the API key was refused`,
        fix: 'Set OPENAI_API_KEY (or model.apiKey in config.yaml).',
      };
    if (!res.ok)
      return {
        name: 'model',
        status: 'warn',
        detail: `${where}: GET /models answered HTTP ${res.status}`,
        fix: 'Check OPENAI_BASE_URL (or model.baseUrl); it should end in /v1 for most servers.',
      };
    const body = (await res.json().catch(() => ({}))) as { data?: Array<{ id?: string }> };
    const ids = (body.data ?? []).map((m) => m.id);
    if (ids.length > 0 && !ids.includes(settings.name))
      return {
        name: 'model',
        status: 'warn',
        detail: `${where}: reachable, but it does not list ${settings.name}`,
        fix: `Set HERMESD_MODEL (or model.name) to one of: ${ids.slice(0, 5).join(', ')}`,
      };
    return { name: 'model', status: 'ok', detail: `${where}: reachable` };
  } catch (err) {
    const why =
      (err as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
    return {
      name: 'model',
      status: 'warn',
      detail: `${where}: unreachable (${why})`,
      fix: 'Set OPENAI_BASE_URL (and OPENAI_API_KEY, HERMESD_MODEL) or model.* in config.yaml to your endpoint; everything but `hermesd run` and fix requests works without one.',
    };
  }
}
