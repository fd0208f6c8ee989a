import { z } from 'zod';
import { defineTool } from './types.js';

export const sessionSearch = defineTool({
  name: 'session_search',
  description:
    'Search the record of earlier sessions in this repository (every user message, answer, tool call and ' +
    'result, stored as it happened). With `query`: full-text search, each hit with a window of the ' +
    'surrounding messages. With `session_id` and `around_message_id`: the messages around one message ' +
    '(`window` each side). With only `session_id`: that session\'s messages. Use it for evidence ("what ' +
    'failed last time?"), not for preferences (memory) or procedures (skills).',
  parameters: z.strictObject({
    query: z.string().optional().describe('words to search for'),
    session_id: z.string().optional(),
    around_message_id: z.number().int().optional(),
    window: z.number().int().min(0).max(50).optional().describe('messages to show on each side'),
    limit: z.number().int().min(1).max(50).optional(),
  }),
  execute(args, ctx) {
    return ctx.services.sessionSearch(args, { repo: ctx.root, sessionId: ctx.sessionId });
  },
});
