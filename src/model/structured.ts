/**
 * Structured answers from the model client (the port src/placement/classify-by-model.ts classifies through): the request asks
 * for `response_format: json_schema`; an endpoint that refuses it (HTTP 400 naming
 * response_format, json_schema or structured output — older vLLM, llama.cpp without
 * grammar support, some proxies) is asked again without it, the schema then being only in
 * the prompt, and this client stops sending it.
 */
import { ModelError, type ModelClient } from './client.js';

/** One structured request: the endpoint is asked to hold the answer to `schema`. */
export type StructuredRequest = {
  system: string;
  user: string;
  /** The schema's name (response_format.json_schema.name): letters, digits, _ and -. */
  name: string;
  schema: Record<string, unknown>;
  maxTokens: number;
  signal?: AbortSignal;
};

/** `structured`: the endpoint took the schema (json_schema); false when it refused it and the answer is JSON in text. */
export type StructuredAnswer = { text: string; structured: boolean };

export interface StructuredModel {
  complete(req: StructuredRequest): Promise<StructuredAnswer>;
}

function refusesResponseFormat(err: unknown): boolean {
  return err instanceof ModelError && err.code === 'model-bad-request' && /response_format|json_schema|structured|grammar/i.test(err.message);
}

export function structuredModel(client: ModelClient): StructuredModel & { readonly jsonSchemaSupported: boolean } {
  let supported = true;
  const ask = async (req: StructuredRequest, withSchema: boolean): Promise<StructuredAnswer> => {
    const turn = await client.complete({
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.user },
      ],
      signal: req.signal,
      maxTokens: req.maxTokens,
      ...(withSchema ? { responseFormat: { name: req.name, schema: req.schema } } : {}),
    });
    return { text: turn.content, structured: withSchema };
  };
  return {
    get jsonSchemaSupported() {
      return supported;
    },
    async complete(req) {
      if (!supported) return ask(req, false);
      try {
        return await ask(req, true);
      } catch (err) {
        if (!refusesResponseFormat(err)) throw err;
        supported = false;
        return ask(req, false);
      }
    },
  };
}
