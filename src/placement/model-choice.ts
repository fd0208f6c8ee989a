/**
 * Which classifier answers `remember` and the post-task review: the model, or the rules and
 * why (docs/placement.md). `placement.classifier: rules` never asks a model; `auto` asks one
 * only when an endpoint is configured (OPENAI_BASE_URL, OPENAI_API_KEY, model.baseUrl or
 * model.apiKey), so nothing reaches the network the user did not configure. The client is
 * built once per model setting and kept while the setting holds.
 */
import type { HermesConfig } from '../config/schema.js';
import { createModelClient, modelSettings } from '../model/client.js';
import { structuredModel, type StructuredModel } from '../model/structured.js';

export type ModelChoice = { model?: StructuredModel; noModel?: string };

export class PlacementModel {
  private built: { key: string; model: StructuredModel } | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  for(config: HermesConfig): ModelChoice {
    const mode = config.placement.classifier;
    if (mode === 'rules') return { noModel: 'The rule-based classifier answered (placement.classifier: rules).' };
    // One request per answer, not a stream: nothing is shown while it is written.
    const settings = { ...modelSettings(config.model, this.env), stream: false };
    if (mode === 'auto' && !settings.configured) {
      return {
        noModel:
          'No model endpoint is configured (OPENAI_BASE_URL or model.baseUrl), so the rule-based classifier answered (docs/placement.md lists its rules).',
      };
    }
    const key = JSON.stringify(settings);
    if (this.built?.key !== key) this.built = { key, model: structuredModel(createModelClient(settings)) };
    return { model: this.built.model };
  }
}
