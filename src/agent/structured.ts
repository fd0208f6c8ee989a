/**
 * Structured answers from the model client (src/placement/model.ts's port): the request asks
 * for `response_format: json_schema`; an endpoint that refuses it (HTTP 400 naming
 * response_format, json_schema or structured output — older vLLM, llama.cpp without
 * grammar support, some proxies) is asked again without it, the schema then being only in
 * the prompt, and this client stops sending it.
 */
import type { StructuredAnswer, StructuredModel, StructuredRequest } from '../placement/model.js';
import { ModelError, type ModelClient } from './model.js';

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
